"""The playout model on an injected clock: what the caller's device plays, in step with the caller's audio."""

from __future__ import annotations

import numpy as np

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.playout import Playout

RATE = 16000


def tone(ms: int, level: float = 0.5, rate: int = RATE, hz: float = 440.0) -> bytes:
    t = np.arange(rate * ms // 1000) / rate
    return float_to_pcm16(level * np.sin(2 * np.pi * hz * t))


def level(pcm: bytes) -> float:
    x = pcm16_to_float(pcm)
    return float(np.sqrt(np.mean(x * x))) if x.size else 0.0


def caller(playout: Playout, start: float, chunks: int, arrivals: list[float] | None = None) -> list[bytes]:
    """Take the reference for ``chunks`` 20 ms chunks of caller audio arriving from ``start`` (or at
    ``arrivals``)."""
    times = arrivals if arrivals is not None else [start + 0.02 * (i + 1) for i in range(chunks)]
    return [playout.take(320, now) for now in times]


def test_a_burst_queues_up_as_the_clients_buffer_plays_it() -> None:
    playout = Playout()
    playout.take(320, 0.02)  # the caller's stream starts: its first chunk ends at 0.02
    for _ in range(3):
        playout.sent(tone(20), RATE, 0.02)  # three frames at once, at 0.02
    got = caller(playout, 0.02, 5)
    assert [round(level(c), 2) for c in got] == [0.35, 0.35, 0.35, 0.0, 0.0]


def test_paced_frames_play_as_they_are_sent_and_a_gap_is_silence() -> None:
    playout = Playout()
    playout.take(320, 0.02)
    playout.sent(tone(20), RATE, 0.02)
    playout.sent(tone(20), RATE, 0.10)  # sent after a gap: plays then, not straight after the first
    got = caller(playout, 0.02, 5)
    assert [round(level(c), 2) for c in got] == [0.35, 0.0, 0.0, 0.0, 0.35]


def test_clear_drops_what_had_not_played() -> None:
    playout = Playout()
    playout.take(320, 0.02)
    for _ in range(10):
        playout.sent(tone(20), RATE, 0.02)  # 200 ms queued
    playout.clear(0.06)
    playout.sent(tone(20, 0.1), RATE, 0.06)  # the next reply plays from the clear on
    got = caller(playout, 0.02, 5)
    assert [round(level(c), 2) for c in got] == [0.35, 0.35, 0.07, 0.0, 0.0]


def test_late_chunks_keep_their_place_and_an_early_one_resets_it() -> None:
    playout = Playout()
    playout.take(320, 0.05)  # the first chunk was 30 ms late
    playout.sent(tone(20), RATE, 0.06)
    playout.take(320, 0.04)  # the second came on time: the stream is 30 ms earlier than it first seemed
    got = caller(playout, 0.04, 3)  # chunks captured 0.04-0.06, 0.06-0.08, 0.08-0.10
    assert [round(level(c), 2) for c in got] == [0.0, 0.35, 0.0]  # the tone played 0.06-0.08


def test_jitter_does_not_move_the_reference() -> None:
    """Chunks bunching up on the network (three at once, then none) are placed by their count, not arrival."""
    playout = Playout()
    for i in range(50):
        playout.sent(tone(20, 0.1 + 0.01 * i), RATE, 0.02 * i)
    arrivals = [0.02 * (i + 1) + (0.04 - 0.02 * (i % 3)) for i in range(48)]
    steady = Playout()
    for i in range(50):
        steady.sent(tone(20, 0.1 + 0.01 * i), RATE, 0.02 * i)
    jittered = [round(level(c), 3) for c in caller(playout, 0.0, 48, arrivals)]
    assert jittered[3:] == [round(level(c), 3) for c in caller(steady, 0.0, 48)][3:]


def test_other_rates_are_brought_to_16_khz() -> None:
    playout = Playout()
    playout.take(320, 0.02)
    for i in range(10):
        playout.sent(tone(20, 0.5, rate=8000, hz=300.0), 8000, 0.02 + 0.02 * i)
    got = b"".join(caller(playout, 0.02, 10))
    x = pcm16_to_float(got)[640:]  # after the resampler's start
    spectrum = np.abs(np.fft.rfft(x))
    assert abs(np.argmax(spectrum) * RATE / x.size - 300.0) < 30
    assert abs(level(float_to_pcm16(x)) - 0.35) < 0.03


def test_old_audio_is_forgotten() -> None:
    playout = Playout()
    for i in range(1000):  # 20 s of reply, no caller audio taken
        playout.sent(tone(20), RATE, 0.02 * i)
    assert len(playout._segments) <= 2 * 50 + 3  # about the last 2 s
