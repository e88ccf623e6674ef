"""Audio codecs by name: the payload formats the wires carry, to and from our PCM16LE (pure, no I/O).

One place for what a payload in G.711 μ-law (PCMU), G.711 A-law (PCMA), linear PCM in network byte order (L16,
RFC 3551) or linear PCM in ours (little-endian) is, so that every wire that offers a choice of them (Telnyx's
``media_format``, the Realtime API's ``audio/pcmu``...) converts it the same way. Which names a wire accepts, and
at which rates, stays with the wire; this module changes only when a codec is added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from agent.audio import alaw, mulaw
from agent.errors import AudioFormatError

G711_RATE = 8000
"""The one sample rate G.711 is defined at."""


def _whole_samples(payload: bytes) -> bytes:
    if len(payload) % 2:
        raise AudioFormatError(f"16-bit audio needs an even number of bytes, got {len(payload)}")
    return payload


def _swap16(pcm: bytes) -> bytes:
    """PCM16 between little-endian (ours) and network byte order (L16)."""
    return bytes(np.frombuffer(_whole_samples(pcm), dtype="<i2").byteswap().tobytes())


@dataclass(frozen=True, slots=True)
class Codec:
    """One payload format. ``decode``: a payload → PCM16LE, raising ``AudioFormatError`` for one that is not
    whole samples; ``encode``: PCM16LE → a payload (``AudioFormatError`` for an odd byte count)."""

    name: str
    bytes_per_sample: int
    decode: Callable[[bytes], bytes]
    encode: Callable[[bytes], bytes]


PCMU = Codec("PCMU", 1, mulaw.decode, mulaw.encode)
PCMA = Codec("PCMA", 1, alaw.decode, alaw.encode)
L16 = Codec("L16", 2, _swap16, _swap16)
PCM16LE = Codec("PCM16LE", 2, _whole_samples, _whole_samples)

CODECS: Mapping[str, Codec] = {codec.name: codec for codec in (PCMU, PCMA, L16, PCM16LE)}
"""Every codec, by its name (the RTP payload names of RFC 3551, and ``PCM16LE`` for ours)."""
