"""A German and a Korean caller, end to end over /ws with real models: Whisper base hears them in their language,
the reply is asked for in it, and the cloned voice's request to the SageMaker emulator (which refuses language
names the endpoint does not take) carries the language's name; the caller hears the reply."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from openai import AsyncOpenAI

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.piper_tts import LOCAL_VOICE
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.audio.pcm import float_to_pcm16
from agent.config import Settings
from agent.front_door.listener import running_server
from agent.ports import SpeechToText, Voice
from agent.runtime.call.fidelity import FidelitySampler
from agent.runtime.call.phrases import PhraseBook
from agent.runtime.call.voicing import Fallback
from agent.runtime.components import Components
from agent.wiring import build_speaker_scorer, build_stt
from clients.protocol_client import converse
from testing.echo_audio import espeak
from testing.emulators.sagemaker import SageMakerEmulator
from testing.speech import silence
from tests.integration.conftest import local_settings
from tests.integration.sagemaker_fixtures import aws_env, emulator, store, voice  # noqa: F401
from tests.integration.test_sagemaker_end_to_end import scrape

pytestmark = pytest.mark.models

GERMAN = "Ich möchte gern wissen, wie spät es ist und ob der Zug pünktlich ist."
"""A German caller (espeak-ng reads short German phrases so that Whisper base takes them for English; a whole
sentence is German at p 0.99)."""


def espeak_pcm16(text: str, speaker: str, wpm: int = 150) -> bytes:
    """``text`` said by espeak-ng's voice ``speaker``, as 16 kHz PCM16LE (the caller's microphone)."""
    return float_to_pcm16(espeak(text, speaker, wpm, 16000))


@pytest.fixture(scope="module")
def base_stt() -> Iterator[SpeechToText]:
    """Whisper base (multilingual), installed by ``make`` from the hash-locked wheels."""
    stt = build_stt(local_settings(asr={"model": "base", "language": "auto"}), None)
    yield stt
    close = getattr(stt, "close", None)
    if close is not None:
        close()


def server_settings(emu: SageMakerEmulator) -> Settings:
    return local_settings(
        asr={"model": "base", "language": "auto"}, tts={"backend": "sagemaker", "endpoint_url": emu.url}
    )


def multilingual(
    components: Components, stt: SpeechToText, emu: SageMakerEmulator, voices: FileVoiceStore
) -> tuple[Components, SageMakerTTS]:
    tts = SageMakerTTS(server_settings(emu).tts, voices)
    return dataclasses.replace(
        components,
        stt=stt,
        tts=tts,
        fallback=Fallback(components.tts, LOCAL_VOICE),
        voices=voices,
        breakers=(tts.breaker,),
        phrases=PhraseBook(voices),
    ), tts


@pytest.mark.parametrize(
    ("language", "espeak_voice", "said", "name", "word"),
    [
        ("auto", "de", GERMAN, "German", "wissen"),
        ("ko", "ko", "커피 한 잔 주세요.", "Korean", "커피"),  # "A cup of coffee, please."
    ],
    ids=["german-detected", "korean-given"],
)
async def test_a_caller_is_heard_and_answered_in_their_language(
    components: Components,
    base_stt: SpeechToText,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    voice: Voice,  # noqa: F811  (alice, enrolled from an English recording: cloned across languages)
    language: str,
    espeak_voice: str,
    said: str,
    name: str,
    word: str,
) -> None:
    built, tts = multilingual(components, base_stt, emulator, store)
    settings = server_settings(emulator)  # the fixed phrases are prepared too: in the caller's language
    pcm = silence(300) + espeak_pcm16(said, espeak_voice) + silence(300)
    before = len(emulator.requests)  # enrolling the voice asked the emulator for speech too
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            conversation = await converse(
                server.ws_url, pcm, 16000, voice="alice", language=language, speed=2.0, timeout_s=60
            )
    finally:
        await tts.aclose()
    assert not conversation.timed_out, conversation
    turns = [t for t in conversation.turns if t.transcript]
    assert turns, conversation
    turn = turns[0]
    expected = "de" if language == "auto" else language
    assert turn.language == expected, turn
    assert word in (turn.transcript or "").lower(), turn.transcript
    spoken = [r.body for r in emulator.requests[before:] if isinstance(r.body, dict) and r.body.get("input")]
    assert spoken, "no speech was asked of the endpoint"
    assert {b["language"] for b in spoken} == {name}, "\n".join(f"{b['language']}: {b['input']}" for b in spoken)
    assert all(r.status == 200 for r in emulator.requests[before:]), [r.status for r in emulator.requests[before:]]
    assert len(turn.audio) > 0 and not turn.errors, turn


async def test_a_realtime_client_sets_the_transcription_language(
    components: Components, base_stt: SpeechToText
) -> None:
    """The official ``openai`` client sets ``audio.input.transcription.language`` to German with turn detection
    off, appends a German caller's audio and commits it: the transcript is German and says so."""
    server_components = dataclasses.replace(components, stt=base_stt)
    settings = local_settings(asr={"model": "base", "language": "auto"})
    german = float_to_pcm16(espeak(GERMAN, "de", 150, 24000))
    async with running_server(settings, lambda: server_components) as server:
        await server.wait_ready()
        client = AsyncOpenAI(api_key="any-key", base_url=server.realtime_base_url)
        async with client.realtime.connect(model="voice-agent") as conn:
            transcription = {"model": "whisper-1", "language": "de"}
            audio_input = {"transcription": transcription, "turn_detection": None}
            session: Any = {"type": "realtime", "audio": {"input": audio_input}}  # as a client sends it
            await conn.session.update(session=session)
            updated = await _next(conn, "session.updated")
            echoed = updated["session"]["audio"]["input"]["transcription"]
            assert (echoed["model"], echoed["language"]) == ("whisper-1", "de"), echoed
            pcm = silence(200, 24000) + german  # 5 s: within the input rate's burst, sent at once in 100 ms pieces
            for start in range(0, len(pcm), 4800):
                await conn.input_audio_buffer.append(audio=base64.b64encode(pcm[start : start + 4800]).decode())
            await conn.input_audio_buffer.commit()
            done = await _next(conn, "conversation.item.input_audio_transcription.completed")
    assert "wissen" in done["transcript"].lower(), done
    assert done["languages"] == [{"code": "de"}], done


