"""The CLI's input path: any audio file -> PCM16 mono at the stream rate -> fixed 20 ms frames, paced."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from agent.audio.wav import load_pcm16
from clients.framing import FramePacer, frame_bytes, frame_dbfs, split_frames


def _stereo_float_wav(path: Path, seconds: float = 0.5, rate: int = 44100) -> None:
    t = np.arange(int(seconds * rate)) / rate
    tone = 0.5 * np.sin(2 * np.pi * 440.0 * t)
    sf.write(path, np.stack([tone, tone], axis=1).astype(np.float32), rate, subtype="FLOAT")


def test_stereo_44k_float_wav_becomes_16k_mono_640_byte_frames(tmp_path: Path) -> None:
    path = tmp_path / "in.wav"
    _stereo_float_wav(path)
    info = sf.info(str(path))
    assert (info.samplerate, info.channels, info.subtype) == (44100, 2, "FLOAT")

    pcm = load_pcm16(path, 16000)
    assert abs(len(pcm) // 2 - 8000) <= 2  # 0.5 s at 16 kHz
    frames = split_frames(pcm, 16000)
    assert len(frames) == math.ceil(len(pcm) / 640)
    assert {len(f) for f in frames} == {640}
    assert b"".join(frames)[: len(pcm)] == pcm

    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64) / 32768
    middle = samples[1000:7000]
    assert 0.45 < np.max(np.abs(middle)) < 0.55  # channels averaged, not summed
    crossings = np.count_nonzero(np.diff(np.signbit(middle)))
    assert abs(crossings / 2 / (len(middle) / 16000) - 440) < 5  # still a 440 Hz tone


def test_split_frames_pads_the_last_frame_and_rejects_odd_bytes() -> None:
    assert frame_bytes(16000) == 640
    assert frame_bytes(48000) == 1920
    assert frame_bytes(8000) == 320
    frames = split_frames(b"\x01\x00" * 330, 16000)
    assert [len(f) for f in frames] == [640, 640]
    assert frames[1] == b"\x01\x00" * 10 + bytes(620)
    assert split_frames(b"", 16000) == []
    with pytest.raises(ValueError):
        split_frames(b"\x00" * 3, 16000)


def test_frame_dbfs() -> None:
    assert frame_dbfs(bytes(640)) == -math.inf
    full = np.full(320, 32767, dtype="<i2").tobytes()
    assert frame_dbfs(full) == pytest.approx(0.0, abs=0.01)
    quiet = np.full(320, 328, dtype="<i2").tobytes()
    assert frame_dbfs(quiet) == pytest.approx(-40.0, abs=0.1)


class _FakeTime:
    """A clock whose sleep always overshoots, like a busy event loop."""

    def __init__(self, overshoot: float) -> None:
        self.now = 100.0
        self.overshoot = overshoot
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if seconds > 0:
            self.now += seconds + self.overshoot


async def test_pacer_does_not_accumulate_sleep_overshoot() -> None:
    fake = _FakeTime(overshoot=0.004)
    pacer = FramePacer(0.02, clock=fake.clock, sleep=fake.sleep)
    sent = [await pacer.wait() for _ in range(100)]
    # Frame n goes out at 100 + n * 20 ms + one overshoot at most, never n overshoots.
    for n, at in enumerate(sent):
        assert 100.0 + n * 0.02 <= at <= 100.0 + n * 0.02 + 0.0041
    assert sent[-1] - sent[0] == pytest.approx(99 * 0.02, abs=0.005)


async def test_pacer_catches_up_after_a_stall_then_keeps_the_schedule() -> None:
    fake = _FakeTime(overshoot=0.0)
    pacer = FramePacer(0.02, clock=fake.clock, sleep=fake.sleep)
    await pacer.wait()  # frame 0 at 100.00
    fake.now += 0.1  # the loop stalled for 100 ms
    late = [await pacer.wait() for _ in range(5)]  # frames 1..5 were due at 100.02..100.10
    assert late == [pytest.approx(100.1)] * 5
    assert await pacer.wait() == pytest.approx(100.12)  # frame 6 back on schedule


async def test_pacer_set_interval_keeps_the_next_due_time() -> None:
    fake = _FakeTime(overshoot=0.0)
    pacer = FramePacer(0.0, clock=fake.clock, sleep=fake.sleep)
    assert pacer.next_due() is None
    for _ in range(3):
        assert await pacer.wait() == pytest.approx(100.0)  # interval 0: no waiting
    pacer.set_interval(0.02)
    assert await pacer.wait() == pytest.approx(100.0)
    assert await pacer.wait() == pytest.approx(100.02)
    assert pacer.interval_s == 0.02


async def test_pacer_real_clock_paces_in_real_time() -> None:
    pacer = FramePacer(0.01)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(11):
        await pacer.wait()
    assert 0.095 <= loop.time() - start < 0.5
