"""The shared worker pool: sized from the cores, runs what the policy picks, forgets cancelled jobs."""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError
from pathlib import Path

import pytest

from agent.errors import ProviderUnavailable, WorkDropped
from agent.ports import JobInfo, Work
from agent.work.workers import WorkPool, available_cores, pool_workers

HANG_S = 30  # only against a hang; nothing is timed


def test_workers_times_threads_never_exceed_the_cores() -> None:
    assert pool_workers(0, 2, cores=2) == 1
    assert pool_workers(0, 2, cores=16) == 8
    assert pool_workers(0, 4, cores=2) == 1  # at least one
    assert pool_workers(3, 2, cores=2) == 3  # set explicitly: as set


def test_a_cgroup_cpu_limit_caps_the_cores(tmp_path: Path) -> None:
    limit = tmp_path / "cpu.max"
    limit.write_text("150000 100000\n")
    assert available_cores(limit) == min(2, available_cores(tmp_path / "missing"))
    limit.write_text("max 100000\n")
    assert available_cores(limit) == available_cores(tmp_path / "missing")


def test_the_pool_runs_waiting_jobs_in_the_policys_order_and_skips_cancelled_ones() -> None:
    pool = WorkPool(1)
    gate, busy = threading.Event(), threading.Event()
    ran: list[str] = []

    def hold() -> None:
        busy.set()
        gate.wait(HANG_S)

    try:
        holding = pool.submit("tts", JobInfo(Work.FIRST_SENTENCE), 1, hold)
        assert busy.wait(HANG_S)
        later = pool.submit("tts", JobInfo(Work.LATER_SENTENCE, 60.0), 10, lambda: ran.append("later"))
        gone = pool.submit("tts", JobInfo(Work.FIRST_SENTENCE), 10, lambda: ran.append("cancelled"))
        first = pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 1, lambda: ran.append("final"))
        assert gone.cancel()
        assert pool.stats().models["tts"].queued == 1
        gate.set()
        for job in (holding, later, first):
            job.result(HANG_S)
        assert ran == ["final", "later"]
        with pytest.raises(CancelledError):
            gone.result(0)
    finally:
        gate.set()
        pool.close()


def test_a_failure_reaches_the_waiter_and_the_worker_goes_on() -> None:
    pool = WorkPool(1)
    try:

        def fail() -> None:
            raise RuntimeError("model exploded")

        with pytest.raises(RuntimeError, match="exploded"):
            pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 1, fail).result(HANG_S)
        assert pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 1, lambda: 42).result(HANG_S) == 42
    finally:
        pool.close()


def test_a_busy_pool_drops_speculative_work_and_a_closed_one_takes_none() -> None:
    pool = WorkPool(1, rates={"asr": 1.0})
    gate = threading.Event()
    try:
        # Whether or not the worker has taken the first job yet, the second waits behind it: no room in 0.2 s.
        pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 2, lambda: gate.wait(HANG_S))
        queued = pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 2, lambda: None)
        with pytest.raises(WorkDropped):
            pool.submit("asr", JobInfo(Work.SPECULATIVE_TRANSCRIPT, 0.2), 1, lambda: None)
        pool.close()
        assert queued.cancelled()
        with pytest.raises(ProviderUnavailable):
            pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 1, lambda: None)
    finally:
        gate.set()
        pool.close()


@pytest.mark.parametrize("fails", [False, True])
def test_a_job_has_left_the_queues_when_its_waiter_hears_of_it(fails: bool) -> None:
    """Whoever awaited a job and then reads ``stats`` (admission: may a new call start?) sees the work done.
    The waiter's callbacks run the moment the result is set, so they show what it sees."""
    pool = WorkPool(1)

    def work() -> int:
        if fails:
            raise ValueError("boom")
        return 7

    seen: list[int] = []
    future = pool.submit("tts", JobInfo(Work.FIRST_SENTENCE), 1.0, work)
    future.add_done_callback(lambda _: seen.append(pool.stats().models["tts"].running))
    if fails:
        with pytest.raises(ValueError, match="boom"):
            future.result(HANG_S)
    else:
        assert future.result(HANG_S) == 7
    assert seen == [0]
    pool.close()


def test_the_pool_counts_the_cpu_time_of_a_models_jobs_not_their_waits() -> None:
    pool = WorkPool(1)
    gate = threading.Event()

    def spin() -> int:
        started, total = time.thread_time(), 0
        while time.thread_time() - started < 0.05:  # 50 ms of this thread's CPU, however long it takes
            total += 1
        return total

    try:
        pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 1, lambda: gate.wait(HANG_S))
        spun = pool.submit("asr", JobInfo(Work.FINAL_TRANSCRIPT), 1, spin)
        gate.set()
        assert spun.result(HANG_S) > 0
        counted = pool.stats().models["asr"].cpu_s_total
        assert 0.05 <= counted < 0.05 + 0.05  # the spin, and next to nothing for the job that waited on the gate
    finally:
        gate.set()
        pool.close()
