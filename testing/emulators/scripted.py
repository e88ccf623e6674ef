"""What the streaming LLM emulators share: a loopback aiohttp server that plays a script per call.

Each call takes the next queued plan (``script(steps)``) or the emulator's default reply. A plan is a list of
steps: bytes to write, a ``Pause``, a ``Gate`` (held until the test opens it), a ``Hang`` (send nothing more
until the client closes) or a ``Disconnect`` (drop the connection abruptly). Calls are recorded by the
subclass; ``client_closed`` is set when a client drops a stream before it ended, ``completed_streams`` counts
the ones played to the end.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from aiohttp import web

from testing.waits import within


@dataclass(frozen=True, slots=True)
class Pause:
    """Wait before the next frame (streaming latency)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Gate:
    """Send nothing more until the test opens the gate (``opened.set()``): what the client does with what it has
    so far is then ordered against what the server sends next, with no clock (``gated`` makes one per pause)."""

    opened: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True, slots=True)
class Hang:
    """Send nothing more; wait until the client closes the connection."""


@dataclass(frozen=True, slots=True)
class Disconnect:
    """Drop the connection abruptly (a broken stream: no terminating frame)."""


Step = bytes | Pause | Gate | Hang | Disconnect


def gated(steps: list[Step]) -> tuple[list[Step], list[Gate]]:
    """``steps`` with each ``Pause`` replaced by a ``Gate``, and the gates in order."""
    gates = [Gate() for step in steps if isinstance(step, Pause)]
    opened = iter(gates)
    return [next(opened) if isinstance(step, Pause) else step for step in steps], gates


T = TypeVar("T")
Failure = TypeVar("Failure")


async def one_by_one(stream: AsyncGenerator[T, None], gates: list[Gate]) -> list[T]:
    """Open ``gates`` one at a time and take one item of ``stream`` after each: every item must come while the
    later ones are still held back by the server (streamed, not buffered to the end); after the last, the
    stream must end. Returns the items."""
    got: list[T] = []
    try:
        for gate in gates:
            gate.opened.set()
            got.append(await within(anext(stream), what=f"item {len(got) + 1} while the rest is held back"))
        rest = await within(_rest(stream), what="the end of the stream")
    finally:
        await stream.aclose()
    assert rest == [], f"more than one item a gate: {rest}"
    return got


async def _rest(stream: AsyncGenerator[T, None]) -> list[T]:
    return [item async for item in stream]


async def wait_for_client_close(request: web.Request) -> None:
    """Return once the client has closed the connection of ``request``."""
    # aiohttp signals a peer close only by cancelling the handler (off by default), so poll the transport.
    while request.transport is not None and not request.transport.is_closing():  # noqa: ASYNC110
        await asyncio.sleep(0.005)


class ScriptedServer(Generic[Failure]):
    """Base of the emulators: lifecycle, the plan queue, and playing a plan into a streaming response.

    A queued plan is either a list of steps or a ``Failure`` (the emulator's own HTTP-error description).
    Subclasses add their routes in ``routes``.
    """

    def __init__(self) -> None:
        self.client_closed = asyncio.Event()
        self.completed_streams = 0
        self._plans: deque[list[Step] | Failure] = deque()
        self._runner: web.AppRunner | None = None
        self._port = 0

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def script(self, steps: list[Step]) -> None:
        self._plans.append(steps)

    def next_plan(self, default: list[Step]) -> list[Step] | Failure:
        return self._plans.popleft() if self._plans else default

    async def __aenter__(self) -> ScriptedServer[Failure]:
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def play(self, request: web.Request, response: web.StreamResponse, plan: list[Step]) -> None:
        """Write ``plan`` into the prepared ``response``, noting how the stream ended."""
        try:
            for step in plan:
                if isinstance(step, Pause):
                    await asyncio.sleep(step.seconds)
                elif isinstance(step, Gate):
                    await step.opened.wait()
                elif isinstance(step, Hang):
                    await wait_for_client_close(request)
                    self.client_closed.set()
                    return
                elif isinstance(step, Disconnect):
                    if request.transport is not None:
                        request.transport.abort()
                    return
                else:
                    await response.write(step)
            await response.write_eof()
            self.completed_streams += 1
        except ConnectionError:
            self.client_closed.set()
