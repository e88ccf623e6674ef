"""Framing and pacing of caller audio: fixed 20 ms PCM16 frames sent against a monotonic clock."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable

import numpy as np

FRAME_MS = 20
VOICED_DBFS = -40.0
"""A frame whose RMS is above this level (dB relative to full scale) counts as non-silent input."""


def frame_bytes(rate: int, frame_ms: int = FRAME_MS) -> int:
    """Bytes in one PCM16 mono frame of ``frame_ms`` at ``rate``."""
    return 2 * (rate * frame_ms // 1000)


def split_frames(pcm: bytes, rate: int, frame_ms: int = FRAME_MS) -> list[bytes]:
    """Cut PCM16LE mono into frames of exactly ``frame_ms``; the last one is padded with silence.

    Raises ``ValueError`` for an odd byte length (not whole 16-bit samples).
    """
    if len(pcm) % 2:
        raise ValueError("PCM16 data must have an even number of bytes")
    size = frame_bytes(rate, frame_ms)
    frames = [pcm[i : i + size] for i in range(0, len(pcm), size)]
    if frames and len(frames[-1]) < size:
        frames[-1] = frames[-1] + bytes(size - len(frames[-1]))
    return frames


def frame_dbfs(frame: bytes) -> float:
    """RMS level of a PCM16 frame in dB relative to full scale (``-inf`` for digital silence)."""
    samples = np.frombuffer(frame, dtype="<i2").astype(np.float64)
    if samples.size == 0:
        return -math.inf
    rms = math.sqrt(float(np.mean(samples * samples)))
    return 20 * math.log10(rms / 32768.0) if rms > 0 else -math.inf


class FramePacer:
    """Releases frames on a fixed schedule against a monotonic clock, so sleep overshoot never accumulates.

    Frame ``n`` (counted from the last ``set_interval``) is due at ``start + n * interval``. ``wait`` sleeps
    until the next frame is due (or not at all if it is already late) and returns the clock reading after
    the wait. An interval of 0 never sleeps but still yields to the event loop. ``clock`` and ``sleep`` are
    injectable for tests.
    """

    def __init__(
        self,
        interval_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._interval = interval_s
        self._start: float | None = None
        self._count = 0

    @property
    def interval_s(self) -> float:
        return self._interval

    def next_due(self) -> float | None:
        """When the next frame is due (``None`` before the first ``wait``)."""
        return None if self._start is None else self._start + self._count * self._interval

    def set_interval(self, interval_s: float) -> None:
        """Change the pace from the next frame on, keeping that frame's due time."""
        due = self.next_due()
        self._interval = interval_s
        self._count = 0
        self._start = due

    async def wait(self) -> float:
        now = self._clock()
        if self._start is None:
            self._start = now
        due = self._start + self._count * self._interval
        self._count += 1
        if due > now:
            await self._sleep(due - now)
            return self._clock()
        await self._sleep(0)
        return now
