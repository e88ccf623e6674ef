"""The end of turn judged by words and sound together, over a real socket with real tiny.en, Smart Turn and Piper.

The waits that are not the one under test are made long (3 s) so that which rule ended a turn shows in the
audio position of ``speech.stopped`` alone: a short question ends at the minimum; "Hello world." (two words:
a fragment by the rules alone) ends at the minimum when the acoustic model is sure and may end fragments
(``ACOUSTIC_SURE_FRAGMENTS``) or the text model reads it finished, and waits the long fragment hangover when
both models are off; a caller who
pauses to think after "for, um," gets one turn of the whole sentence and hears nothing of the reply before they
have finished. The audio is streamed at real-time pace; every wait fails loudly.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.runtime.components import Components
from testing.sockets import FrameClock
from testing.speech import silence, speech_pcm16
from testing.waits import within
from tests.integration.conftest import local_settings
from tests.integration.scripted import scripted_server

pytestmark = pytest.mark.models

FRAME = 640  # 20 ms at 16 kHz
LONG_MS = 3000
LEAD_MS = 300


def settings(acoustic: str, **turn: Any) -> Any:
    waits = {"hangover_max_ms": LONG_MS, "fragment_ms": LONG_MS, "acoustic_unsure_ms": LONG_MS, "fragment_words": 3}
    return local_settings(vad={"hangover_ms": LONG_MS}, turn={"acoustic": acoustic, **waits, **turn})


@dataclass
class Call:
    messages: list[dict[str, Any]] = field(default_factory=list)
    audio_before_done: int = 0
    """Reply audio frames that arrived before the last frame of the caller's speech was sent."""


async def _stream(ws: ClientConnection, audio: bytes, done: asyncio.Event, stop: asyncio.Event) -> None:
    """``audio`` at real-time pace (``done`` once all of it is sent), then silence until ``stop``."""
    async for _ in FrameClock(0.02):
        if stop.is_set():
            break
        if not audio:
            done.set()
        frame, audio = audio[:FRAME].ljust(FRAME, b"\x00"), audio[FRAME:]
        await ws.send(frame)


async def _call(url: str, said: bytes) -> Call:
    """Say ``said``, and listen until the first turn's metrics (60 s at most)."""
    call = Call()
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None}))
        done, stop = asyncio.Event(), asyncio.Event()
        sender = asyncio.create_task(_stream(ws, said, done, stop))

        async def listen() -> Call:
            while True:
                message = await ws.recv()
                if isinstance(message, bytes):
                    call.audio_before_done += 0 if done.is_set() else 1
                    continue
                call.messages.append(json.loads(message))
                if call.messages[-1]["type"] == "turn.metrics":
                    return call

        try:
            return await within(listen(), 60, lambda: f"the first turn's metrics, after {call.messages[-3:]}")
        finally:
            stop.set()
            await sender


def _one(call: Call, kind: str) -> dict[str, Any]:
    found = [m for m in call.messages if m["type"] == kind]
    assert len(found) == 1, [m["type"] for m in call.messages]
    return found[0]


async def test_a_short_question_is_answered_at_the_minimum(components: Components) -> None:
    speech = speech_pcm16("Where's the station?")
    voiced_end_ms = LEAD_MS + len(speech) // 32
    async with scripted_server(components, [["Two streets down."]], settings("smart-turn")) as (server, _):
        call = await _call(server.ws_url, silence(LEAD_MS) + speech)
    waited = _one(call, "speech.stopped")["audio_ms"] - voiced_end_ms
    assert "station" in _one(call, "transcript")["text"].lower()
    assert waited < LONG_MS // 2  # HANGOVER_MIN_MS (320) after the last voiced frame, not one of the long waits


@pytest.mark.parametrize(("acoustic", "text_model"), [("smart-turn", "off"), ("off", "off"), ("off", "smollm2")])
async def test_a_sure_sound_or_a_sure_reading_spares_two_words_the_fragment_wait(
    components: Components, acoustic: str, text_model: str
) -> None:
    speech = speech_pcm16("Hello world.")
    voiced_end_ms = LEAD_MS + len(speech) // 32
    served = settings(acoustic, acoustic_sure_fragments=True, text_model=text_model)
    async with scripted_server(components, [["Hello to you too."]], served) as (server, _):
        call = await _call(server.ws_url, silence(LEAD_MS) + speech)
    waited = _one(call, "speech.stopped")["audio_ms"] - voiced_end_ms
    assert "hello world" in _one(call, "transcript")["text"].lower().replace(",", "")
    if acoustic == "off" and text_model == "off":
        assert waited >= LONG_MS - 200  # the rules alone: two words may be a fragment
    else:
        assert waited < LONG_MS // 2  # the sound is sure, or the text model reads it finished: the minimum


async def test_a_thinking_pause_gets_one_answer_to_the_whole_sentence_and_no_audio_in_the_pause(
    components: Components,
) -> None:
    first, second = "I would like to book a table for, um,", "four people tomorrow night."
    said = silence(LEAD_MS) + speech_pcm16(first) + silence(1000) + speech_pcm16(second)
    replies = [["A table for four, tomorrow night."]] * 3  # prepared replies to a guess are discarded unheard
    async with scripted_server(components, replies, settings("smart-turn")) as (server, emulator):
        call = await _call(server.ws_url, said)
    transcript = _one(call, "transcript")["text"].lower()
    assert "table" in transcript and "people" in transcript, transcript  # one turn, both halves
    assert _one(call, "speech.stopped")["audio_ms"] >= len(said) // 32  # ended after the caller finished
    assert call.audio_before_done == 0  # nothing of the reply was heard during the pause
    assert "people" in json.dumps(emulator.requests[-1].body)  # the reply heard answers the whole sentence
    assert [m["type"] for m in call.messages].count("transcript") == 1
