"""A remote endpoint's slots: granted by the scheduling policy, first sentences before later ones."""

from __future__ import annotations

import asyncio

import pytest

from agent.adapters.endpoint_slots import EndpointSlots
from agent.ports import JobInfo, Work
from testing.waits import until, within

FIRST = JobInfo(Work.FIRST_SENTENCE)


def later(slack_s: float) -> JobInfo:
    return JobInfo(Work.LATER_SENTENCE, slack_s)


async def test_a_saturated_endpoint_sends_first_sentences_before_later_ones() -> None:
    slots = EndpointSlots(1)
    order: list[str] = []
    release = asyncio.Event()

    async def request(name: str, info: JobInfo) -> None:
        async with slots.slot(info, 20):
            order.append(name)
            if name == "a1":
                await release.wait()

    busy = asyncio.create_task(request("a1", FIRST))
    await until(lambda: bool(order), what="a1 to take the slot", every_s=0)
    waiting = [
        asyncio.create_task(request("a2", later(30.0))),
        asyncio.create_task(request("a3", later(60.0))),
        asyncio.create_task(request("b1", FIRST)),
    ]
    await until(lambda: slots.stats().models["tts"].queued >= 3, what="three requests to queue", every_s=0)
    release.set()
    await asyncio.gather(busy, *waiting)
    assert order == ["a1", "b1", "a2", "a3"]


async def test_a_cancelled_waiter_leaves_the_queue_and_its_slot_is_not_lost() -> None:
    slots = EndpointSlots(1)
    release = asyncio.Event()
    entered = asyncio.Event()

    async def hold() -> None:
        async with slots.slot(FIRST, 1):
            entered.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await within(entered.wait(), what="the holder to take the slot")

    async def wait_for_slot() -> None:
        async with slots.slot(later(5.0), 1):
            pytest.fail("a cancelled waiter must not get the slot")

    waiter = asyncio.create_task(wait_for_slot())
    await until(lambda: slots.stats().models["tts"].queued >= 1, what="the waiter to queue", every_s=0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert slots.stats().models["tts"].queued == 0
    release.set()
    await holder
    async with slots.slot(FIRST, 1):
        assert slots.stats().models["tts"].running == 1
    assert slots.stats().models["tts"].running == 0
