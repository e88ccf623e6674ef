"""The Twilio pacer: a small lead, then one frame per 20 ms, never a burst of seconds."""

from __future__ import annotations

import itertools
import time

from agent.runtime.twilio_connection import Pacer


async def test_pacer_sends_a_lead_then_real_time() -> None:
    pacer = Pacer(lead_s=0.06)
    times = []
    start = time.monotonic()
    for _ in range(15):
        await pacer.wait(0.02)
        times.append(time.monotonic() - start)
    assert times[2] < 0.015  # the lead (three frames) goes at once
    assert 0.2 <= times[-1] <= 0.32  # 15 frames of 20 ms minus the 60 ms lead
    gaps = [b - a for a, b in itertools.pairwise(times[4:])]
    assert max(gaps) < 0.05


async def test_reset_restarts_the_lead() -> None:
    pacer = Pacer(lead_s=0.04)
    for _ in range(5):
        await pacer.wait(0.02)
    pacer.reset()
    start = time.monotonic()
    await pacer.wait(0.02)
    await pacer.wait(0.02)
    assert time.monotonic() - start < 0.015
