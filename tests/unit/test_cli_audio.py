"""The CLI's input path: any audio file -> PCM16 mono at the stream rate -> fixed 20 ms frames, paced."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from agent.audio.wav import load_pcm16
from clients.framing import frame_bytes, frame_dbfs, split_frames


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
