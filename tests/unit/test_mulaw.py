"""μ-law codec against tables built here from the G.711 algorithm (independent of the implementation)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from agent.audio import mulaw
from agent.errors import AudioFormatError

_SEG_END = (0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF, 0x3FFF, 0x7FFF)


def _g711_linear2ulaw(sample: int) -> int:
    """The ITU-T G.711 / Sun reference ``linear2ulaw``, scalar and loop-based, on a 16-bit sample."""
    pcm = sample >> 2  # the reference works on 14-bit magnitudes
    if pcm < 0:
        pcm, mask = -pcm, 0x7F
    else:
        mask = 0xFF
    pcm = min(pcm, 8159) + (0x84 >> 2)
    seg = 8
    for i, end in enumerate(_SEG_END):
        if pcm <= end >> 2 and i < 8:
            seg = i
            break
    if seg >= 8:
        return 0x7F ^ mask
    uval = (seg << 4) | ((pcm >> (seg + 1)) & 0x0F)
    return uval ^ mask


def _g711_ulaw2linear(code: int) -> int:
    u = ~code & 0xFF
    t = ((u & 0x0F) << 3) + 0x84
    t <<= (u & 0x70) >> 4
    return (0x84 - t) if u & 0x80 else (t - 0x84)


def test_decode_is_bit_exact_for_all_256_codes() -> None:
    expected = struct.pack("<256h", *(_g711_ulaw2linear(c) for c in range(256)))
    assert mulaw.decode(bytes(range(256))) == expected


def test_encode_is_bit_exact_for_all_65536_samples() -> None:
    samples = list(range(-32768, 32768))
    expected = bytes(_g711_linear2ulaw(s) for s in samples)
    assert mulaw.encode(struct.pack(f"<{len(samples)}h", *samples)) == expected


def test_round_trip_is_stable_and_close() -> None:
    codes = bytes(range(256))
    assert mulaw.encode(mulaw.decode(codes)) == bytes(c if c != 0x7F else 0xFF for c in codes)  # ±0 collapse
    rng = np.random.default_rng(1)
    x = (np.sin(np.arange(8000) * 2 * np.pi * 440 / 8000) * 12000 + rng.normal(0, 50, 8000)).astype("<i2")
    y = np.frombuffer(mulaw.decode(mulaw.encode(x.tobytes())), dtype="<i2").astype(np.float64)
    snr = 10 * np.log10(np.sum(x.astype(np.float64) ** 2) / np.sum((x - y) ** 2))
    assert snr > 35


def test_sizes_and_errors() -> None:
    assert mulaw.encode(b"") == b"" and mulaw.decode(b"") == b""
    assert len(mulaw.encode(bytes(320))) == 160 and len(mulaw.decode(bytes(160))) == 320
    with pytest.raises(AudioFormatError):
        mulaw.encode(b"\x00")
