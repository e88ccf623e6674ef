"""The per-tenant voice quota and enrollment rate (``EnrollmentLimits``), on an injected clock, without a loop."""

from __future__ import annotations

import pytest

from agent.errors import EnrollmentRejected
from agent.voices.enrollment import EnrollmentLimits

T0 = 1000.0  # a monotonic time, in seconds


def refused(limits: EnrollmentLimits, tenant: str, stored: int, now: float) -> EnrollmentRejected:
    with pytest.raises(EnrollmentRejected) as info:
        limits.admit(tenant, stored, now)
    return info.value


def test_no_limits_admit_anything() -> None:
    limits = EnrollmentLimits()
    for i in range(1000):
        limits.admit("acme", i, T0)
    assert limits.running("acme") == 1000


def test_the_quota_counts_stored_voices_and_enrollments_under_way() -> None:
    limits = EnrollmentLimits(max_voices=3)
    limits.admit("acme", 1, T0)
    limits.admit("acme", 1, T0)  # 1 stored + 2 under way = 3
    exc = refused(limits, "acme", 1, T0)
    assert exc.code == "quota_exceeded" and exc.retry_after_s is None
    assert "3 voices (2 of them being enrolled)" in exc.message and "(3)" in exc.message
    assert "remove one" in exc.message
    limits.done("acme")  # one ended without storing anything: its place is free again
    limits.admit("acme", 1, T0)
    limits.done("acme")
    limits.done("acme")
    limits.admit("acme", 2, T0)  # both stored their voice: 2 stored + 1 under way
    limits.done("acme")
    assert refused(limits, "acme", 3, T0).code == "quota_exceeded"


def test_quotas_are_per_tenant() -> None:
    limits = EnrollmentLimits(max_voices=1)
    limits.admit("acme", 0, T0)
    assert refused(limits, "acme", 0, T0).code == "quota_exceeded"
    limits.admit("globex", 0, T0)


def test_a_burst_passes_then_the_rate_says_when_to_come_back() -> None:
    limits = EnrollmentLimits(burst=5, per_hour=20)  # one every 180 s after the burst
    for _ in range(5):
        limits.admit("acme", 0, T0)
        limits.done("acme")
    exc = refused(limits, "acme", 0, T0 + 1)
    assert exc.code == "rate_limited" and exc.retry_after_s == 179
    assert "5 at once, then 20 per hour" in exc.message and "try again in 179 s" in exc.message
    assert refused(limits, "acme", 0, T0 + 179).retry_after_s == 1
    limits.admit("acme", 0, T0 + 180)  # refilled one
    assert refused(limits, "acme", 0, T0 + 180).retry_after_s == 180


def test_refused_attempts_take_nothing() -> None:
    limits = EnrollmentLimits(burst=1, per_hour=1)
    limits.admit("acme", 0, T0)
    for second in range(100):
        refused(limits, "acme", 0, T0 + second)
    limits.admit("acme", 0, T0 + 3600)  # an hour after the first, not after the last refusal


def test_check_takes_nothing() -> None:
    limits = EnrollmentLimits(max_voices=1, burst=1, per_hour=1)
    for _ in range(10):
        limits.check("acme", 0, T0)
    assert limits.running("acme") == 0
    limits.admit("acme", 0, T0)
    with pytest.raises(EnrollmentRejected):
        limits.check("acme", 0, T0)


def test_the_bucket_refills_only_to_the_burst() -> None:
    limits = EnrollmentLimits(burst=2, per_hour=60)
    limits.admit("acme", 0, T0)
    later = T0 + 10 * 86400  # ten idle days refill two, not 14,400
    limits.admit("acme", 0, later)
    limits.admit("acme", 0, later)
    assert refused(limits, "acme", 0, later).code == "rate_limited"


def test_rates_are_per_tenant() -> None:
    limits = EnrollmentLimits(burst=1, per_hour=1)
    limits.admit("acme", 0, T0)
    assert refused(limits, "acme", 0, T0).code == "rate_limited"
    limits.admit("globex", 0, T0)


def test_a_clock_that_goes_back_refills_nothing() -> None:
    limits = EnrollmentLimits(burst=1, per_hour=3600)
    limits.admit("acme", 0, T0)
    assert refused(limits, "acme", 0, T0 - 100).code == "rate_limited"


def test_the_quota_is_told_before_the_rate() -> None:
    limits = EnrollmentLimits(max_voices=1, burst=1, per_hour=1)
    limits.admit("acme", 0, T0)
    limits.done("acme")
    assert refused(limits, "acme", 1, T0).code == "quota_exceeded"  # removing a voice is what helps


def test_many_tenants_keep_few_buckets() -> None:
    limits = EnrollmentLimits(burst=1, per_hour=3600)  # one a second
    for i in range(5000):
        limits.admit(f"t{i}", 0, T0 + i)  # each refilled a second later
        limits.done(f"t{i}")
    assert len(limits._buckets) <= EnrollmentLimits._PRUNE_AT
    assert limits.running("t1") == 0 and not limits._running


@pytest.mark.parametrize("fields", [{"max_voices": -1}, {"burst": 0}, {"per_hour": -1.0}])
def test_impossible_limits_are_refused(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        EnrollmentLimits(**fields)  # type: ignore[arg-type]
