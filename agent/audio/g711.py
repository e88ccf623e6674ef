"""G.711 by table lookup, shared by the μ-law and A-law codecs (``agent.audio.mulaw``, ``agent.audio.alaw``):
each builds a 256-entry decode table and a 64 Ki-entry encode table (indexed by sample + 32768) once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agent.errors import AudioFormatError


def encode(table: npt.NDArray[np.uint8], pcm: bytes) -> bytes:
    """PCM16LE mono → one code byte per sample. Raises ``AudioFormatError`` for an odd byte count."""
    if len(pcm) % 2:
        raise AudioFormatError(f"PCM16 data must have an even number of bytes, got {len(pcm)}")
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.int32) + 32768
    return bytes(table[samples].tobytes())


def decode(table: npt.NDArray[np.int16], codes: bytes) -> bytes:
    """Code bytes → PCM16LE mono (two bytes per input byte)."""
    return bytes(table[np.frombuffer(codes, dtype=np.uint8)].astype("<i2").tobytes())
