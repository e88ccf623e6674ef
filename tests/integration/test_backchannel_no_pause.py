"""An "uh-huh" or a hum over a playing reply, on a client that cannot pause (no ``playback.pause``), over a real
socket with real tiny.en and Piper: the reply plays on to its end, and the sound becomes no turn (the caller's
next words are the next turn).

The sounds are ones the quick look at their first 180 ms used to take for words and so cut the reply
(``bench/backchannels.py``): espeak-ng's en-gb+f2 "uh-huh" (heard as "F***", then "Uh-uh.") and Piper's "mhm"
(heard as "and make it.", then "And make a chance.").
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.audio.pcm import float_to_pcm16
from agent.runtime.components import Components
from testing.echo_audio import espeak
from testing.sockets import FrameClock, read_until
from testing.speech import silence, speech_pcm16
from testing.waits import within
from tests.integration.scripted import scripted_server

pytestmark = pytest.mark.models

FRAME = 640  # 20 ms at 16 kHz
STORY = [
    "Once upon a time, a small fox lived at the edge of a quiet forest. ",
    "Every morning she walked to the river to watch the fish jump. ",
    "One day she found a lost duckling crying under a willow tree. ",
    "The fox carried the duckling home across three wide fields. ",
]
QUESTION = "What time is it?"


def _espeak_uh_huh() -> bytes:
    return float_to_pcm16(0.7 * espeak("uh-huh", "en-gb+f2", 175) / 0.9)


def _piper_mhm() -> bytes:
    return speech_pcm16("Mhm.")


async def _stream(ws: ClientConnection, queue: asyncio.Queue[bytes], stop: asyncio.Event) -> None:
    """What is queued, at real-time pace, silence in between, until ``stop``."""
    pending = b""
    async for _ in FrameClock(0.02):
        if stop.is_set():
            break
        if not pending and not queue.empty():
            pending = queue.get_nowait()
        frame, pending = pending[:FRAME].ljust(FRAME, b"\x00"), pending[FRAME:]
        await ws.send(frame)


async def _call(url: str, sound: bytes) -> tuple[list[dict[str, Any]], int]:
    """Ask for a story; 1.5 s after its first audio, make ``sound``; once the story's turn is over, ask a question.
    Returns the messages up to the question's transcript and the story's reply audio bytes received.

    The question is the signal that the server has done with the sound: the server decides what caller audio
    becomes in the order it was said (a sound still waiting for its transcript when the question ends is
    dropped), so by the question's transcript, a turn the sound had become would have been announced."""
    messages: list[dict[str, Any]] = []
    audio = 0
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None}))
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        stop = asyncio.Event()
        queue.put_nowait(silence(300) + speech_pcm16("Tell me a story about a fox."))
        sender = asyncio.create_task(_stream(ws, queue, stop))

        async def story() -> None:
            nonlocal audio
            sound_at: float | None = None
            while True:
                if sound_at is not None and time.monotonic() >= sound_at:
                    queue.put_nowait(sound)
                    sound_at = float("inf")
                try:
                    message = await asyncio.wait_for(ws.recv(), 0.1)
                except TimeoutError:
                    continue
                if isinstance(message, bytes):
                    audio += len(message)
                    sound_at = time.monotonic() + 1.5 if sound_at is None else sound_at
                    continue
                messages.append(json.loads(message))
                if messages[-1]["type"] == "turn.metrics" and messages[-1]["turn"] == 1:
                    return

        try:
            await within(story(), 90, "the end of the story's turn")
            queue.put_nowait(silence(300) + speech_pcm16(QUESTION) + silence(300))
            messages += await read_until(ws, "transcript")  # the sound's, had it become a turn; else the question's
        finally:
            stop.set()
            await sender
    return messages, audio


@pytest.mark.parametrize("make", [_espeak_uh_huh, _piper_mhm], ids=["espeak-uh-huh", "piper-mhm"])
async def test_an_acknowledgement_over_the_reply_loses_none_of_it(
    components: Components, make: Callable[[], bytes]
) -> None:
    sound = make()
    assert np.frombuffer(sound, np.int16).size > 0
    async with scripted_server(components, [STORY, ["Unexpected."]]) as (server, _):
        messages, audio = await _call(server.ws_url, sound)
    kinds = [m["type"] for m in messages]
    assert "speech.started" in kinds[kinds.index("audio.start") :]  # the sound was heard, over the reply
    assert "playback.clear" not in kinds, kinds
    (metrics,) = [m for m in messages if m["type"] == "turn.metrics" and m["turn"] == 1]
    assert metrics["interrupted"] is False
    (start,) = [m for m in messages if m["type"] == "audio.start"]
    assert audio == metrics["reply_audio_ms"] * start["sample_rate"] * 2 // 1000  # every byte of it was sent
    # And the sound became no turn: the next turn is the question.
    transcripts = [(m["turn"], m["text"]) for m in messages if m["type"] == "transcript"]
    assert [turn for turn, _ in transcripts] == [1, 2], transcripts
    assert "time" in transcripts[1][1].lower(), transcripts
