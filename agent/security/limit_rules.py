"""The per-tenant and per-address limits, what each does while its counter cannot answer, and the in-process
counting (pure: the time is a parameter).

Its one reason to change is a rule of a limit: which limits there are, how a token bucket or a count of places
decides, what a refusal says. Where they are counted (here, or in a Redis every replica shares) is the
``SharedLimits`` port's (``agent.ports``); the Redis script mirrors ``Buckets.take`` and ``Holds.hold``.

The limits, and their choice when the counter is down or slower than its bound (``FAIL_OPEN``):

- ``enroll_rate``: a tenant's enrollments, a token bucket (``voices.enroll_burst``, ``voices.enroll_per_hour``);
  **closed**: an enrollment spends (decoding, recognition), so none starts uncounted.
- ``voice_quota``: a tenant's voices being enrolled, counted with the stored ones against
  ``voices.max_voices_per_tenant``; **closed**: a quota is a promise about storage.
- ``opening_tenant``: a tenant's credentialed sockets still opening (``server.max_opening_per_tenant``);
  **open**: callers are never refused because the counter is down (this process's own count still bounds them).
- ``opening_peer``: an address's anonymous sockets still opening (``server.max_opening_per_peer``); **open**, as
  above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from agent.errors import EnrollmentRejected
from agent.ports import Rate

Limit = Literal["enroll_rate", "voice_quota", "opening_tenant", "opening_peer"]
LIMITS: tuple[Limit, ...] = ("enroll_rate", "voice_quota", "opening_tenant", "opening_peer")
FAIL_OPEN: dict[Limit, bool] = {
    "enroll_rate": False,
    "voice_quota": False,
    "opening_tenant": True,
    "opening_peer": True,
}
"""Per limit: ``True`` takes what is asked while the counter cannot answer, ``False`` refuses it."""

UNAVAILABLE_CODE = "limits_unavailable"


def key(prefix: str, limit: Limit, subject: str) -> str:
    """The counter's name: ``<prefix>:<limit>:<tenant or address>``."""
    return f"{prefix}:{limit}:{subject}"


def unavailable(limit: Limit) -> EnrollmentRejected:
    """What a caller is told when a fail-closed limit cannot be counted now."""
    what = "enrollment rate" if limit == "enroll_rate" else "voice quota"
    return EnrollmentRejected(
        UNAVAILABLE_CODE,
        f"the shared counter of this tenant's {what} cannot be reached; nothing was enrolled, try again shortly",
        retry_after_s=5,
    )


def quota_exceeded(held: int, running: int, max_voices: int) -> EnrollmentRejected:
    """``held`` voices (``running`` of them being enrolled) reach ``max_voices``."""
    under_way = f" ({running} of them being enrolled)" if running else ""
    return EnrollmentRejected(
        "quota_exceeded",
        f"this tenant has {held} voices{under_way}, the most allowed ({max_voices}); "
        "remove one before enrolling another",
    )


def rate_limited(wait_s: float, rate: Rate) -> EnrollmentRejected:
    """The bucket of ``rate`` has a token again in ``wait_s`` seconds."""
    retry = max(1, math.ceil(wait_s))
    return EnrollmentRejected(
        "rate_limited",
        f"too many enrollments: {rate.burst} at once, then {rate.per_hour:g} per hour for a tenant; "
        f"try again in {retry} s",
        retry_after_s=retry,
    )


def refill(tokens: float, then: float, now: float, rate: Rate) -> float:
    """The tokens a bucket that held ``tokens`` at ``then`` holds at ``now`` (a clock gone back refills none)."""
    return min(float(rate.burst), tokens + max(0.0, now - then) * rate.per_hour / 3600.0)


def wait_for(tokens: float, cost: int, rate: Rate) -> float:
    """Seconds until a bucket holding ``tokens`` holds ``max(cost, 1)`` (``0.0``: it does now)."""
    missing = max(cost, 1) - tokens
    return missing * 3600.0 / rate.per_hour if missing > 1e-9 else 0.0


@dataclass(slots=True)
class Buckets:
    """Token buckets by key, in this process."""

    prune_at: int = 1024
    """Buckets kept; beyond this, the full ones (no different from none) are dropped."""
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> (tokens, when counted)

    def __len__(self) -> int:
        return len(self._buckets)

    def tokens(self, key: str, rate: Rate, now: float) -> float:
        tokens, then = self._buckets.get(key, (float(rate.burst), now))
        return refill(tokens, then, now, rate)

    def take(self, key: str, rate: Rate, now: float, cost: int = 1) -> float:
        """``SharedLimits.take`` at ``now``."""
        tokens = self.tokens(key, rate, now)
        wait_s = wait_for(tokens, cost, rate)
        if wait_s > 0 or cost == 0:
            return wait_s
        if len(self._buckets) >= self.prune_at:
            self._buckets = {k: b for k, b in self._buckets.items() if refill(*b, now, rate) < rate.burst}
        self._buckets[key] = (tokens - cost, now)
        return 0.0


@dataclass(slots=True)
class Holds:
    """Places held by key, in this process: each lapses at its deadline unless released first."""

    _places: dict[str, dict[int, float]] = field(default_factory=dict)  # key -> {token: deadline}
    _next: int = 0

    def held(self, key: str, now: float) -> int:
        places = self._places.get(key)
        if places is None:
            return 0
        for token in [t for t, deadline in places.items() if deadline <= now]:
            del places[token]
        if not places:
            del self._places[key]
        return len(places)

    def hold(self, key: str, bound: int, now: float, ttl_s: float) -> int | None:
        """A token for one more place under ``key``, or ``None`` when ``bound`` are held already."""
        if self.held(key, now) >= bound:
            return None
        self._next += 1
        self._places.setdefault(key, {})[self._next] = now + ttl_s
        return self._next

    def release(self, key: str, token: int) -> None:
        places = self._places.get(key)
        if places is not None:
            places.pop(token, None)
            if not places:
                del self._places[key]


@dataclass(slots=True)
class Outage:
    """Whether the counter is answering, so that a change (down, back) is told once, not once per request; and, while
    it is down, which checks try it: one every ``retry_s``, the others fail at once without waiting for it (a hung
    counter costs one bounded wait a second, not one per handshake). It is down after ``after`` checks in a row
    failed: one slow answer fails its own check only."""

    retry_s: float = 1.0
    after: int = 3
    down: bool = False
    _failures: int = 0
    _retry_at: float = 0.0

    def may_try(self, now: float) -> bool:
        """Whether a check at ``now`` asks the counter (always while it answers; else the first after ``retry_s``)."""
        if not self.down:
            return True
        if now < self._retry_at:
            return False
        self._retry_at = now + self.retry_s
        return True

    def failed(self, now: float) -> bool:
        """A call failed at ``now``; ``True`` when this is news (the ``after``-th failure in a row)."""
        self._failures += 1
        news = not self.down and self._failures >= self.after
        if news:
            self.down, self._retry_at = True, now + self.retry_s
        return news

    def answered(self) -> bool:
        """A call was answered; ``True`` when this is news (it was down)."""
        news, self.down, self._failures = self.down, False, 0
        return news
