"""A paused turn's speech (``TurnSpeech.hold`` and ``resend``) against the real outbox: nothing is posted while
held, the audio kept is posted again from the position asked for, in order, with its offsets, and then the rest;
and every frame posted again waits for room like synthesis does, so a long reply resumed over a slow client never
fills the outbox past its high water (the bound a client that really stops reading meets). Each test waits for
the state it needs (``TurnSpeech.waiting_for``), never for a time to pass."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agent.core import reply_audio, yielding
from agent.core.events import (
    AudioChunk,
    Effect,
    Event,
    HoldSpeech,
    Notify,
    PlaybackPause,
    ResendSpeech,
    SpeechAudio,
    SpeechEnded,
)
from agent.core.policies import BargeInPolicy, SessionConfig
from agent.core.turn_state import Turn
from agent.ports import JobInfo
from agent.runtime.call.outbox import Outbox
from agent.runtime.call.speech import TurnSpeech
from agent.runtime.call.voicing import Voicing
from testing.sockets import until

RATE = 24000
FRAME = RATE * 2 * 40 // 1000  # 40 ms frames


class CountingSpeech:
    """A voice whose samples count up (each byte says where in the reply it is): a sentence is the number of its
    first sample, spoken as ``seconds`` of samples from there in 100 ms chunks, faster than real time."""

    sample_rate = RATE

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def sentence(self, index: int) -> str:
        return str(round(index * self.seconds * RATE))

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        return f"{tenant}/counting"

    async def synthesize(
        self, text: str, voice: str, budget: object = None, job: JobInfo | None = None, language: str | None = None
    ) -> AsyncIterator[bytes]:
        first = int(text)
        for chunk in range(round(self.seconds * 10)):
            samples = [(first + chunk * RATE // 10 + i) % 32768 for i in range(RATE // 10)]
            yield b"".join(s.to_bytes(2, "little") for s in samples)
            await asyncio.sleep(0)


class Ledger:
    """The session core's side of one turn, for this test: the real ledger (``agent.core.reply_audio``) and yield
    (``agent.core.yielding``) on a turn at a clock the test sets; their effects carried out as the connection does
    (``agent.runtime.call.effects``): audio into the outbox, a pause drops what is queued, hold and resend."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self.config = SessionConfig(output_sample_rate=RATE, barge_in=BargeInPolicy(pause=True), language="en")
        self.turn = Turn(1, 1000, 0.0, 0.0, reply_finished=True)
        self.speech: TurnSpeech | None = None
        self.now = 0.0
        self.events: list[Event] = []
        self.peak = 0

    async def post(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, SpeechAudio):
            self.apply(reply_audio.send(self.turn, event.pcm, event.sentence, event.offset, self.config, self.now))
        elif isinstance(event, SpeechEnded):
            self.apply(reply_audio.synthesized(self.turn))

    def pause(self) -> int:
        effects = yielding.pause(self.turn, self.config, self.now)
        self.apply(effects)
        (pause,) = [e.event for e in effects if isinstance(e, Notify) and isinstance(e.event, PlaybackPause)]
        return pause.played_ms

    def resume(self) -> None:
        self.apply(yielding.resume(self.turn, self.config, self.now))

    def apply(self, effects: list[Effect]) -> None:
        assert self.speech is not None
        for effect in effects:
            match effect:
                case Notify(event=AudioChunk(pcm=pcm)):
                    self.outbox.put(pcm, 1)
                    self.peak = max(self.peak, self.outbox.audio_bytes)
                case Notify(event=PlaybackPause()):
                    self.outbox.drop_audio(1)
                case HoldSpeech():
                    self.speech.hold()
                case ResendSpeech(start=start):
                    self.speech.resend(start)

    @property
    def ended(self) -> bool:
        return self.turn.audio_ended


