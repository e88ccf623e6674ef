"""Reading audio of many formats (written with soundfile at test time) and writing mono PCM16 WAV."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import soundfile as sf

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.wav import load_pcm16, read_audio, wav_bytes, write_wav
from agent.errors import AudioFormatError


def _tone(freq: float, rate: int, seconds: float, amp: float = 0.5) -> npt.NDArray[np.float32]:
    t = np.arange(round(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _encode(data: npt.NDArray[np.float32], rate: int, fmt: str, subtype: str) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, data, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("fmt", "subtype", "tolerance"),
    [
        ("WAV", "PCM_U8", 1 / 64),
        ("WAV", "PCM_16", 1e-4),
        ("WAV", "PCM_24", 1e-6),
        ("WAV", "PCM_32", 1e-6),
        ("WAV", "FLOAT", 1e-7),
        ("FLAC", "PCM_16", 1e-4),
        ("FLAC", "PCM_24", 1e-6),
        ("AIFF", "PCM_16", 1e-4),
    ],
)
@pytest.mark.parametrize("rate", [8000, 16000, 22050, 44100, 48000])
def test_lossless_formats_decode_exactly(fmt: str, subtype: str, tolerance: float, rate: int) -> None:
    tone = _tone(440, rate, 0.2)
    samples, got_rate = read_audio(_encode(tone, rate, fmt, subtype))
    assert got_rate == rate
    assert samples.dtype == np.float32
    assert samples.ndim == 1
    assert samples.shape == tone.shape
    np.testing.assert_allclose(samples, tone, atol=tolerance)


@pytest.mark.parametrize("subtype", ["VORBIS", "OPUS"])
def test_ogg_decodes(subtype: str) -> None:
    rate = 48000
    tone = _tone(440, rate, 1.0)
    samples, got_rate = read_audio(_encode(tone, rate, "OGG", subtype))
    assert got_rate == rate
    assert abs(samples.size - tone.size) < rate // 10
    rms = float(np.sqrt(np.mean(samples[rate // 10 : -rate // 10] ** 2)))
    assert rms == pytest.approx(0.5 / np.sqrt(2), rel=0.1)


@pytest.mark.parametrize("channels", [2, 3, 6])
def test_channels_are_averaged(channels: int) -> None:
    rate = 16000
    data = np.stack([_tone(200 * (c + 1), rate, 0.1, amp=0.1) for c in range(channels)], axis=1)
    samples, _ = read_audio(_encode(data, rate, "WAV", "FLOAT"))
    np.testing.assert_allclose(samples, data.mean(axis=1), atol=1e-6)


def test_reads_paths_as_str_and_path(tmp_path: Path) -> None:
    tone = _tone(300, 24000, 0.1)
    path = tmp_path / "tone.flac"
    sf.write(path, tone, 24000, subtype="PCM_16")
    for source in (path, str(path)):
        samples, rate = read_audio(source)
        assert rate == 24000
        np.testing.assert_allclose(samples, tone, atol=1e-4)


def test_load_pcm16_downmixes_and_resamples() -> None:
    left = _tone(500, 48000, 0.5, amp=0.4)
    data = np.stack([left, left], axis=1)
    pcm = load_pcm16(_encode(data, 48000, "WAV", "PCM_24"), 16000)
    out = pcm16_to_float(pcm)
    assert abs(out.size - 8000) <= 1
    expected = _tone(500, 16000, 0.5, amp=0.4)
    np.testing.assert_allclose(out[400:-400], expected[400 : out.size - 400], atol=3e-3)


def test_wav_bytes_is_mono_pcm16() -> None:
    pcm = float_to_pcm16(_tone(1000, 22050, 0.1))
    blob = wav_bytes(pcm, 22050)
    with wave.open(io.BytesIO(blob)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 22050)
        assert w.readframes(w.getnframes()) == pcm
    samples, rate = read_audio(blob)
    assert rate == 22050
    assert float_to_pcm16(samples) == pcm


def test_write_wav_round_trips(tmp_path: Path) -> None:
    pcm = float_to_pcm16(_tone(700, 8000, 0.25))
    path = tmp_path / "out.wav"
    write_wav(path, pcm, 8000)
    assert load_pcm16(path, 8000) == pcm
    write_wav(str(path), b"", 8000)  # replaces the file; an empty WAV is valid to write
    with wave.open(str(path)) as w:
        assert w.getnframes() == 0


def test_wav_bytes_rejects_bad_input() -> None:
    with pytest.raises(AudioFormatError):
        wav_bytes(b"\x00", 16000)
    with pytest.raises(AudioFormatError):
        wav_bytes(b"\x00\x00", 0)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not audio at all, just some text that is long enough to look like a header",
        bytes(range(256)) * 8,
        b"RIFF\x24\x00\x00\x00WAVEfmt ",  # truncated header
    ],
    ids=["empty", "text", "noise", "truncated"],
)
def test_corrupt_data_raises_audio_format_error(data: bytes) -> None:
    with pytest.raises(AudioFormatError):
        read_audio(data)


def test_wav_without_samples_raises() -> None:
    with pytest.raises(AudioFormatError, match="no samples"):
        read_audio(wav_bytes(b"", 16000))


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(AudioFormatError, match="no such file"):
        read_audio(tmp_path / "missing.wav")
    with pytest.raises(AudioFormatError):
        load_pcm16(str(tmp_path), 16000)  # a directory is not an audio file
