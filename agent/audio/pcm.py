"""PCM16LE helpers: conversion to and from float32, level metering, fixed-size framing.

Every function here works on mono 16-bit little-endian PCM ("PCM16") or on float32 arrays in [-1, 1).
They are pure and cheap; call them freely on the event loop.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from agent.errors import AudioFormatError

FloatArray = npt.NDArray[np.float32]

_PCM16_SCALE = 32768.0
_SILENCE_DBFS = -120.0
_PCM16 = np.dtype("<i2")


def pcm16_to_float(data: bytes) -> FloatArray:
    """Decode PCM16LE bytes to a float32 array in [-1, 1).

    Raises ``AudioFormatError`` if ``data`` has an odd number of bytes. Empty input gives an empty array.
    """
    if len(data) % 2:
        raise AudioFormatError(f"PCM16 data must have an even number of bytes, got {len(data)}")
    samples = np.frombuffer(data, dtype=_PCM16)
    return samples.astype(np.float32) / np.float32(_PCM16_SCALE)


def float_to_pcm16(x: npt.ArrayLike) -> bytes:
    """Encode float samples (nominally [-1, 1]) as PCM16LE bytes.

    Values are rounded to the nearest step and clipped to the int16 range; NaN becomes 0 and ±inf become
    full scale, so a misbehaving model can never produce garbage bytes. ``pcm16_to_float`` followed by this
    function is lossless.
    """
    arr = np.nan_to_num(np.asarray(x, dtype=np.float32), nan=0.0, posinf=1.0, neginf=-1.0)
    scaled = np.rint(arr.astype(np.float64) * _PCM16_SCALE)
    return np.clip(scaled, -32768, 32767).astype(_PCM16).tobytes()


def rms_dbfs(pcm: bytes) -> float:
    """Root-mean-square level of PCM16LE audio in dBFS (a full-scale square wave is 0 dBFS).

    Digital silence and empty input return -120.0 (never ``-inf``), so the value is safe to log or compare.
    Raises ``AudioFormatError`` for an odd byte count.
    """
    x = pcm16_to_float(pcm)
    if x.size == 0:
        return _SILENCE_DBFS
    rms = math.sqrt(float(np.mean(np.square(x, dtype=np.float64))))
    if rms <= 0.0:
        return _SILENCE_DBFS
    return max(_SILENCE_DBFS, 20.0 * math.log10(rms))


def frame_bytes_for(rate: int, ms: int) -> int:
    """Size in bytes of a PCM16 mono frame of ``ms`` milliseconds at ``rate`` Hz.

    Raises ``AudioFormatError`` if the rate or duration is not positive or the frame is not a whole number
    of samples (for example 10 ms at 22050 Hz).
    """
    if rate <= 0 or ms <= 0:
        raise AudioFormatError(f"rate and frame length must be positive, got {rate} Hz, {ms} ms")
    samples, remainder = divmod(rate * ms, 1000)
    if remainder:
        raise AudioFormatError(f"{ms} ms at {rate} Hz is not a whole number of samples")
    return samples * 2


class Framer:
    """Cuts a byte stream into fixed-size frames.

    ``push`` appends bytes and returns every whole frame now available, in order; the remainder is kept for
    the next call (``pending`` bytes). ``reset`` drops the remainder, e.g. after a barge-in flush.
    """

    __slots__ = ("_buf", "_frame_bytes")

    def __init__(self, frame_bytes: int) -> None:
        if frame_bytes <= 0:
            raise ValueError(f"frame_bytes must be positive, got {frame_bytes}")
        self._frame_bytes = frame_bytes
        self._buf = bytearray()

    @property
    def frame_bytes(self) -> int:
        """The size of every frame returned by ``push``."""
        return self._frame_bytes

    @property
    def pending(self) -> int:
        """Bytes held back because they do not yet fill a frame (always < ``frame_bytes``)."""
        return len(self._buf)

    def push(self, data: bytes) -> list[bytes]:
        """Append ``data`` and return the whole frames now available (possibly none)."""
        size = self._frame_bytes
        if not self._buf and len(data) == size:
            return [bytes(data)]  # the usual case: the client's frames are the detector's (no copy for bytes)
        self._buf += data
        count = len(self._buf) // size
        if count == 0:
            return []
        view = bytes(self._buf[: count * size])
        del self._buf[: count * size]
        return [view[i * size : (i + 1) * size] for i in range(count)]

    def reset(self) -> None:
        """Drop any pending partial frame."""
        self._buf.clear()
