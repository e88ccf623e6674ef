"""Reference-audio decoding, normalisation and validation, with files made at test time."""

from __future__ import annotations

import io
import struct
import wave

import numpy as np
import pytest

from agent.audio.pcm import pcm16_to_float
from agent.audio.reference import (
    MAX_UPLOAD_BYTES,
    REFERENCE_RATE,
    prepare_reference,
    sniff_format,
)
from agent.errors import RejectedAudio
from testing.reference_files import FORMATS, encode
from testing.speech import silence, speech_pcm16

SENTENCE = "The quick brown fox jumps over the lazy dog, and then it runs back home."
RATE = 22050


def clip(seconds_of_silence: float = 0.5) -> bytes:
    pad = silence(seconds_of_silence * 1000, RATE)
    return pad + speech_pcm16(SENTENCE, RATE) + pad


@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_decoded_trimmed_and_normalised(fmt: str, channels: int) -> None:
    ref = prepare_reference(encode(clip(), RATE, fmt, channels))
    speech_s = len(speech_pcm16(SENTENCE, RATE)) / 2 / RATE
    assert abs(ref.duration_s - speech_s) < 0.5  # the 0.5 s pads are trimmed (150 ms margin kept)
    assert ref.source_duration_s > ref.duration_s
    assert ref.warnings == ()
    with wave.open(io.BytesIO(ref.wav)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (REFERENCE_RATE, 1, 2)
        assert w.getnframes() == len(ref.pcm) // 2
    x = pcm16_to_float(ref.pcm)
    assert 0.5 < float(np.max(np.abs(x))) <= 0.9  # peak ceiling -1 dBFS
    assert len(ref.sha256) == 64


def test_format_is_decided_by_content_not_name() -> None:
    mp3 = encode(clip(), RATE, "mp3")
    assert sniff_format(mp3) == "mp3"  # whatever the upload was called (e.g. voice.wav)
    assert prepare_reference(mp3).source_format == "mp3"
    assert sniff_format(encode(clip(), RATE, "m4a")) == "mp4"
    assert sniff_format(encode(clip(), RATE, "aac")) == "aac"


def reject(data: bytes, code: str) -> str:
    with pytest.raises(RejectedAudio) as info:
        prepare_reference(data)
    assert info.value.code == code
    assert info.value.message
    return info.value.message


def test_silence_is_rejected() -> None:
    assert "silent" in reject(encode(silence(5000, RATE), RATE, "wav"), "silent")


def test_low_noise_only_is_rejected_as_silent() -> None:
    noise = (np.random.default_rng(1).standard_normal(RATE * 4) * 30).astype("<i2").tobytes()  # about -60 dBFS
    reject(encode(noise, RATE, "flac"), "silent")


def test_too_short_and_short_warning() -> None:
    short = speech_pcm16("Hi.", RATE)
    assert "at least" in reject(encode(silence(1000, RATE) + short + silence(1000, RATE), RATE, "wav"), "too_short")
    two_s = speech_pcm16("Hello there, my friend.", RATE)
    ref = prepare_reference(encode(two_s, RATE, "wav"))
    assert ref.duration_s < 3 and any("short" in w for w in ref.warnings)


def test_too_long_and_long_warning() -> None:
    speech = speech_pcm16(SENTENCE, RATE)
    repeats = int(32 * RATE * 2 / len(speech)) + 1
    assert "limit" in reject(encode(speech * repeats, RATE, "ogg"), "too_long")
    long_ok = speech * (int(24 * RATE * 2 / len(speech)) + 1)
    ref = prepare_reference(encode(long_ok[: 25 * RATE * 2], RATE, "flac"))
    assert 20 < ref.duration_s <= 30 and any("long" in w for w in ref.warnings)


def test_hours_of_audio_are_not_decoded_whole() -> None:
    # 10 minutes of low-rate silence is small as FLAC; its header's length is refused before decoding (a length
    # the header does not give is counted while decoding: test_reference_limits.py).
    data = encode(silence(600_000, 8000), 8000, "flac")
    assert len(data) < MAX_UPLOAD_BYTES
    reject(data, "too_long")


def test_clipped_recording_is_rejected() -> None:
    x = pcm16_to_float(clip()) * 8
    loud = (np.clip(x, -1, 1) * 32767).astype("<i2").tobytes()
    assert "clipped" in reject(encode(loud, RATE, "wav"), "clipped")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"RIFF",
        b"RIFF\x24\x00\x00\x00WAVEfmt ",
        b"hello, this is a text file and not audio at all" * 10,
        b"OggS" + bytes(200),
        b"fLaC" + bytes(100),
        b"\x00\x00\x00\x18ftypM4A " + bytes(200),
        b"ID3" + bytes(300),
    ],
    ids=["empty", "riff-only", "truncated-wav", "text", "ogg-garbage", "flac-garbage", "m4a-garbage", "id3-only"],
)
def test_corrupt_or_non_audio_is_bad_audio(data: bytes) -> None:
    reject(data, "bad_audio")


def _wav_header(channels: int, rate: int, bits: int, data_size: int, fmt_tag: int = 1) -> bytes:
    block = channels * bits // 8
    fmt = struct.pack("<HHIIHH", fmt_tag, channels, rate, rate * block, block, bits)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + data_size)
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + (struct.pack("<I", data_size))
    )


@pytest.mark.parametrize(
    ("channels", "rate", "bits"), [(0, 16000, 16), (1, 0, 16), (1, 16000, 0), (1, 16000, 7), (1, 16000, 64)]
)
def test_impossible_wav_headers_are_refused_with_a_reason(channels: int, rate: int, bits: int) -> None:
    # libsndfile reads some of these as 8-bit (all-zero bytes are then full-scale negative): any refusal
    # with a reason is right; what matters is that none is accepted or crashes.
    with pytest.raises(RejectedAudio) as info:
        prepare_reference(_wav_header(channels, rate, bits, 3200) + bytes(3200))
    assert info.value.code in ("bad_audio", "silent", "clipped", "too_short")


def test_data_chunk_larger_than_the_file_is_read_as_far_as_it_goes() -> None:
    pcm = speech_pcm16(SENTENCE, RATE)
    data = _wav_header(1, RATE, 16, 0x7FFFFFF0) + pcm  # claims 2 GB: nothing is pre-allocated from it
    ref = prepare_reference(data)
    assert ref.duration_s > 3


def test_upload_size_cap() -> None:
    assert "limit" in reject(b"RIFF" + bytes(MAX_UPLOAD_BYTES), "too_large")