async def _next(conn: Any, kind: str) -> dict[str, Any]:
    """The next server event of type ``kind`` (an ``error`` first fails; the connection's end fails too)."""
    async for event in conn:
        data: dict[str, Any] = event.model_dump(exclude_none=False)
        assert data["type"] != "error", data
        if data["type"] == kind:
            return data
    raise AssertionError(f"the session ended before {kind}")


async def test_a_german_reply_in_the_cloned_voice_is_scored_on_metrics(
    components: Components,
    base_stt: SpeechToText,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    voice: Voice,  # noqa: F811
) -> None:
    """The speech path offers a spoken reply sentence of the cloned voice to the fidelity sampler (the real
    speaker encoder), and ``/metrics`` shows its similarity under the voice and the call's language."""
    built, tts = multilingual(components, base_stt, emulator, store)
    settings = server_settings(emulator)
    sampler = FidelitySampler(build_speaker_scorer(settings), store, every_s=600)
    built = dataclasses.replace(built, fidelity=sampler)
    pcm = silence(300) + espeak_pcm16(GERMAN, "de") + silence(300)
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            conversation = await converse(server.ws_url, pcm, 16000, voice="alice", language="de", timeout_s=60)
            assert not conversation.timed_out, conversation
            await sampler.wait_idle()
            samples = await scrape(server)
    finally:
        await tts.aclose()
        await sampler.aclose()
    scored = [(labels, value) for name, labels, value in samples if name == "voice_agent_voice_similarity"]
    assert len(scored) == 1, scored
    labels, value = scored[0]
    assert labels == {"voice": "default/alice", "language": "de"} and 0.0 < value <= 1.0, scored
