"""Asking a limit's counter: the in-process one, or a shared one behind ``SharedLimits``, failing open or closed.

Its one reason to change is how the front door and enrollment ask a counter: the keys, the choice when it cannot
answer (``agent.security.limit_rules.FAIL_OPEN``), the log line when it goes down or comes back, and the figure
counted per failed check (``on_error(limit, outcome)``, the ``voice_agent_shared_limit_errors_total`` counter).
The time bound of a check is the adapter's (``AGENT_LIMITS__CHECK_TIMEOUT_MS``): a shared adapter raises
``LimitsUnavailable`` past it. After three failed checks in a row the counter is down (one WARNING): then one check
a second tries it and the others fail at once (``agent.security.limit_rules.Outage``), so a Redis that hangs costs
one bounded wait a second, not one per call.

``LocalLimits`` is the in-process adapter (the default: no vendor, no I/O; the clock is a parameter), so the
voices CLI and the tests get today's counting without the composition.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal, Self

from agent.errors import LimitsUnavailable
from agent.ports import Hold, Rate, SharedLimits
from agent.security.limit_rules import FAIL_OPEN, Buckets, Holds, Limit, Outage, key

log = logging.getLogger(__name__)

Outcome = Literal["failed_open", "failed_closed"]
UNCHECKED: Literal["unchecked"] = "unchecked"
"""What a fail-open limit answers while its counter is down: taken, but not counted."""


class LocalLimits:
    """``SharedLimits`` in this process (per replica). Never raises ``LimitsUnavailable``. Use it from one loop."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.buckets = Buckets()
        self.holds = Holds()

    async def take(self, key: str, rate: Rate, cost: int = 1) -> float:
        return self.buckets.take(key, rate, self.clock(), cost)

    async def hold(self, key: str, bound: int, ttl_s: float) -> Hold | None:
        token = self.holds.hold(key, bound, self.clock(), ttl_s)
        return None if token is None else Hold(key, str(token))

    async def held(self, key: str) -> int:
        return self.holds.held(key, self.clock())

    async def release(self, hold: Hold) -> None:
        self.holds.release(hold.key, int(hold.token))


def _not_counted(limit: str, outcome: str) -> None:
    pass


class Limiter:
    """One server's counters. ``shared``: they are every replica's (a Redis), so the front door asks them about
    sockets opening too (in-process, ``agent.runtime.server.occupancy`` counts those already).

    The methods raise ``LimitsUnavailable`` for a fail-closed limit whose counter cannot answer; a fail-open one
    answers ``UNCHECKED`` then."""

    def __init__(
        self,
        counters: SharedLimits | None = None,
        *,
        prefix: str = "voice-agent",
        shared: bool = False,
        close: Callable[[], Awaitable[None]] | None = None,
        warm: Callable[[], Awaitable[None]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``close``: what ``async with`` calls on leaving (the shared adapter's client); ``warm``: what it starts
        on entering, in the background (connecting, loading scripts: longer than a check may wait). ``clock``:
        when, while the counter is down, the next check may try it (``Outage``)."""
        self.counters: SharedLimits = counters if counters is not None else LocalLimits()
        self.prefix = prefix
        self.shared = shared
        self.on_error: Callable[[str, str], None] = _not_counted
        self._outage = Outage()
        self._clock = clock
        self._close = close
        self._warm = warm
        self._warming: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        if self._warm is not None:
            self._warming = asyncio.create_task(self._warm_up(self._warm), name="warm-limits")
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._warming is not None:
            self._warming.cancel()
            await asyncio.gather(self._warming, return_exceptions=True)
        if self._close is not None:
            await self._close()

    async def _warm_up(self, warm: Callable[[], Awaitable[None]]) -> None:
        try:
            await warm()
        except LimitsUnavailable as exc:
            if self._outage.failed(self._clock()):
                log.warning("shared limits unavailable at start (%s): checks fail open or closed until it answers", exc)

    async def take(self, limit: Limit, subject: str, rate: Rate, cost: int = 1) -> float | Literal["unchecked"]:
        """``SharedLimits.take`` on ``limit``'s bucket of ``subject``."""
        try:
            self._try()
            wait_s = await self.counters.take(key(self.prefix, limit, subject), rate, cost)
        except LimitsUnavailable as exc:
            return self._failed(limit, exc)
        self._answered()
        return wait_s

    async def hold(self, limit: Limit, subject: str, bound: int, ttl_s: float) -> Hold | Literal["unchecked"] | None:
        """``SharedLimits.hold`` on ``limit``'s places of ``subject``."""
        try:
            self._try()
            place = await self.counters.hold(key(self.prefix, limit, subject), bound, ttl_s)
        except LimitsUnavailable as exc:
            return self._failed(limit, exc)
        self._answered()
        return place

    async def held(self, limit: Limit, subject: str) -> int | Literal["unchecked"]:
        """``SharedLimits.held`` of ``limit``'s places of ``subject``."""
        try:
            self._try()
            count = await self.counters.held(key(self.prefix, limit, subject))
        except LimitsUnavailable as exc:
            return self._failed(limit, exc)
        self._answered()
        return count

    async def release(self, hold: Hold) -> None:
        """Give a place back; a counter that cannot answer lets it lapse at its deadline instead."""
        try:
            await self.counters.release(hold)  # asked even while down: it waits for nobody
        except LimitsUnavailable:
            log.debug("a place under %s lapses at its deadline: the counter did not answer", hold.key)
            return
        self._answered()

    def _try(self) -> None:
        """Raise ``LimitsUnavailable`` without asking the counter while it is down and not due for a try."""
        if not self._outage.may_try(self._clock()):
            raise LimitsUnavailable("limits", "down; not asked again before its next try")

    def _failed(self, limit: Limit, exc: LimitsUnavailable) -> Literal["unchecked"]:
        opened = FAIL_OPEN[limit]
        self.on_error(limit, "failed_open" if opened else "failed_closed")
        if self._outage.failed(self._clock()):
            log.warning(
                "shared limits unavailable (%s): sockets opening are taken uncounted across replicas, "
                "enrollments are refused with limits_unavailable until it answers",
                exc.detail or exc,
            )
        if opened:
            return UNCHECKED
        raise exc

    def _answered(self) -> None:
        if self._outage.answered():
            log.warning("shared limits answer again: every limit is counted across replicas")
