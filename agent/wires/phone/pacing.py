"""Real-time pacing of reply audio for callers whose far end plays what it is sent as it arrives (phone
gateways): ``Pacer`` holds each frame until the far end's playout buffer is at most a small lead ahead of
real time, so a ``clear`` (or simply no more frames) has little to throw away."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class Pacer:
    """Holds each frame until the caller's playout buffer is at most ``lead_s`` ahead of real time."""

    def __init__(
        self,
        lead_s: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._lead = lead_s
        self._clock = clock
        self._sleep = sleep
        self._queued_until = 0.0  # clock time at which the audio sent so far has played out

    async def wait(self, duration_s: float) -> None:
        now = self._clock()
        ahead = self._queued_until - now
        if ahead > self._lead:
            await self._sleep(ahead - self._lead)
            now = self._clock()
        self._queued_until = max(self._queued_until, now) + duration_s

    def reset(self) -> None:
        """The caller's buffer was cleared."""
        self._queued_until = 0.0
