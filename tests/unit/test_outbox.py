from __future__ import annotations

import asyncio

from agent.runtime.outbox import Outbox


async def test_order_backpressure_and_drop() -> None:
    box = Outbox(audio_high_water=100)
    box.put('{"type":"audio.start","turn":1}', 1)
    box.put(b"a" * 60, 1)
    await asyncio.wait_for(box.wait_for_room(), 1)
    box.put(b"b" * 60, 1)  # 120 bytes queued: above the high-water mark
    waiter = asyncio.create_task(box.wait_for_room())
    await asyncio.sleep(0)
    assert not waiter.done()
    box.put('{"type":"x"}', 2)
    assert box.drop_audio(1) == 120
    await asyncio.wait_for(waiter, 1)
    assert box.audio_bytes == 0
    assert await box.get() == '{"type":"audio.start","turn":1}'
    assert await box.get() == '{"type":"x"}'
    box.close()
    assert await box.get() is None


async def test_get_waits_for_put() -> None:
    box = Outbox(audio_high_water=10)
    getter = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    box.put(b"zz")
    assert await asyncio.wait_for(getter, 1) == b"zz"


async def test_closing_wakes_a_producer_waiting_for_room_and_the_bound_can_change() -> None:
    box = Outbox(audio_high_water=1)  # before the session: no audio expected yet
    box.set_audio_high_water(100)
    box.put(b"a" * 150, 1)
    waiter = asyncio.create_task(box.wait_for_room())
    await asyncio.sleep(0)
    assert not waiter.done()
    box.close()  # e.g. the client stopped reading: nothing may wait for room for ever
    await asyncio.wait_for(waiter, 1)
