"""/v1/realtime against the official ``openai`` package's GA models, over a real session (issue 21).

The official client converses with a real server (tiny.en, Piper, scripted replies) and makes it send every
server event type it has; each event as it came over the socket is parsed by the package's model of its type,
strictly (``tests.unit.test_realtime_conformance.conforming``). On the way: the session echoes its
transcription with the language, a bad language is refused with the parameter named, the transcript carries
its usage and language, and a client's ``response.cancel`` (turn detection off) is ``client_cancelled``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from openai import AsyncOpenAI

from agent.runtime.components import Components
from testing.speech import silence, speech_pcm16
from testing.waits import until
from tests.component.test_realtime_conformance import GA_EMITTED
from tests.integration.conftest import local_settings
from tests.integration.scripted import scripted_server
from tests.integration.test_barge_in import STORY
from tests.integration.test_realtime import RATE, Microphone
from tests.unit.test_realtime_conformance import conforming

pytestmark = pytest.mark.models


class RawEvents:
    """Every server event as it came over the socket (the SDK's own parsing checks nothing), in order."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.closed = False

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.items if e["type"] == kind]

    async def until(self, check: Callable[[], bool]) -> None:
        """Wait until ``check()`` holds; fails once the session is over, or after ``WAIT_S``."""

        def holds() -> bool:
            if check():
                return True
            assert not self.closed, f"the session ended; its last events: {self.items[-3:]}"
            return False

        await until(holds, what=lambda: f"a server event; the last: {self.items[-3:]}", changed=self.changed)

    async def read(self, conn: Any) -> None:
        try:
            while True:
                self.items.append(json.loads(await conn.recv_bytes()))
                self.changed.set()
        finally:
            self.closed = True
            self.changed.set()


async def test_every_server_event_of_a_session_conforms_to_the_official_ga_models(components: Components) -> None:
    replies = [["It is ", "half past three."], STORY]
    settings = local_settings(turn={"preemption": "off"})  # one model request per turn: the replies come in order
    async with scripted_server(components, replies, settings) as (server, _llm):
        client = AsyncOpenAI(api_key="any-key", base_url=server.realtime_base_url)
        async with client.realtime.connect(model="voice-agent") as conn:
            events = RawEvents()
            reader = asyncio.create_task(events.read(conn))
            try:
                await _converse(conn, events)
            finally:
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    for event in events.items:
        conforming(event)
    assert {e["type"] for e in events.items} == GA_EMITTED

    session = events.of("session.updated")[0]["session"]
    assert session["audio"]["input"]["transcription"] == {"model": "whisper-1", "language": "en"}, session
    (refused,) = events.of("error")
    assert (refused["error"]["code"], refused["error"]["param"]) == (
        "invalid_value",
        "session.audio.input.transcription.language",
    ), refused
    assert refused["error"]["event_id"] == "evt_language"
    transcript = events.of("conversation.item.input_audio_transcription.completed")[0]
    assert "time" in transcript["transcript"].lower(), transcript
    assert transcript["usage"]["type"] == "duration" and transcript["usage"]["seconds"] > 0.5, transcript
    assert transcript["languages"] == [{"code": "en"}], transcript
    first, second = (e["response"] for e in events.of("response.done"))
    assert (first["status"], first["status_details"]) == ("completed", None), first
    assert second["status"] == "cancelled", second
    assert second["status_details"] == {"type": "cancelled", "reason": "client_cancelled"}, second


async def _converse(conn: Any, events: RawEvents) -> None:
    await events.until(lambda: bool(events.of("session.created")))
    transcription = {"model": "whisper-1", "language": "en"}
    await conn.session.update(
        session={"type": "realtime", "instructions": "Be brief.", "audio": {"input": {"transcription": transcription}}}
    )
    await events.until(lambda: bool(events.of("session.updated")))
    await conn.send(
        {
            "type": "session.update",
            "event_id": "evt_language",
            "session": {"type": "realtime", "audio": {"input": {"transcription": {"language": "xx"}}}},
        }
    )
    await events.until(lambda: bool(events.of("error")))

    # A spoken question (server VAD), transcribed and answered.
    mic = Microphone()
    speaker = asyncio.create_task(mic.run(conn))
    try:
        mic.say(silence(300, RATE) + speech_pcm16("What time is it?", RATE) + silence(300, RATE))
        await events.until(lambda: bool(events.of("response.done")))
    finally:
        speaker.cancel()
        await asyncio.gather(speaker, return_exceptions=True)
    await events.until(lambda: bool(events.of("conversation.item.input_audio_transcription.completed")))
    user_item = events.of("input_audio_buffer.committed")[0]["item_id"]
    reply_item = events.of("response.output_item.added")[0]["item"]["id"]
    await conn.conversation.item.truncate(item_id=reply_item, content_index=0, audio_end_ms=200)
    await events.until(lambda: bool(events.of("conversation.item.truncated")))

    # Without turn detection: the client clears its buffer, deletes an item, and cancels a response it asked for.
    await conn.session.update(session={"type": "realtime", "audio": {"input": {"turn_detection": None}}})
    await events.until(lambda: len(events.of("session.updated")) >= 2)
    await conn.input_audio_buffer.append(audio=base64.b64encode(silence(100, RATE)).decode())
    await conn.input_audio_buffer.clear()
    await events.until(lambda: bool(events.of("input_audio_buffer.cleared")))
    await conn.conversation.item.delete(item_id=user_item)
    await events.until(lambda: bool(events.of("conversation.item.deleted")))
    story = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Tell me a story."}]}
    await conn.conversation.item.create(item=story)
    await conn.response.create()
    await events.until(lambda: len(events.of("response.created")) >= 2)
    second = events.of("response.created")[1]["response"]["id"]
    await events.until(lambda: any(e["response_id"] == second for e in events.of("response.output_audio.delta")))
    await conn.response.cancel()
    await events.until(lambda: len(events.of("response.done")) >= 2)
