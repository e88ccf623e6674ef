"""The per-tenant limits' rules (``agent.security.limit_rules``): the token bucket of the enrollment rate, the places
of the voice quota and of sockets opening, the refusals' words, the choice per limit when the counter is down, on an
injected clock, without a loop. The same rules, counted by ``EnrollmentLimits`` in-process and in Redis, are
``tests/integration/test_shared_limits.py``."""

from __future__ import annotations

import pytest

from agent.ports import Rate
from agent.security.limit_rules import (
    FAIL_OPEN,
    LIMITS,
    Buckets,
    Holds,
    Outage,
    key,
    quota_exceeded,
    rate_limited,
    unavailable,
)
from agent.voices.enrollment import EnrollmentLimits

T0 = 1000.0  # a monotonic time, in seconds


def test_a_burst_passes_then_the_rate_says_when_to_come_back() -> None:
    buckets, rate = Buckets(), Rate(5, 20)  # one every 180 s after the burst
    for _ in range(5):
        assert buckets.take("acme", rate, T0) == 0.0
    assert buckets.take("acme", rate, T0 + 1) == pytest.approx(179)
    assert buckets.take("acme", rate, T0 + 179) == pytest.approx(1)
    assert buckets.take("acme", rate, T0 + 180) == 0.0  # refilled one
    assert buckets.take("acme", rate, T0 + 180) == pytest.approx(180)


def test_refused_attempts_take_nothing() -> None:
    buckets, rate = Buckets(), Rate(1, 1)
    assert buckets.take("acme", rate, T0) == 0.0
    for second in range(100):
        assert buckets.take("acme", rate, T0 + second) > 0
    assert buckets.take("acme", rate, T0 + 3600) == 0.0  # an hour after the first, not after the last refusal


def test_a_check_takes_nothing() -> None:
    buckets, rate = Buckets(), Rate(1, 1)
    for _ in range(10):
        assert buckets.take("acme", rate, T0, cost=0) == 0.0
    assert buckets.take("acme", rate, T0) == 0.0
    assert buckets.take("acme", rate, T0, cost=0) == pytest.approx(3600)


def test_the_bucket_refills_only_to_the_burst() -> None:
    buckets, rate = Buckets(), Rate(2, 60)
    assert buckets.take("acme", rate, T0) == 0.0
    later = T0 + 10 * 86400  # ten idle days refill two, not 14,400
    assert buckets.take("acme", rate, later) == 0.0
    assert buckets.take("acme", rate, later) == 0.0
    assert buckets.take("acme", rate, later) > 0


def test_rates_are_per_key_and_a_clock_that_goes_back_refills_nothing() -> None:
    buckets, rate = Buckets(), Rate(1, 3600)
    assert buckets.take("acme", rate, T0) == 0.0
    assert buckets.take("acme", rate, T0 - 100) > 0
    assert buckets.take("globex", rate, T0) == 0.0


def test_many_tenants_keep_few_buckets() -> None:
    buckets, rate = Buckets(), Rate(1, 3600)  # one a second
    for i in range(5000):
        assert buckets.take(f"t{i}", rate, T0 + i) == 0.0  # each refilled a second later
    assert len(buckets) <= buckets.prune_at


def test_places_are_bounded_per_key_released_and_lapse_at_their_deadline() -> None:
    holds = Holds()
    first = holds.hold("acme", 2, T0, ttl_s=60)
    second = holds.hold("acme", 2, T0, ttl_s=60)
    assert first is not None and second is not None and first != second
    assert holds.hold("acme", 2, T0, ttl_s=60) is None  # full: nothing taken
    assert holds.hold("globex", 2, T0, ttl_s=60) is not None  # another key has its own
    holds.release("acme", first)
    holds.release("acme", first)  # idempotent
    assert holds.held("acme", T0) == 1
    assert holds.hold("acme", 2, T0, ttl_s=60) is not None
    # A holder that died never releases: its places lapse at their deadline, no sooner.
    assert holds.held("acme", T0 + 59.9) == 2
    assert holds.held("acme", T0 + 60) == 0


def test_a_bound_of_zero_or_less_holds_nothing() -> None:
    holds = Holds()
    assert holds.hold("acme", 0, T0, ttl_s=60) is None
    assert holds.hold("acme", -3, T0, ttl_s=60) is None


def test_the_refusals_say_why_and_when() -> None:
    quota = quota_exceeded(3, 2, 3)
    assert quota.code == "quota_exceeded" and quota.retry_after_s is None
    assert "3 voices (2 of them being enrolled)" in quota.message and "(3)" in quota.message
    assert "remove one" in quota.message
    assert "being enrolled" not in quota_exceeded(3, 0, 3).message
    rate = rate_limited(178.2, Rate(5, 20))
    assert rate.code == "rate_limited" and rate.retry_after_s == 179
    assert "5 at once, then 20 per hour" in rate.message and "try again in 179 s" in rate.message
    assert rate_limited(0.01, Rate(1, 1)).retry_after_s == 1


def test_enrollment_fails_closed_and_admission_fails_open() -> None:
    assert set(FAIL_OPEN) == set(LIMITS)
    assert not FAIL_OPEN["enroll_rate"] and not FAIL_OPEN["voice_quota"]  # spending waits for the counter
    assert FAIL_OPEN["opening_tenant"] and FAIL_OPEN["opening_peer"]  # callers are not refused for it
    for limit in ("enroll_rate", "voice_quota"):
        refused = unavailable(limit)
        assert refused.code == "limits_unavailable" and refused.retry_after_s
        assert "cannot be reached" in refused.message and "nothing was enrolled" in refused.message


def test_an_outage_is_told_once_when_it_starts_and_once_when_it_ends() -> None:
    outage = Outage(after=3)
    assert not outage.answered()
    assert not outage.failed(T0) and not outage.failed(T0)
    assert outage.answered() is False  # two slow answers, then one: no outage, nothing to tell
    assert not outage.failed(T0) and not outage.failed(T0)
    assert outage.failed(T0)  # the third in a row
    assert not outage.failed(T0) and not outage.failed(T0 + 5)
    assert outage.answered()
    assert not outage.answered()
    assert [outage.failed(T0 + 6) for _ in range(3)] == [False, False, True]


def test_while_down_one_check_a_second_tries_the_counter() -> None:
    outage = Outage(retry_s=1.0, after=1)
    assert outage.may_try(T0) and outage.may_try(T0)  # answering: every check asks it
    outage.failed(T0)
    assert not outage.may_try(T0) and not outage.may_try(T0 + 0.999)  # the others fail at once
    assert outage.may_try(T0 + 1.0)  # one tries...
    assert not outage.may_try(T0 + 1.0) and not outage.may_try(T0 + 1.5)  # ...and only one
    outage.failed(T0 + 1.0)
    assert outage.may_try(T0 + 2.0)
    outage.answered()
    assert outage.may_try(T0 + 2.0) and outage.may_try(T0 + 2.0)


def test_keys_name_the_limit_and_the_subject_under_a_prefix() -> None:
    assert key("voice-agent", "enroll_rate", "acme") == "voice-agent:enroll_rate:acme"
    assert key("prod", "opening_peer", "203.0.113.7") == "prod:opening_peer:203.0.113.7"


@pytest.mark.parametrize("fields", [{"max_voices": -1}, {"burst": 0}, {"per_hour": -1.0}])
def test_impossible_limits_are_refused(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        EnrollmentLimits(**fields)  # type: ignore[arg-type]
