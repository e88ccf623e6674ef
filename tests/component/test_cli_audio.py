"""The CLI client's frame pacer on the event loop, with an injected clock and on the real one."""

from __future__ import annotations

import asyncio

import pytest

from clients.framing import FramePacer


class _FakeTime:
    """A clock whose sleep always overshoots, like a busy event loop."""

    def __init__(self, overshoot: float) -> None:
        self.now = 100.0
        self.overshoot = overshoot
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if seconds > 0:
            self.now += seconds + self.overshoot


async def test_pacer_does_not_accumulate_sleep_overshoot() -> None:
    fake = _FakeTime(overshoot=0.004)
    pacer = FramePacer(0.02, clock=fake.clock, sleep=fake.sleep)
    sent = [await pacer.wait() for _ in range(100)]
    # Frame n goes out at 100 + n * 20 ms + one overshoot at most, never n overshoots.
    for n, at in enumerate(sent):
        assert 100.0 + n * 0.02 <= at <= 100.0 + n * 0.02 + 0.0041
    assert sent[-1] - sent[0] == pytest.approx(99 * 0.02, abs=0.005)


async def test_pacer_catches_up_after_a_stall_then_keeps_the_schedule() -> None:
    fake = _FakeTime(overshoot=0.0)
    pacer = FramePacer(0.02, clock=fake.clock, sleep=fake.sleep)
    await pacer.wait()  # frame 0 at 100.00
    fake.now += 0.1  # the loop stalled for 100 ms
    late = [await pacer.wait() for _ in range(5)]  # frames 1..5 were due at 100.02..100.10
    assert late == [pytest.approx(100.1)] * 5
    assert await pacer.wait() == pytest.approx(100.12)  # frame 6 back on schedule


async def test_pacer_set_interval_keeps_the_next_due_time() -> None:
    fake = _FakeTime(overshoot=0.0)
    pacer = FramePacer(0.0, clock=fake.clock, sleep=fake.sleep)
    assert pacer.next_due() is None
    for _ in range(3):
        assert await pacer.wait() == pytest.approx(100.0)  # interval 0: no waiting
    pacer.set_interval(0.02)
    assert await pacer.wait() == pytest.approx(100.0)
    assert await pacer.wait() == pytest.approx(100.02)
    assert pacer.interval_s == 0.02


async def test_pacer_real_clock_paces_in_real_time() -> None:
    pacer = FramePacer(0.01)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(11):
        await pacer.wait()
    assert 0.095 <= loop.time() - start < 0.5
