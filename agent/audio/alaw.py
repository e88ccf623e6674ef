"""G.711 A-law in numpy (no ``audioop``, which is deprecated in 3.11 and gone in 3.13).

``encode`` maps PCM16LE bytes to one A-law byte per sample, ``decode`` maps A-law bytes back to PCM16LE.
Both use 64 Ki / 256-entry lookup tables built once from the G.711 definition as in the ITU-T / Sun
reference ``linear2alaw`` / ``alaw2linear`` (13-bit samples, segment = highest set bit, even bits
inverted: XOR 0x55, sign bit set for positive values), so they are bit-exact with the ITU-T reference and
with ``audioop.lin2alaw`` / ``alaw2lin``. Pure and cheap; call them on the event loop.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agent.audio import g711


def _build_decode() -> npt.NDArray[np.int16]:
    code = np.arange(256, dtype=np.int32) ^ 0x55
    mantissa = (code & 0x0F) << 4
    segment = (code & 0x70) >> 4
    magnitude = np.where(segment == 0, mantissa + 8, (mantissa + 0x108) << np.maximum(segment - 1, 0))
    return np.where(code & 0x80, magnitude, -magnitude).astype(np.int16)


def _build_encode() -> npt.NDArray[np.uint8]:
    sample = np.arange(-32768, 32768, dtype=np.int32) >> 3  # the reference works on 13-bit samples
    mask = np.where(sample >= 0, 0xD5, 0x55)
    magnitude = np.where(sample >= 0, sample, -sample - 1)  # 0..4096
    segment = np.maximum(np.floor(np.log2(np.maximum(magnitude, 1))).astype(np.int32) - 4, 0)  # 0..8
    mantissa = np.where(segment < 2, magnitude >> 1, magnitude >> np.maximum(segment, 1)) & 0x0F
    code = np.where(segment >= 8, 0x7F, (np.minimum(segment, 7) << 4) | mantissa)
    codes: npt.NDArray[np.uint8] = (code ^ mask).astype(np.uint8)
    return codes


_DECODE = _build_decode()
_ENCODE = _build_encode()  # indexed by sample + 32768


def encode(pcm: bytes) -> bytes:
    """PCM16LE mono → A-law, one byte per sample. Raises ``AudioFormatError`` for an odd byte count."""
    return g711.encode(_ENCODE, pcm)


def decode(alaw: bytes) -> bytes:
    """A-law bytes → PCM16LE mono (two bytes per input byte)."""
    return g711.decode(_DECODE, alaw)
