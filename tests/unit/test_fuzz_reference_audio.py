"""Fuzzing the reference-audio decoder: random bytes and damaged real files (WAV, FLAC, OGG, MP3, M4A, AAC,
made at test time) give a ``ReferenceAudio`` or an ``AudioFormatError`` (``RejectedAudio``), never another
exception, and never a huge allocation (odd sample rates in a header once built multi-gigabyte filters)."""

from __future__ import annotations

import contextlib
import functools
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.audio.reference import ReferenceAudio, prepare_reference
from agent.audio.wav import load_pcm16
from agent.errors import AudioFormatError
from testing.reference_files import FORMATS, encode
from tests.fuzzing import budget

RATE = 16000
MAGIC_PREFIXES = [
    b"RIFF\x24\x00\x00\x00WAVEfmt ",
    b"RF64\xff\xff\xff\xffWAVE",
    b"fLaC",
    b"OggS\x00\x02",
    b"\x00\x00\x00\x20ftypM4A ",
    b"ID3\x04\x00",
    b"\xff\xfb",
    b"\xff\xf1",
]


@functools.cache
def sample_file(fmt: str) -> bytes:
    """1.5 s of a gliding tone with a little noise: speech-like enough to be accepted, made at test time."""
    t = np.arange(int(RATE * 1.5)) / RATE
    x = 0.4 * np.sin(2 * np.pi * (180 + 60 * t) * t) + 0.01 * np.random.default_rng(1).standard_normal(t.size)
    pcm = (x * 32767).astype("<i2").tobytes()
    return encode(pcm, RATE, fmt)


def answer(data: bytes) -> ReferenceAudio | AudioFormatError:
    try:
        return prepare_reference(data)
    except AudioFormatError as exc:
        code = getattr(exc, "code", "bad_audio")
        assert code in {"too_large", "bad_audio", "too_short", "too_long", "silent", "clipped"}, code
        return exc


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_sample_files_are_accepted(fmt: str) -> None:
    assert isinstance(answer(sample_file(fmt)), ReferenceAudio)


@given(st.binary(max_size=2000))
@budget(200)
def test_random_bytes(data: bytes) -> None:
    answer(data)


@given(st.sampled_from(MAGIC_PREFIXES), st.binary(max_size=2000))
@budget(300)
def test_random_bytes_behind_a_real_magic_number(magic: bytes, rest: bytes) -> None:
    answer(magic + rest)


@given(st.sampled_from(FORMATS), st.data())
@budget(400)
def test_damaged_real_files(fmt: str, data: st.DataObject) -> None:
    original = bytearray(sample_file(fmt))
    header = min(len(original), 128)
    for _ in range(data.draw(st.integers(min_value=1, max_value=8), label="edits")):
        where = data.draw(st.integers(min_value=0, max_value=header - 1) | st.integers(0, len(original) - 1))
        original[where] = data.draw(st.integers(min_value=0, max_value=255))
    cut = data.draw(st.none() | st.integers(min_value=0, max_value=len(original)), label="truncate at")
    answer(bytes(original[:cut]))


WAV_FIELDS = {
    "channels": (22, "<H"),
    "rate": (24, "<I"),
    "byte_rate": (28, "<I"),
    "align": (32, "<H"),
    "bits": (34, "<H"),
}


@given(st.sampled_from(sorted(WAV_FIELDS)), st.integers(min_value=0, max_value=2**32 - 1))
@budget(300)
def test_any_value_in_a_wav_header_field(field: str, value: int) -> None:
    offset, fmt = WAV_FIELDS[field]
    data = bytearray(sample_file("wav"))
    struct.pack_into(fmt, data, offset, value % (1 << (8 * struct.calcsize(fmt))))
    answer(bytes(data))


@pytest.mark.parametrize("rate", [1, 7919, 44101, 48001, 383999, 384001, 2**31 - 1])
def test_odd_sample_rates_in_a_wav_header(rate: int) -> None:
    data = bytearray(sample_file("wav"))
    struct.pack_into("<II", data, 24, rate, rate * 2)
    tracemalloc.start()
    try:
        answer(bytes(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 1024 * 1024  # numpy reports its buffers to tracemalloc


@given(st.sampled_from(["wav", "flac", "ogg"]), st.data())
@budget(200)
def test_load_pcm16_on_damaged_files(fmt: str, data: st.DataObject) -> None:
    """``wav.load_pcm16`` (the ``voices add`` CLI path) fails only with ``AudioFormatError`` too."""
    original = bytearray(sample_file(fmt))
    for _ in range(data.draw(st.integers(min_value=1, max_value=8), label="edits")):
        original[data.draw(st.integers(min_value=0, max_value=min(len(original), 128) - 1))] = data.draw(
            st.integers(min_value=0, max_value=255)
        )
    cut = data.draw(st.none() | st.integers(min_value=0, max_value=len(original)), label="truncate at")
    with contextlib.suppress(AudioFormatError):
        load_pcm16(bytes(original[:cut]), 24000)
