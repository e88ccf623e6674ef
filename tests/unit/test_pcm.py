"""PCM16 conversion, level metering and framing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent.audio.pcm import Framer, float_to_pcm16, frame_bytes_for, pcm16_to_float, rms_dbfs
from agent.errors import AudioFormatError


def test_every_int16_value_round_trips() -> None:
    pcm = np.arange(-32768, 32768, dtype="<i2").tobytes()
    x = pcm16_to_float(pcm)
    assert x.dtype == np.float32
    assert x.min() == -1.0
    assert x.max() < 1.0
    assert float_to_pcm16(x) == pcm


def test_pcm16_to_float_is_little_endian() -> None:
    assert pcm16_to_float(b"\x00\x40").tolist() == [0.5]
    assert pcm16_to_float(b"").size == 0


def test_odd_byte_count_is_rejected() -> None:
    with pytest.raises(AudioFormatError):
        pcm16_to_float(b"\x00\x01\x02")


def test_float_to_pcm16_clips_and_sanitises() -> None:
    x = np.array([0.0, 1.5, -1.5, 1.0, np.nan, np.inf, -np.inf, 0.25], dtype=np.float32)
    assert np.frombuffer(float_to_pcm16(x), dtype="<i2").tolist() == [
        0,
        32767,
        -32768,
        32767,
        0,
        32767,
        -32768,
        8192,
    ]


def test_float_to_pcm16_rounds_to_nearest() -> None:
    step = 1 / 32768
    x = np.array([0.4 * step, 0.6 * step, -0.6 * step], dtype=np.float64)
    assert np.frombuffer(float_to_pcm16(x), dtype="<i2").tolist() == [0, 1, -1]


def test_rms_dbfs_levels() -> None:
    assert rms_dbfs(b"") == -120.0
    assert rms_dbfs(bytes(640)) == -120.0
    square = np.tile(np.array([32767, -32768], dtype="<i2"), 160).tobytes()
    assert rms_dbfs(square) == pytest.approx(0.0, abs=0.01)
    t = np.arange(16000) / 16000
    sine = float_to_pcm16(0.5 * np.sin(2 * np.pi * 440 * t))
    assert rms_dbfs(sine) == pytest.approx(20 * math.log10(0.5 / math.sqrt(2)), abs=0.01)
    one_lsb = np.array([1] + [0] * 10_000_000, dtype="<i2").tobytes()
    assert rms_dbfs(one_lsb) == -120.0  # below the floor, never -inf


def test_frame_bytes_for() -> None:
    assert frame_bytes_for(16000, 20) == 640
    assert frame_bytes_for(8000, 20) == 320
    assert frame_bytes_for(22050, 20) == 882
    assert frame_bytes_for(48000, 10) == 960
    with pytest.raises(AudioFormatError):
        frame_bytes_for(22050, 10)  # 220.5 samples
    with pytest.raises(AudioFormatError):
        frame_bytes_for(0, 20)


def test_framer_returns_whole_frames_and_keeps_the_rest() -> None:
    framer = Framer(4)
    assert framer.push(b"ab") == []
    assert framer.pending == 2
    assert framer.push(b"cdefghij") == [b"abcd", b"efgh"]
    assert framer.pending == 2
    assert framer.push(b"") == []
    assert framer.push(b"kl") == [b"ijkl"]
    assert framer.pending == 0


def test_framer_reset_drops_the_remainder() -> None:
    framer = Framer(640)
    framer.push(bytes(700))
    assert framer.pending == 60
    framer.reset()
    assert framer.pending == 0
    assert framer.push(bytes(640)) == [bytes(640)]


def test_framer_concatenation_is_lossless() -> None:
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, 10_007, dtype=np.uint8).tobytes()
    framer = Framer(882)
    frames: list[bytes] = []
    pos = 0
    while pos < len(data):
        size = int(rng.integers(0, 2000))
        frames += framer.push(data[pos : pos + size])
        pos += size
    assert all(len(f) == 882 for f in frames)
    assert b"".join(frames) == data[: len(frames) * 882]
    assert framer.pending == len(data) - len(frames) * 882


def test_framer_rejects_non_positive_size() -> None:
    with pytest.raises(ValueError):
        Framer(0)
