"""Waits on a condition, for tests and benchmarks: ``until`` (async), ``until_sync`` (blocking) and ``within``
(an awaitable).

Every wait is bounded and fails loudly: an ``AssertionError`` saying what was awaited and for how long, never a
return as if it had succeeded, nor a bare ``TimeoutError`` from deep in a loop. The bound is only against a
hang, never a timing under test: a test that must see something happen within a time says so on an injected
clock, and a figure in seconds belongs to a benchmark. It changes when the way tests wait changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

WAIT_S = 30.0
"""The default bound on one wait: only against a hang, never a timing under test."""

EVERY_S = 0.02
"""How often a condition is checked."""


Condition = Callable[[], bool] | Callable[[], Awaitable[bool]]
"""What a wait waits for: a check, or a coroutine function that checks (a scrape, a query)."""

What = str | Callable[[], str]
"""What the failure says was awaited: a text, or a function giving it when the wait fails (the last state seen)."""


def _still_waiting(what: What, wait_s: float) -> AssertionError:
    return AssertionError(f"still waiting for {what() if callable(what) else what} after {wait_s:g} s")


async def _holds(condition: Condition) -> bool:
    result = condition()
    return await result if isinstance(result, Awaitable) else result


async def until(
    condition: Condition,
    wait_s: float = WAIT_S,
    what: What = "the condition",
    *,
    every_s: float = EVERY_S,
    changed: asyncio.Event | None = None,
) -> None:
    """Return as soon as ``condition()`` holds (awaited when it is a coroutine function); ``AssertionError``
    naming ``what`` after ``wait_s``. It is checked every ``every_s`` (0: at each turn of the loop), or, given
    ``changed``, each time that event is set (it is cleared before each check, so whoever changes the state
    sets it after the change).

    For state another task, thread or process updates (a caller's counters, a server's gauge, a log file); a
    wait on messages is ``testing.sockets.read_until``."""
    deadline = time.monotonic() + wait_s
    while True:
        if changed is not None:
            changed.clear()  # before the check: a change after it is not missed
        if await _holds(condition):
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise _still_waiting(what, wait_s)
        if changed is None:
            await asyncio.sleep(min(every_s, left))
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)


def until_sync(
    condition: Callable[[], bool], wait_s: float = WAIT_S, what: What = "the condition", *, every_s: float = EVERY_S
) -> None:
    """``until`` for code with no event loop (a thread starting a server, a test driving a process)."""
    deadline = time.monotonic() + wait_s
    while not condition():
        if time.monotonic() >= deadline:
            raise _still_waiting(what, wait_s)
        time.sleep(every_s)


async def within(awaitable: Awaitable[T], wait_s: float = WAIT_S, what: What = "it") -> T:
    """The result of ``awaitable``; ``AssertionError`` naming ``what`` if it has none after ``wait_s`` (it is
    then cancelled)."""
    bound = asyncio.timeout(wait_s)
    try:
        async with bound:
            return await awaitable
    except TimeoutError:
        if bound.expired():
            raise _still_waiting(what, wait_s) from None
        raise  # the awaitable's own
