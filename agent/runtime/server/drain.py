"""Graceful drain: the server's live calls, told to finish and waited for (``RunningServer.drain``).

On SIGTERM the server stops taking calls (``agent.runtime.server.admission``: 503 ``draining``) and every live
connection gets ``drain(finish_within_s)``: its session finishes the reply in progress within that time,
says goodbye and closes 1001 (``agent.core.events.Drain``). Of ``drain_s`` the last ``GOODBYE_S`` (at most
half of it) are kept for the goodbye and the close; calls still open at ``drain_s`` are closed 1001
(``close_all``) as the listener closes.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

GOODBYE_S = 4.0
"""Time kept at the end of a drain for the goodbye phrase and the close handshake."""


def finish_within(drain_s: float) -> float:
    """Of a drain of ``drain_s`` seconds, the time the reply in progress gets (the rest is for the goodbye)."""
    return max(0.0, drain_s - min(GOODBYE_S, drain_s / 2))


class Drainable(Protocol):
    def drain(self, finish_within_s: float) -> None: ...

    def close_now(self) -> None: ...


class LiveCalls:
    """The open connections of a server; ``drain`` tells each to finish and waits until all have closed."""

    def __init__(self) -> None:
        self._calls: set[Drainable] = set()
        self._none = asyncio.Event()
        self._none.set()
        self._finish_by: float | None = None  # time.monotonic() by which replies must be finished

    @property
    def draining(self) -> bool:
        return self._finish_by is not None

    def __len__(self) -> int:
        return len(self._calls)

    def add(self, call: Drainable) -> None:
        """A connection opens; one admitted just before the drain began is told at once."""
        self._calls.add(call)
        self._none.clear()
        if self._finish_by is not None:
            call.drain(max(0.0, self._finish_by - time.monotonic()))

    def close_all(self) -> None:
        """Close every call at once, 1001 (the end of a drain, a second signal, or no drain at all)."""
        for call in list(self._calls):
            call.close_now()

    def discard(self, call: Drainable) -> None:
        self._calls.discard(call)
        if not self._calls:
            self._none.set()

    async def drain(self, drain_s: float) -> bool:
        """Tell every call to finish; ``True`` when all have closed within ``drain_s`` seconds."""
        if self._finish_by is None:
            finish_s = finish_within(drain_s)
            self._finish_by = time.monotonic() + finish_s
            for call in list(self._calls):
                call.drain(finish_s)
        try:
            await asyncio.wait_for(self._none.wait(), drain_s)
        except TimeoutError:
            return False
        return True
