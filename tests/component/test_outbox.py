from __future__ import annotations

import asyncio

from agent.runtime.call.outbox import Outbox
from testing.waits import within


async def test_order_backpressure_and_drop() -> None:
    box = Outbox(audio_high_water=100)
    box.put('{"type":"audio.start","turn":1}', 1)
    box.put(b"a" * 60, 1)
    await within(box.wait_for_room(), what="the outbox")
    box.put(b"b" * 60, 1)  # 120 bytes queued: above the high-water mark
    waiter = asyncio.create_task(box.wait_for_room())
    await asyncio.sleep(0)
    assert not waiter.done()
    box.put('{"type":"x"}', 2)
    assert box.drop_audio(1) == 120
    await within(waiter, what="the outbox")
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
    assert await within(getter, what="the outbox") == b"zz"


async def test_closing_wakes_a_producer_waiting_for_room_and_the_bound_can_change() -> None:
    box = Outbox(audio_high_water=1)  # before the session: no audio expected yet
    box.set_audio_high_water(100)
    box.put(b"a" * 150, 1)
    waiter = asyncio.create_task(box.wait_for_room())
    await asyncio.sleep(0)
    assert not waiter.done()
    box.close()  # e.g. the client stopped reading: nothing may wait for room for ever
    await within(waiter, what="the outbox")


async def test_more_than_max_bytes_of_text_beyond_the_audio_buffer_empties_the_box_and_reports_once() -> None:
    overflows: list[int] = []
    box = Outbox(audio_high_water=100, max_bytes=1000, on_overflow=lambda: overflows.append(1))
    box.put(b"a" * 100, 1)
    for _ in range(9):
        box.put("x" * 100)  # 1000 bytes queued beyond... and audio within its allowance: kept
    assert box.queued_bytes == 1000 and not overflows
    box.put("y" * 101)  # a client that takes nothing
    assert overflows == [1] and box.queued_bytes == 0 and box.audio_bytes == 0
    box.put("z" * 5000)  # closed: nothing more is kept, nothing more reported
    assert overflows == [1] and box.queued_bytes == 0
    assert await box.get() is None
    await within(box.wait_for_room(), what="the outbox")  # an audio producer is never left waiting


async def test_queued_bytes_follow_gets_and_dropped_audio() -> None:
    box = Outbox(audio_high_water=1000, max_bytes=1000)
    box.put("abc")
    box.put(b"1234", 1)
    box.put(b"56", 2)
    assert box.queued_bytes == 9
    box.drop_audio(1)
    assert box.queued_bytes == 5
    assert await box.get() == "abc"
    assert box.queued_bytes == 2
