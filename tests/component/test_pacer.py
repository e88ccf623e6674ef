"""The Twilio pacer: a small lead, then one frame per 20 ms, never a burst of seconds.

The pacer runs on an injected clock: ``FakeClock.sleep`` advances time by exactly what was asked (plus an
optional scheduling delay), so the figures below are exact and no test depends on the machine's load.
"""

from __future__ import annotations

import itertools

import pytest

from agent.wires.phone.pacing import Pacer


class FakeClock:
    def __init__(self, oversleep_s: float = 0.0) -> None:
        self.now = 100.0
        self.oversleep_s = oversleep_s  # an event loop that wakes late
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds + self.oversleep_s

    def pacer(self, lead_s: float) -> Pacer:
        return Pacer(lead_s, clock=self, sleep=self.sleep)


async def send(pacer: Pacer, clock: FakeClock, frames: int) -> list[float]:
    """When each of ``frames`` 20 ms frames may go, relative to the first."""
    start, times = clock.now, []
    for _ in range(frames):
        await pacer.wait(0.02)
        times.append(round(clock.now - start, 6))
    return times


async def test_pacer_sends_a_lead_then_real_time() -> None:
    clock = FakeClock()
    times = await send(clock.pacer(lead_s=0.06), clock, 15)
    assert times[:4] == [0.0, 0.0, 0.0, 0.0]  # 60 ms of lead: frames 1-4 go at once (the 4th fills the lead)
    assert times[-1] == pytest.approx(15 * 0.02 - 0.06 - 0.02)  # then real time: 15 frames minus the lead
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(times[4:])]
    assert gaps == [0.02] * len(gaps)


async def test_a_late_wake_up_is_not_made_up_with_a_burst() -> None:
    clock = FakeClock(oversleep_s=0.005)
    times = await send(clock.pacer(lead_s=0.06), clock, 30)
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(times[4:])]
    assert min(gaps) >= 0.02  # never faster than real time...
    assert max(gaps) <= 0.02 + 0.005  # ...and late by the oversleep only


async def test_reset_restarts_the_lead() -> None:
    clock = FakeClock()
    pacer = clock.pacer(lead_s=0.04)
    await send(pacer, clock, 5)
    pacer.reset()
    assert await send(pacer, clock, 2) == [0.0, 0.0]


async def test_after_a_pause_the_lead_is_available_again() -> None:
    clock = FakeClock()
    pacer = clock.pacer(lead_s=0.04)
    await send(pacer, clock, 10)
    clock.now += 5.0  # the reply ended; the caller's buffer played out
    assert await send(pacer, clock, 3) == [0.0, 0.0, 0.0]
