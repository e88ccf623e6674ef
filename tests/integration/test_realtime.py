"""The OpenAI Realtime-compatible endpoint, driven by the official ``openai`` package's own realtime client.

Real sockets, real tiny.en, an enrolled voice spoken by the SageMaker adapter against the emulator, and the
language model behind the OpenAI-compatible emulator (so its requests show what the model was told).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from openai import AsyncOpenAI
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from agent.adapters.file_voice_store import FileVoiceStore
from agent.front_door.listener import RunningServer
from agent.runtime.components import Components
from testing.emulators.openai import OpenAIEmulator
from testing.emulators.sagemaker import SageMakerEmulator
from testing.sockets import FrameClock
from testing.speech import silence, speech_pcm16
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.sagemaker_fixtures import aws_env, emulator, store, voice  # noqa: F401
from tests.integration.scripted import scripted_server
from tests.integration.test_barge_in import STORY
from tests.integration.test_sagemaker_end_to_end import cloned, tts_settings

pytestmark = pytest.mark.models

RATE = 24000
CHUNK_MS = 40


class Events:
    """Every server event the client got, in order, as plain dicts."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.items if e["type"] == kind]

    async def wait(self, check: Callable[[], bool], timeout_s: float) -> bool:
        """``True`` once ``check()`` holds; ``AssertionError`` with the last events after ``timeout_s``."""
        await until(check, timeout_s, lambda: f"a server event; the last: {self.items[-3:]}", changed=self.changed)
        return True


class Microphone:
    """Appends 24 kHz PCM16 at real-time pace (silence when nothing is queued), as a live app does."""

    def __init__(self) -> None:
        self._queue = bytearray()
        self.spoke_at: list[float] = []

    def say(self, pcm: bytes) -> None:
        self._queue += pcm

    async def run(self, conn: Any) -> None:
        size = RATE * 2 * CHUNK_MS // 1000
        async for _ in FrameClock(CHUNK_MS / 1000):
            chunk = bytes(self._queue[:size]).ljust(size, b"\0")
            del self._queue[:size]
            await conn.input_audio_buffer.append(audio=base64.b64encode(chunk).decode())


async def _collect(conn: Any, events: Events) -> None:
    async for event in conn:
        events.items.append(event.model_dump(exclude_none=False))
        events.changed.set()


@asynccontextmanager
async def realtime_server(
    components: Components, sagemaker: SageMakerEmulator, voices: FileVoiceStore, replies: list[list[str]]
) -> AsyncIterator[tuple[RunningServer, OpenAIEmulator]]:
    """The local models, the enrolled voices spoken through the SageMaker emulator, scripted replies."""
    built, tts = cloned(components, sagemaker, voices)
    try:
        async with scripted_server(built, replies, local_settings(tts=tts_settings(sagemaker))) as running:
            yield running
    finally:
        await tts.aclose()


async def test_the_openai_realtime_client_converses_barges_in_and_truncates(
    components: Components,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    replies = [STORY, ["It is ", "half past three."], ["You asked about the time."]]
    async with realtime_server(components, emulator, store, replies) as (server, llm):
        client = AsyncOpenAI(api_key="any-key", base_url=server.realtime_base_url)
        async with client.realtime.connect(model="voice-agent") as conn:
            events = Events()
            reader = asyncio.create_task(_collect(conn, events))
            mic = Microphone()
            assert await events.wait(lambda: bool(events.of("session.created")), 10)
            await conn.session.update(
                session={"type": "realtime", "instructions": "Be brief.", "audio": {"output": {"voice": "alice"}}}
            )
            assert await events.wait(lambda: bool(events.of("session.updated")), 10)
            assert events.of("session.updated")[0]["session"]["audio"]["output"]["voice"] == "alice"
            speaker = asyncio.create_task(mic.run(conn))
            try:
                mic.say(silence(300, RATE) + speech_pcm16("Please tell me a long story.", RATE))

                def story_audio_ms() -> float:
                    deltas = events.of("response.output_audio.delta")
                    return sum(len(base64.b64decode(e["delta"])) for e in deltas) / (RATE * 2 / 1000)

                assert await events.wait(lambda: story_audio_ms() >= 1500, 60), "no reply audio"
                transcribed = events.of("conversation.item.input_audio_transcription.completed")
                assert transcribed and "story" in transcribed[0]["transcript"].lower(), transcribed
                story_item = events.of("response.output_item.added")[0]["item"]["id"]
                # The app has played 700 ms of the story when its caller talks over it: it stops playing and
                # says so, as OpenAI's own examples do.
                mic.say(speech_pcm16("Stop. What time is it?", RATE))
                await conn.conversation.item.truncate(item_id=story_item, content_index=0, audio_end_ms=700)
                assert await events.wait(lambda: bool(events.of("conversation.item.truncated")), 10)
                assert await events.wait(lambda: bool(events.of("input_audio_buffer.speech_started")), 20)
                assert await events.wait(lambda: len(events.of("response.done")) >= 2, 60), "no second reply"
            finally:
                speaker.cancel()
                await asyncio.gather(speaker, return_exceptions=True)
            # A text message and an explicit response.create, with instructions of its own.
            await conn.conversation.item.create(
                item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And then?"}]}
            )
            await conn.response.create(response={"instructions": "Answer in one word."})
            assert await events.wait(lambda: len(events.of("response.done")) >= 3, 60), "no third reply"
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    kinds = [e["type"] for e in events.items]
    for kind in (
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "response.created",
        "response.output_audio_transcript.delta",
        "response.output_audio.done",
    ):
        assert kind in kinds, kind
    assert not events.of("error"), events.of("error")
    first = llm.requests[0].body["messages"]
    assert first[0] == {"role": "system", "content": "Be brief."}, first
    # After the truncation the model is told only what was played of the story: the first words of it.
    asked = [r.body["messages"] for r in llm.requests]
    second = next(m for m in asked if any("time is it" in x["content"] for x in m if x["role"] == "user"))
    heard = [m["content"] for m in second if m["role"] == "assistant"]
    story_words = "".join(STORY).split()
    assert len(heard) == 1 and heard[0].endswith("…"), heard
    played = heard[0].rstrip("…").split()
    assert 0 < len(played) < 10 and played == story_words[: len(played)], heard
    third = asked[-1]
    assert third[0] == {"role": "system", "content": "Answer in one word."}, third
    assert third[-1] == {"role": "user", "content": "And then?"}, third
    assert next(m["content"] for m in third if m["role"] == "assistant") == heard[0]


async def test_a_key_is_required(server: RunningServer) -> None:
    url = server.realtime_base_url.replace("http", "ws") + "/realtime?model=x"
    with pytest.raises(InvalidStatus) as info:
        async with connect(url):
            pass
    assert info.value.response.status_code == 401
