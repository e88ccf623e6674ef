"""A-law codec against tables built here from the G.711 reference algorithm (independent of the
implementation), and against ``audioop`` where this Python still has it."""

from __future__ import annotations

import importlib
import struct
import warnings
from types import ModuleType

import numpy as np
import pytest

from agent.audio import alaw
from agent.errors import AudioFormatError

_SEG_AEND = (0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF)
ALL_SAMPLES = list(range(-32768, 32768))


def _g711_linear2alaw(sample: int) -> int:
    """The ITU-T G.711 / Sun reference ``linear2alaw``, scalar and loop-based, on a 16-bit sample."""
    pcm = sample >> 3  # the reference works on 13-bit samples
    if pcm >= 0:
        mask = 0xD5
    else:
        mask, pcm = 0x55, -pcm - 1
    seg = next((i for i, end in enumerate(_SEG_AEND) if pcm <= end), 8)
    if seg >= 8:
        return 0x7F ^ mask
    aval = seg << 4
    aval |= (pcm >> 1) & 0x0F if seg < 2 else (pcm >> seg) & 0x0F
    return aval ^ mask


def _g711_alaw2linear(code: int) -> int:
    a = code ^ 0x55
    t = (a & 0x0F) << 4
    seg = (a & 0x70) >> 4
    if seg == 0:
        t += 8
    elif seg == 1:
        t += 0x108
    else:
        t = (t + 0x108) << (seg - 1)
    return t if a & 0x80 else -t


def _audioop() -> ModuleType | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return importlib.import_module("audioop")
        except ImportError:  # Python 3.13+
            return None


def test_decode_is_bit_exact_for_all_256_codes() -> None:
    expected = struct.pack("<256h", *(_g711_alaw2linear(c) for c in range(256)))
    assert alaw.decode(bytes(range(256))) == expected


def test_encode_is_bit_exact_for_all_65536_samples() -> None:
    expected = bytes(_g711_linear2alaw(s) for s in ALL_SAMPLES)
    assert alaw.encode(struct.pack(f"<{len(ALL_SAMPLES)}h", *ALL_SAMPLES)) == expected


def test_matches_audioop_where_available() -> None:
    audioop = _audioop()
    if audioop is None:
        pytest.skip("audioop is gone from this Python")
    pcm = struct.pack(f"<{len(ALL_SAMPLES)}h", *ALL_SAMPLES)
    assert alaw.encode(pcm) == audioop.lin2alaw(pcm, 2)
    assert alaw.decode(bytes(range(256))) == audioop.alaw2lin(bytes(range(256)), 2)


def test_known_codes() -> None:
    # Silence encodes to 0xD5 (positive zero) and 0x55 (negative), the full scale to 0xAA / 0x2A.
    assert alaw.encode(struct.pack("<4h", 0, -1, 32767, -32768)) == bytes([0xD5, 0x55, 0xAA, 0x2A])


def test_round_trip_is_stable_and_close() -> None:
    codes = bytes(range(256))
    assert alaw.encode(alaw.decode(codes)) == codes  # A-law has no duplicate zero
    rng = np.random.default_rng(1)
    x = (np.sin(np.arange(8000) * 2 * np.pi * 440 / 8000) * 12000 + rng.normal(0, 50, 8000)).astype("<i2")
    y = np.frombuffer(alaw.decode(alaw.encode(x.tobytes())), dtype="<i2").astype(np.float64)
    snr = 10 * np.log10(np.sum(x.astype(np.float64) ** 2) / np.sum((x - y) ** 2))
    assert snr > 35


def test_odd_byte_count_is_refused() -> None:
    with pytest.raises(AudioFormatError):
        alaw.encode(b"\x00\x01\x02")
