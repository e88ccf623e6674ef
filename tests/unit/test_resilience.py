"""The circuit breaker and the per-turn retry budget, with an injected clock and no event loop."""

from __future__ import annotations

import pytest

from agent.runtime.metrics.server import ServerMetrics
from agent.work.resilience import BreakerState, CircuitBreaker, RetryBudget
from tests.unit.test_metrics import parse


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def breaker(clock: Clock, failures: int = 3, reset_s: float = 10.0) -> CircuitBreaker:
    return CircuitBreaker("sagemaker:test", failures, reset_s, clock)


def test_opens_after_k_consecutive_failures_only() -> None:
    clock = Clock()
    b = breaker(clock)
    for _ in range(2):
        assert b.allow()
        b.failure()
    assert b.allow()
    b.success()  # a success in between resets the count
    for _ in range(2):
        assert b.allow()
        b.failure()
    assert b.status().state is BreakerState.CLOSED
    assert b.allow()
    b.failure()
    assert b.status().state is BreakerState.OPEN
    assert not b.allow()
    status = b.status()
    assert status.opened_total == 1 and status.retry_after_s == 10.0 and status.state.level == 2


def test_one_half_open_probe_after_reset_then_closed_on_success() -> None:
    clock = Clock()
    b = breaker(clock, failures=1)
    b.allow()
    b.failure()
    clock.now += 9.9
    assert not b.allow()
    clock.now += 0.1
    assert b.status().state is BreakerState.HALF_OPEN
    assert b.allow()  # the probe
    assert not b.allow()  # only one at a time
    b.success()
    assert b.status().state is BreakerState.CLOSED
    assert b.allow() and b.allow()


def test_a_failed_probe_opens_again_for_another_reset_period() -> None:
    clock = Clock()
    b = breaker(clock, failures=2)
    for _ in range(2):
        b.allow()
        b.failure()
    clock.now += 10
    assert b.allow()
    b.failure()
    assert b.status().state is BreakerState.OPEN and b.status().opened_total == 2
    clock.now += 5
    assert not b.allow()
    clock.now += 5
    assert b.allow()


def test_an_abandoned_probe_frees_the_slot() -> None:
    clock = Clock()
    b = breaker(clock, failures=1)
    b.allow()
    b.failure()
    clock.now += 10
    assert b.allow()
    b.abandon()  # e.g. the caller barged in while the probe was in flight
    assert b.status().state is BreakerState.HALF_OPEN
    assert b.allow()


def test_recovered_faults_are_counted_without_changing_state() -> None:
    b = breaker(Clock())
    b.recovered()
    b.recovered()
    status = b.status()
    assert status.recovered_total == 2 and status.state is BreakerState.CLOSED and status.retry_after_s is None


def test_bad_parameters() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker("x", 0, 1.0, Clock())
    with pytest.raises(ValueError):
        CircuitBreaker("x", 1, 0.0, Clock())
    with pytest.raises(ValueError):
        RetryBudget(-1)


def test_the_retry_budget_is_shared_and_runs_out() -> None:
    budget = RetryBudget(2)
    assert budget.take() and budget.take()
    assert not budget.take()
    assert budget.left == 0 and budget.spent == 2
    assert not RetryBudget(0).take()


def test_breaker_snapshots_in_the_metrics() -> None:
    clock = Clock()
    b = breaker(clock, failures=1)
    metrics = ServerMetrics()
    labels = {"endpoint": "sagemaker:test"}
    b.allow()
    b.failure()
    b.recovered()
    samples = parse(metrics.render([b.status()]))[2]
    assert ("voice_agent_tts_breaker_state", labels, 2.0) in samples
    assert ("voice_agent_tts_breaker_opened_total", labels, 1.0) in samples
    assert ("voice_agent_tts_recovered_faults_total", labels, 1.0) in samples
    clock.now += 10
    b.allow()
    b.success()
    samples = parse(metrics.render([b.status()]))[2]
    assert ("voice_agent_tts_breaker_state", labels, 0.0) in samples
    assert ("voice_agent_tts_breaker_opened_total", labels, 1.0) in samples  # counters never go down