async def test_held_speech_posts_nothing_and_resends_from_the_position_in_order_then_goes_on() -> None:
    outbox = Outbox(audio_high_water=FRAME * 10)
    ledger = Ledger(outbox)
    voice = CountingSpeech(seconds=2.0)
    speech = TurnSpeech(
        1, Voicing(voice, "counting"), RATE, 40, ledger.post, outbox.wait_for_room, language="en", keep=True
    )
    ledger.speech = speech
    client = bytearray()
    limit = 20 * FRAME  # the client takes 800 ms, then nothing until told (synthesis then waits for room)
    more = asyncio.Event()

    async def read() -> None:
        while True:
            while len(client) >= limit:
                more.clear()
                await more.wait()
            payload = await outbox.get()
            if payload is None:
                return
            assert isinstance(payload, bytes)
            client.extend(payload)

    reader = asyncio.create_task(read())
    try:
        for sentence in range(3):
            speech.add(voice.sentence(sentence), sentence, language="en")
        speech.finish()
        await until(lambda: len(client) >= limit, 10, "the first 800 ms")
        await until(
            lambda: speech.waiting_for == "room", 10, lambda: f"synthesis to wait for room: {speech.waiting_for}"
        )
        ledger.now = 0.5  # the caller coughs, having heard 500 ms: the reply stops at the start of that frame
        posted = len(ledger.events)
        assert ledger.pause() == 480  # it empties the outbox: the frame that waited for room now has room
        del client[480 * 48 :]  # the client drops what it buffered beyond that
        await until(lambda: speech.waiting_for == "resume", 10, lambda: f"synthesis to stop: {speech.waiting_for}")
        assert len(ledger.events) == posted, "frames posted while held"
        assert not any(isinstance(e, SpeechEnded) for e in ledger.events)
        ledger.now = 1.0
        ledger.resume()  # from 480 ms
        limit = 1 << 40
        more.set()
        await until(lambda: ledger.ended, 10, "audio.end")
        await until(lambda: len(client) >= ledger.turn.sent_bytes, 10, "the client to take it all")
    finally:
        speech.cancel()
        outbox.close()
        limit = 1 << 40
        more.set()  # a reader waiting for leave to read takes the close
        await reader
    samples = [int.from_bytes(client[i : i + 2], "little") for i in range(0, len(client), 2)]
    assert samples == [i % 32768 for i in range(6 * RATE)], "not the reply in order, once, from where it was heard"
    again = [e for e in ledger.events if isinstance(e, SpeechAudio) and e.offset == 480 * 48]
    assert again and again[0].sentence == 0 and len(again[0].pcm) == FRAME  # whole frames from the position


async def test_a_long_reply_resent_to_a_slow_client_never_fills_the_outbox_past_its_high_water() -> None:
    high_water = FRAME * 5  # 200 ms
    overflowed: list[bool] = []
    # a client that stopped reading would be closed two frames past the high water
    outbox = Outbox(audio_high_water=high_water, max_bytes=FRAME * 2, on_overflow=lambda: overflowed.append(True))
    ledger = Ledger(outbox)
    voice = CountingSpeech(seconds=30.0)
    speech = TurnSpeech(
        1, Voicing(voice, "counting"), RATE, 40, ledger.post, outbox.wait_for_room, language="en", keep=True
    )
    ledger.speech = speech
    taken = 0

    async def read() -> None:
        """A slow client that never stops: it takes a frame (40 ms) every 10 turns of the loop, where the voice
        makes 100 ms a turn and a frame posted again takes one: whatever posts audio without waiting for room
        outruns it at once. Its pace is counted in turns of the loop, not time, so a loaded machine changes
        nothing."""
        nonlocal taken
        while (payload := await outbox.get()) is not None:
            taken += len(payload)
            for _ in range(10):
                await asyncio.sleep(0)  # one turn of the loop

    speech.add(voice.sentence(0), 0, language="en")
    speech.add(voice.sentence(1), 1, language="en")
    speech.finish()
    reader = asyncio.create_task(read())
    try:
        await until(lambda: ledger.turn.sent_bytes >= 10 * RATE * 2, 30, "10 s of the reply")
        ledger.now = 1.0
        assert ledger.pause() == 1000  # heard 1 s: 59 s to send again, and on
        # synthesis stops once ahead: it waits for the resume
        await until(lambda: speech.waiting_for == "resume", 10, lambda: f"synthesis to stop: {speech.waiting_for}")
        ledger.peak = 0
        ledger.now = 2.0
        ledger.resume()
        await until(lambda: ledger.ended, 60, "audio.end")
    finally:
        speech.cancel()
        outbox.close()
        await reader
    assert not overflowed
    assert ledger.turn.sent_bytes == ledger.turn.audio_bytes == 60 * RATE * 2
    assert ledger.peak <= high_water + FRAME, f"{ledger.peak} bytes queued: the resend bypassed the backpressure"
