"""Fault policy for remote speech, pure: a per-endpoint circuit breaker and a per-turn retry budget.

No I/O, no event loop, no clock of its own (the breaker takes one), so both are unit-tested synchronously.

``CircuitBreaker``: **closed** lets every request through and counts consecutive failures; ``failures`` of
them in a row **open** it. While open, ``allow()`` says no at once (the caller speaks in its fallback voice
instead of waiting for timeouts). ``reset_s`` after opening it turns **half-open** and lets exactly one
request through, the probe: its success closes the breaker, its failure opens it again for another
``reset_s``; a probe that ends without a verdict (cancelled) frees the slot for the next request.

``RetryBudget``: the retries one reply may spend, all its sentences together, so a reply on a failing
endpoint does not multiply ``max_attempts`` by its number of sentences.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass


class BreakerState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"

    @property
    def level(self) -> int:
        """0 closed, 1 half-open, 2 open (the value exported as a gauge)."""
        return {BreakerState.CLOSED: 0, BreakerState.HALF_OPEN: 1, BreakerState.OPEN: 2}[self]


@dataclass(frozen=True, slots=True)
class BreakerStatus:
    """A snapshot for ``/metrics`` and ``/healthz``."""

    name: str
    state: BreakerState
    consecutive_failures: int
    opened_total: int
    recovered_total: int
    retry_after_s: float | None
    """Seconds until the half-open probe is allowed (open state only)."""


class CircuitBreaker:
    """Closed → open after ``failures`` consecutive failures → half-open after ``reset_s`` → one probe.

    Per request attempt: ``allow()``; if it said yes, exactly one of ``success()``, ``failure()`` or
    ``abandon()`` when the attempt ends. ``clock`` returns seconds (monotonic). ``recovered()`` counts faults
    the caller recovered from without an error (exported with the breaker, per endpoint).
    """

    def __init__(self, name: str, failures: int, reset_s: float, clock: Callable[[], float]) -> None:
        if failures < 1:
            raise ValueError("failures must be at least 1")
        if reset_s <= 0:
            raise ValueError("reset_s must be positive")
        self.name = name
        self._threshold = failures
        self._reset_s = reset_s
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probing = False
        self._opened_total = 0
        self._recovered_total = 0

    @property
    def state(self) -> BreakerState:
        """The state now (an open breaker whose reset time has passed reads as half-open)."""
        if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self._reset_s:
            return BreakerState.HALF_OPEN
        return self._state

    def allow(self) -> bool:
        """Whether a request may go now. In half-open state the first caller gets the probe."""
        state = self.state
        if state is BreakerState.CLOSED:
            return True
        if state is BreakerState.HALF_OPEN and not self._probing:
            self._state = BreakerState.HALF_OPEN
            self._probing = True
            return True
        return False

    def success(self) -> None:
        """The endpoint answered: close (a successful probe ends the outage)."""
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._probing = False

    def failure(self) -> None:
        """The endpoint failed or timed out. Opens after ``failures`` in a row, or at once on a failed probe."""
        self._failures += 1
        if self._state is BreakerState.HALF_OPEN or (
            self._state is BreakerState.CLOSED and self._failures >= self._threshold
        ):
            self._open()
        self._probing = False

    def abandon(self) -> None:
        """An allowed attempt ended without a verdict (cancelled): a waiting probe slot is freed."""
        self._probing = False

    def recovered(self) -> None:
        """Count a fault the caller recovered from (for the metrics; it does not change the state)."""
        self._recovered_total += 1

    def status(self) -> BreakerStatus:
        state = self.state
        retry_after = None
        if state is BreakerState.OPEN:
            retry_after = max(0.0, self._opened_at + self._reset_s - self._clock())
        return BreakerStatus(
            name=self.name,
            state=state,
            consecutive_failures=self._failures,
            opened_total=self._opened_total,
            recovered_total=self._recovered_total,
            retry_after_s=retry_after,
        )

    def _open(self) -> None:
        self._state = BreakerState.OPEN
        self._opened_at = self._clock()
        self._opened_total += 1


class RetryBudget:
    """Retries left for one reply (every sentence of it together). ``take()`` spends one if any is left."""

    def __init__(self, retries: int) -> None:
        if retries < 0:
            raise ValueError("retries must not be negative")
        self._left = retries
        self.spent = 0

    @property
    def left(self) -> int:
        return self._left

    def take(self) -> bool:
        if self._left <= 0:
            return False
        self._left -= 1
        self.spent += 1
        return True
