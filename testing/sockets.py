"""Socket helpers for tests and benchmarks that talk to a real server: read its JSON messages, wait for a
condition, pick a port, fetch a URL, and send audio at the pace of a live caller.

Every wait here is bounded and fails loudly (``AssertionError`` saying what was awaited) rather than returning
as if it had succeeded; a test that must see nothing arrive says so itself. A wait on anything else is
``testing.waits`` (``until`` is also here, where tests have long found it). It changes when the way tests drive
a server over sockets changes.
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection

from clients.framing import FramePacer
from testing.waits import WAIT_S, until

__all__ = ["WAIT_S", "FrameClock", "HttpResponse", "free_port", "http_get", "next_json", "read_until", "until"]


async def next_json(ws: ClientConnection, wait_s: float = WAIT_S) -> dict[str, Any]:
    """The next text message on ``ws``, parsed; binary messages (audio) before it are skipped.

    Raises ``TimeoutError`` when no text message comes within ``wait_s``, and ``ConnectionClosed`` when the
    server closes first."""
    while True:
        message = await asyncio.wait_for(ws.recv(), wait_s)
        if isinstance(message, str):
            body: dict[str, Any] = json.loads(message)
            return body


async def read_until(ws: ClientConnection, kind: str, wait_s: float = WAIT_S) -> list[dict[str, Any]]:
    """The JSON messages on ``ws`` up to and including the first of type ``kind``; each must come within
    ``wait_s`` (``AssertionError`` naming what was seen otherwise)."""
    seen: list[dict[str, Any]] = []
    while True:
        try:
            message = await next_json(ws, wait_s)
        except TimeoutError:
            types = [m["type"] for m in seen]
            raise AssertionError(f"no {kind!r} within {wait_s} s of the last message; after: {types}") from None
        seen.append(message)
        if message["type"] == kind:
            return seen


def free_port() -> int:
    """A loopback TCP port free a moment ago, for a server started in another process (one in this process
    binds port 0 instead): the kernel hands out ephemeral ports in turn, so parallel test processes get
    different ones."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """What a GET answered, error statuses included."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


def http_get(url: str, timeout_s: float = WAIT_S) -> HttpResponse:
    """GET ``url`` (blocking: call it through ``asyncio.to_thread`` from a test's loop). An HTTP error status is
    an answer like any other; a connection that fails or hangs past ``timeout_s`` raises."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return HttpResponse(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as exc:
        return HttpResponse(exc.code, dict(exc.headers), exc.read())


class FrameClock:
    """Real-time pace for a caller: an async iterator over frame numbers 0, 1, 2, ... where frame ``n`` is
    released ``n * frame_s`` after the first (at once), on ``FramePacer``'s schedule, so sleep overshoot never
    accumulates. Send one frame per step::

        async for _ in FrameClock(0.02):
            if stop.is_set():
                break
            await ws.send(next_frame())
    """

    def __init__(self, frame_s: float = 0.02) -> None:
        self._pacer = FramePacer(frame_s)
        self._frame = -1

    def __aiter__(self) -> FrameClock:
        return self

    async def __anext__(self) -> int:
        await self._pacer.wait()
        self._frame += 1
        return self._frame
