"""A Realtime client's language, through a real server: the session core asks the recogniser for the call's
language on every utterance (detect it, or use the one given), takes what was detected, and a ``session.update``
that gives the language mid-call, or lets it be detected again, goes through the core too. A plain WebSocket
client over loopback; stand-in models that record what they were asked."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from agent.front_door.listener import running_server
from agent.ports import ChatMessage, LanguageHint, ToolCall, ToolSpec, Transcript
from agent.runtime.components import Components
from testing.sockets import FrameClock, next_json
from tests.integration.conftest import local_settings
from tests.integration.standins import EchoLanguageModel, LoudnessDetector, ScriptedSpeechToText, ToneSpeech, utterance

REALTIME_RATE = 24000
DETECTED = "fr"


class Recogniser(ScriptedSpeechToText):
    """Transcribes in the language it is asked for; asked to detect with nothing known, it hears French (sure of
    it). Keeps every hint."""

    def __init__(self) -> None:
        super().__init__("Quelle heure est-il ?")
        self.hints: list[LanguageHint | None] = []

    async def transcribe(self, pcm16k: bytes, job: object = None, hint: object = None) -> Transcript:
        assert hint is None or isinstance(hint, LanguageHint)
        self.hints.append(hint)
        said = await super().transcribe(pcm16k, job, hint)
        if hint is None or not hint.detect:
            return Transcript(said.text, hint.language if hint is not None and hint.language else "en")
        return Transcript(said.text, hint.language or DETECTED, 0.99)


class Answerer(EchoLanguageModel):
    """Echoes, and keeps the language each reply was asked in."""

    def __init__(self) -> None:
        super().__init__()
        self.languages: list[str] = []

    async def stream_reply(
        self,
        history: Sequence[ChatMessage],
        *,
        language: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: str = "auto",
    ) -> AsyncIterator[str | ToolCall]:
        self.languages.append(language)
        async for part in super().stream_reply(history, language=language, tools=tools, tool_choice=tool_choice):
            yield part


async def _event(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        event = await next_json(ws)
        assert event["type"] != "error", event
        if event["type"] == kind:
            return event


async def _turn(ws: ClientConnection) -> None:
    """One utterance as appended audio, in real time (200 ms a message), then the response to it, done."""
    pcm, step = utterance(REALTIME_RATE), REALTIME_RATE * 2 // 5
    async for n in FrameClock(0.2):
        if n * step >= len(pcm):
            break
        chunk = base64.b64encode(pcm[n * step : (n + 1) * step]).decode()
        await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
    await _event(ws, "response.done")


async def _language(ws: ClientConnection, language: str | None) -> None:
    transcription = {"model": "whisper-1", "language": language}
    session = {"type": "realtime", "audio": {"input": {"transcription": transcription}}}
    await ws.send(json.dumps({"type": "session.update", "session": session}))
    await _event(ws, "session.updated")


async def test_the_language_is_detected_then_given_then_detected_again_from_where_it_was() -> None:
    stt, llm = Recogniser(), Answerer()
    components = Components(stt=stt, llm=llm, tts=ToneSpeech(0.1), new_detector=LoudnessDetector)
    settings = local_settings(asr={"language": "auto"})
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        url = server.realtime_base_url.replace("http://", "ws://") + "/realtime?model=voice-agent"
        async with connect(url, additional_headers={"Authorization": "Bearer any-key"}) as ws:
            await _event(ws, "session.created")
            await _turn(ws)  # nothing given: the recogniser detects French, and the reply is asked in it
            assert stt.hints[-1] == LanguageHint(None, detect=True)
            assert llm.languages[-1] == DETECTED
            await _turn(ws)  # the call's language is kept, still detected
            assert stt.hints[-1] == LanguageHint(DETECTED, detect=True)
            await _language(ws, "de")  # the client gives German
            await _turn(ws)
            assert stt.hints[-1] == LanguageHint("de", detect=False)
            assert llm.languages[-1] == "de"
            await _language(ws, None)  # detect again, starting from German
            await _turn(ws)
            assert stt.hints[-1] == LanguageHint("de", detect=True)
            assert llm.languages[-1] == "de"
    assert all(hint is not None for hint in stt.hints)  # every utterance carried the call's hint
