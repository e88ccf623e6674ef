"""Which asyncio event loop runs the server: uvloop where it is installed, else the standard one.

Every caller streams 50 audio frames a second, and most of a frame's cost on the server is the event loop's
own (socket readiness, callbacks, futures) and the WebSocket parser, not our code. uvloop (libuv, in C) halves
it: on one core, 300 connections sending 20 ms frames cost the plain websockets receive loop 71% of the core
with the standard loop and 32% with uvloop (docs/benchmarks.md). ``AGENT_SERVER__EVENT_LOOP``: ``auto`` (uvloop
when importable, which it is wherever the lock installs it: Linux and macOS), ``uvloop`` (required), or
``asyncio`` (the standard loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from agent.errors import ConfigError

T = TypeVar("T")
LoopChoice = Literal["auto", "asyncio", "uvloop"]
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory(choice: LoopChoice) -> LoopFactory | None:
    """The factory of the chosen loop (``None``: the standard one). Raises ``ConfigError`` for ``uvloop`` when
    it is not installed."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError as exc:
        if choice == "uvloop":
            raise ConfigError("AGENT_SERVER__EVENT_LOOP=uvloop, but uvloop is not installed") from exc
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def loop_name(factory: LoopFactory | None) -> str:
    return "asyncio" if factory is None else "uvloop"


def run(main: Coroutine[Any, Any, T], choice: LoopChoice = "auto") -> T:
    """``asyncio.run(main)`` on the chosen loop."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(main)
