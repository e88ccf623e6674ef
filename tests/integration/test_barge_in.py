"""Barge-in over a real socket, with real tiny.en, Piper and an OpenAI-compatible model on its emulator.

The caller asks for a story, listens to about a second and a half of it (reporting what it played with
``playback.mark``), then talks over it ("Wait, what time is it now?"). The agent must send
``playback.clear``, send no more audio of the story, answer the new question, and tell the model only the
part of the story the caller heard.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.runtime.components import Components
from testing.sockets import FrameClock
from testing.speech import silence, speech_pcm16, wer
from testing.waits import within
from tests.integration.scripted import scripted_server

pytestmark = pytest.mark.models

STORY = [
    "Once upon a time, a small fox lived at the edge of a quiet forest. ",
    "Every morning she walked to the river to watch the fish jump. ",
    "One day she found a lost duckling crying under a willow tree. ",
    "The fox carried the duckling home across three wide fields. ",
    "The duck family thanked her with a song that lasted until sunset. ",
    "From then on, the fox and the ducks met at the river every spring. ",
]
FRAME = 640  # 20 ms at 16 kHz

# Piper pauses 320 ms after "Wait,": a one-word speculative transcript ("Wait.") must not end the turn there
# (agent.core.endpointing gives one word the default hangover).
INTERRUPTION = "Wait, what time is it now?"


class Caller:
    """Streams audio at real time: silence, or an utterance when one is queued."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.stop = asyncio.Event()

    async def run(self) -> None:
        pending = b""
        async for _ in FrameClock(0.02):
            if self.stop.is_set():
                break
            if not pending and not self.queue.empty():
                pending = self.queue.get_nowait()
            frame, pending = (pending[:FRAME], pending[FRAME:]) if pending else (bytes(FRAME), b"")
            await self.ws.send(frame.ljust(FRAME, b"\x00"))


async def test_talking_over_a_story_interrupts_it_and_the_model_hears_only_what_was_played(
    components: Components,
) -> None:
    async with scripted_server(components, [STORY, ["It is ", "half past three."]]) as (server, emulator):
        talk = await _conversation(server.ws_url)

    messages = talk.messages
    kinds = [m["type"] for m in messages]
    assert "playback.clear" in kinds, kinds
    clear = next(m for m in messages if m["type"] == "playback.clear")
    assert clear["turn"] == 1
    assert talk.binary_after_clear == 0  # no story audio after the clear
    metrics = {m["turn"]: m for m in messages if m["type"] == "turn.metrics"}
    assert metrics[1]["interrupted"] is True
    # Heard: at least the last position the caller reported, at most the story audio it was sent. (How far the
    # server's clock advances it between the mark and the barge-in is unit-tested with an injected clock.)
    assert talk.last_mark_ms >= 1500
    assert talk.last_mark_ms - 1 <= metrics[1]["heard_ms"] <= talk.story_received_ms + 1  # whole ms
    transcripts = {m["turn"]: m["text"] for m in messages if m["type"] == "transcript"}
    assert wer(INTERRUPTION, transcripts[2]) <= 0.25, transcripts[2]
    assert any(m["type"] == "audio.start" and m["turn"] == 2 for m in messages)
    assert metrics[2]["interrupted"] is False

    # The request that produced turn 2's reply (a reply prepared for "Wait." during the pause after it, then
    # dropped when the caller went on, may have been asked for before it: that is what preemption costs).
    second = next(
        r.body["messages"]
        for r in reversed(emulator.requests)
        if r.body["messages"][-1] == {"role": "user", "content": transcripts[2]}
    )
    heard = [m["content"] for m in second if m["role"] == "assistant"]
    assert len(heard) == 1
    full_story = "".join(STORY).strip()
    assert heard[0] != full_story and len(heard[0]) < len(full_story) / 2, heard[0]
    assert heard[0].startswith("Once upon a time")
    assert second[-1] == {"role": "user", "content": transcripts[2]}


@dataclasses.dataclass
class Talk:
    messages: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    binary_after_clear: int = 0
    last_mark_ms: float = 0.0  # the last playback.mark sent for the story
    story_received_ms: float = 0.0  # story audio received before the clear


async def _conversation(url: str) -> Talk:
    talk = Talk()
    messages = talk.messages
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None}))
        caller = Caller(ws)
        sender = asyncio.create_task(caller.run())
        await caller.queue.put(silence(300) + speech_pcm16("Please tell me a long story."))
        first_audio_at: float | None = None
        received_ms = 0.0
        interrupted = cleared = False

        async def listen() -> None:
            nonlocal first_audio_at, received_ms, interrupted, cleared
            while True:
                try:
                    message = await asyncio.wait_for(ws.recv(), 0.2)
                except TimeoutError:
                    message = None
                if isinstance(message, bytes):
                    received_ms += len(message) / 48.0  # 24 kHz PCM16
                    if cleared:
                        talk.binary_after_clear += 1
                    elif not any(m["type"] == "playback.clear" for m in messages):
                        talk.story_received_ms = received_ms
                elif message is not None:
                    event = json.loads(message)
                    messages.append(event)
                    if event["type"] == "audio.start" and event["turn"] == 1:
                        first_audio_at = time.monotonic()
                    if event["type"] == "playback.clear":
                        cleared = True
                    if event["type"] == "audio.start" and event["turn"] == 2:
                        cleared = False
                    if event["type"] == "turn.metrics" and event["turn"] == 2:
                        return
                if first_audio_at is not None and not interrupted:
                    played = min(received_ms, (time.monotonic() - first_audio_at) * 1000)
                    await ws.send(json.dumps({"type": "playback.mark", "turn": 1, "played_ms": played}))
                    talk.last_mark_ms = played
                    if played >= 1500:
                        interrupted = True
                        await caller.queue.put(speech_pcm16(INTERRUPTION))

        try:
            await within(listen(), 60, "the answer's turn to end")
        finally:
            caller.stop.set()
            await sender
            await ws.send(json.dumps({"type": "session.end"}))
    return talk
