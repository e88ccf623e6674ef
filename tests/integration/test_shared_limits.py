"""The enrollment limits and the places of sockets opening, counted by each ``SharedLimits`` adapter: in this process
(``LocalLimits``) and in a real ``redis-server`` (``RedisLimits``), with the same answers. Then Redis down, slow
and back: the fail-closed limits refuse with ``limits_unavailable``, the fail-open ones answer ``UNCHECKED``, each
failed check is counted, the outage is logged once when it starts and once when it ends, and a check never waits
past its bound (a Redis that accepts the connection and never answers).

The two replicas sharing one Redis, as processes, are ``test_shared_limits_replicas.py``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from agent.adapters.redis_limits import RedisLimits
from agent.errors import EnrollmentRejected, LimitsUnavailable
from agent.ports import Hold, Rate
from agent.security.limiter import UNCHECKED, Limiter, LocalLimits
from agent.voices.enrollment import EnrollmentLimits
from testing.redis_server import RedisServer
from testing.waits import until

TIMEOUT_S = 0.005  # the default bound: AGENT_LIMITS__CHECK_TIMEOUT_MS=5
GENEROUS_S = 2.0  # for the checks that must answer under the parallel suite's load (a hang guard, not a timing)


@pytest.fixture(params=["local", "redis"])
async def limiter(request: pytest.FixtureRequest, redis: RedisServer) -> AsyncIterator[Limiter]:
    """A limiter on each adapter; a fresh key prefix each time, so the tests share one Redis and nothing else."""
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    if request.param == "local":
        yield Limiter(prefix=prefix)
        return
    if not redis.running:
        redis.start()
    counters = RedisLimits(redis.url, GENEROUS_S)
    async with Limiter(counters, prefix=prefix, shared=True, close=counters.close) as shared:
        yield shared


async def refused(limits: EnrollmentLimits, tenant: str, stored: int) -> EnrollmentRejected:
    with pytest.raises(EnrollmentRejected) as info:
        await limits.admit(tenant, stored)
    return info.value


async def test_the_quota_counts_stored_voices_and_enrollments_under_way(limiter: Limiter) -> None:
    limits = EnrollmentLimits(max_voices=3, limiter=limiter)
    first, second = await limits.admit("acme", 1), await limits.admit("acme", 1)  # 1 stored + 2 under way = 3
    exc = await refused(limits, "acme", 1)
    assert exc.code == "quota_exceeded" and "3 voices (2 of them being enrolled)" in exc.message
    assert await limits.running("acme") == 2
    await limits.done(first)  # it ended without storing anything: its place is free again
    third = await limits.admit("acme", 1)
    await limits.done(second)
    await limits.done(third)
    assert await limits.running("acme") == 0
    assert (await refused(limits, "acme", 3)).code == "quota_exceeded"
    await limits.done(await limits.admit("globex", 0))  # another tenant has its own


async def test_two_enrollments_at_once_cannot_both_take_the_last_place(limiter: Limiter) -> None:
    limits = EnrollmentLimits(max_voices=1, limiter=limiter)
    results = await asyncio.gather(limits.admit("acme", 0), limits.admit("acme", 0), return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["EnrollmentRejected", "Hold"]


async def test_a_burst_passes_then_the_rate_says_when_to_come_back(limiter: Limiter) -> None:
    limits = EnrollmentLimits(burst=3, per_hour=1, limiter=limiter)
    for _ in range(3):
        await limits.check("acme", 0)  # a check takes nothing
        assert await limits.admit("acme", 0) is None  # no quota: nothing held
    exc = await refused(limits, "acme", 0)
    assert exc.code == "rate_limited" and exc.retry_after_s == 3600
    assert "3 at once, then 1 per hour" in exc.message
    with pytest.raises(EnrollmentRejected):
        await limits.check("acme", 0)
    await limits.admit("globex", 0)


async def test_the_quota_is_told_before_the_rate_and_refusals_take_nothing(limiter: Limiter) -> None:
    limits = EnrollmentLimits(max_voices=2, burst=1, per_hour=1, limiter=limiter)
    await limits.done(await limits.admit("acme", 0))
    assert (await refused(limits, "acme", 2)).code == "quota_exceeded"  # removing a voice is what helps
    for _ in range(3):
        assert (await refused(limits, "acme", 0)).code == "rate_limited"
    assert await limits.running("acme") == 0  # the place a refused rate held is given back


async def test_places_are_bounded_given_back_and_lapse(limiter: Limiter) -> None:
    first = await limiter.hold("opening_peer", "192.0.2.1", 2, 60)
    second = await limiter.hold("opening_peer", "192.0.2.1", 2, 60)
    assert isinstance(first, Hold) and isinstance(second, Hold) and first != second
    assert await limiter.hold("opening_peer", "192.0.2.1", 2, 60) is None
    assert isinstance(await limiter.hold("opening_peer", "192.0.2.2", 2, 60), Hold)
    await limiter.release(first)
    await limiter.release(first)  # idempotent
    assert await limiter.held("opening_peer", "192.0.2.1") == 1
    lapsing = await limiter.hold("opening_tenant", "acme", 1, 0.05)  # its holder died: it lapses at its deadline
    assert lapsing not in (None, UNCHECKED)

    async def lapsed() -> bool:
        return await limiter.held("opening_tenant", "acme") == 0

    await until(lapsed, what="the place to lapse")
    assert await limiter.hold("opening_tenant", "acme", 1, 60) not in (None, UNCHECKED)


@pytest.fixture
def stopped_redis(redis: RedisServer) -> Iterator[RedisServer]:
    """``redis`` stopped for the test, started again after it."""
    if not redis.running:
        redis.start()
    yield redis
    if not redis.running:
        redis.start()


async def test_redis_down_fails_enrollment_closed_and_admission_open_and_says_so_once(
    stopped_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    counters, clock = RedisLimits(stopped_redis.url, GENEROUS_S), Clock()
    errors: list[tuple[str, str]] = []
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    async with Limiter(counters, prefix=prefix, shared=True, close=counters.close, clock=clock) as limiter:
        limiter.on_error = lambda limit, outcome: errors.append((limit, outcome))
        limits = EnrollmentLimits(max_voices=5, burst=1, per_hour=1, limiter=limiter)
        place = await limits.admit("acme", 0)  # one enrollment under way when Redis goes down
        caplog.set_level(logging.INFO, "agent.security.limiter")
        await asyncio.to_thread(stopped_redis.stop)
        for _ in range(3):
            exc = await refused(limits, "acme", 0)
            assert exc.code == "limits_unavailable" and "voice quota" in exc.message and exc.retry_after_s
        exc = await refused(EnrollmentLimits(burst=1, per_hour=1, limiter=limiter), "globex", 0)
        assert exc.code == "limits_unavailable" and "enrollment rate" in exc.message
        assert await limiter.hold("opening_peer", "192.0.2.1", 1, 60) == UNCHECKED
        assert await limiter.hold("opening_tenant", "acme", 1, 60) == UNCHECKED
        await limits.done(place)  # given back while down: it lapses at its deadline instead; no error
        assert errors == [("voice_quota", "failed_closed")] * 3 + [
            ("enroll_rate", "failed_closed"),
            ("opening_peer", "failed_open"),
            ("opening_tenant", "failed_open"),
        ]
        await asyncio.to_thread(stopped_redis.start)  # back, empty
        assert (await refused(limits, "acme", 0)).code == "limits_unavailable"  # not asked again at once
        clock.now += 1.0  # counting resumes with the first check a second after the last try
        assert await limits.admit("acme", 0) is not None
        assert (await refused(limits, "acme", 0)).code == "rate_limited"
        assert await limiter.hold("opening_peer", "192.0.2.1", 1, 60) not in (None, UNCHECKED)
        assert await limiter.hold("opening_peer", "192.0.2.1", 1, 60) is None
    lines = [r.getMessage() for r in caplog.records if r.name == "agent.security.limiter" and r.levelno >= logging.INFO]
    assert len(lines) == 2, lines  # one when it went down, one when it came back
    assert lines[0].startswith("shared limits unavailable") and "limits_unavailable" in lines[0]
    assert lines[1].startswith("shared limits answer again")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def silent_redis() -> Iterator[str]:
    """A loopback address that takes connections and never answers (a Redis hung, or a network that drops)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)  # never accepted: the kernel completes the handshakes, nobody reads
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"


async def test_a_check_never_waits_past_its_bound(silent_redis: str) -> None:
    counters = RedisLimits(silent_redis, TIMEOUT_S)
    try:
        with pytest.raises(LimitsUnavailable, match="no answer within 5 ms"):
            await counters.take("test:enroll_rate:acme", Rate(1, 1))
        with pytest.raises(LimitsUnavailable, match="no answer within 5 ms"):
            await counters.hold("test:opening_peer:192.0.2.1", 1, 60)
        limiter = Limiter(counters, shared=True)
        assert await limiter.hold("opening_peer", "192.0.2.1", 1, 60) == UNCHECKED
    finally:
        await counters.close()


async def test_the_in_process_counter_is_the_default_and_never_unavailable() -> None:
    limiter = Limiter()
    assert isinstance(limiter.counters, LocalLimits) and not limiter.shared
