"""Socket helpers for tests and benchmarks that talk to a real server: read its JSON messages, wait for a
condition, pick a port, fetch a URL, send audio at the pace of a live caller, and end a phone call as a hang-up
ends it, seeing how the server closed it.

Every wait here is bounded and fails loudly (``AssertionError`` saying what was awaited) rather than returning
as if it had succeeded; a test that must see nothing arrive says so itself. A wait on anything else is
``testing.waits`` (``until`` is also here, where tests have long found it). It changes when the way tests drive
a server over sockets changes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.protocol import State

from clients.framing import FramePacer
from clients.phone_caller import Ending, PhoneCaller
from testing.waits import WAIT_S, until, within

__all__ = [
    "WAIT_S",
    "FrameClock",
    "HttpResponse",
    "free_port",
    "hang_up_cleanly",
    "http_get",
    "logged_hang_up",
    "next_json",
    "play_through",
    "read_until",
    "session_closes",
    "stream_speech",
    "until",
]


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


async def play_through(ws: ClientConnection, turn: int | None = None, wait_s: float = WAIT_S) -> list[dict[str, Any]]:
    """The JSON messages on ``ws`` up to and including the ``turn.metrics`` of ``turn`` (``None``: of the turn
    the next ``speech.stopped`` names; a greeting's turn before it does not count), as a client that plays each
    reply the moment it arrives: at each ``audio.end`` it marks all of that turn's audio played
    (``playback.mark``), so the turn ends when the reply is received rather than after the server's clock
    allowance for playback (docs/protocol.md). Each message must come within ``wait_s`` (``AssertionError``
    naming what was seen otherwise)."""
    seen: list[dict[str, Any]] = []
    rates: dict[int, int] = {}
    received: dict[int, int] = {}  # audio bytes, by turn
    playing: int | None = None
    while True:
        try:
            message = await asyncio.wait_for(ws.recv(), wait_s)
        except TimeoutError:
            types = [m["type"] for m in seen]
            raise AssertionError(f"no turn.metrics within {wait_s} s of the last message; after: {types}") from None
        if isinstance(message, bytes):
            if playing is not None:
                received[playing] = received.get(playing, 0) + len(message)
            continue
        body: dict[str, Any] = json.loads(message)
        seen.append(body)
        kind = body["type"]
        if kind == "speech.stopped" and turn is None:
            turn = body["turn"]
        elif kind == "audio.start":
            playing, rates[body["turn"]] = body["turn"], body["sample_rate"]
        elif kind == "audio.end" and body["turn"] in rates:
            played_ms = received.get(body["turn"], 0) * 1000 // (2 * rates[body["turn"]])
            await ws.send(json.dumps({"type": "playback.mark", "turn": body["turn"], "played_ms": played_ms}))
        elif kind == "turn.metrics" and body["turn"] == turn:
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


async def stream_speech(
    ws: ClientConnection,
    audio: bytes,
    stop: asyncio.Event,
    *,
    spoken: asyncio.Event | None = None,
    frame_bytes: int = 640,
) -> int:
    """Send ``audio`` (PCM16 at the session's rate) over ``ws`` as a live caller does: one ``frame_bytes`` frame
    per 20 ms (``FrameClock``), the last padded with silence, then silence until ``stop``. ``spoken`` is set once
    the last frame of ``audio`` has been sent. Returns the frames sent."""
    sent = 0
    async for _ in FrameClock(0.02):
        if stop.is_set():
            break
        if not audio and spoken is not None:
            spoken.set()
        frame, audio = audio[:frame_bytes].ljust(frame_bytes, b"\x00"), audio[frame_bytes:]
        await ws.send(frame)
        sent += 1
    return sent


async def hang_up_cleanly(caller: PhoneCaller) -> None:
    """Hang up a call the server has kept open, and see the server end it as a hang-up ends it.

    Twilio and Telnyx send ``stop``: the server ends the session and closes first, with 1000 ``session ended``
    (a stop before the start would be ``stream stopped``). Vonage has no stop message: it closes the socket
    itself, and the server answers that close with 1000. A call the server had already dropped (any code, or
    none at all) fails here."""
    ws = caller.ws
    received = ws.protocol.close_rcvd
    dropped = f"{received.code} {received.reason!r}" if received is not None else ws.state.name
    assert ws.state is State.OPEN and received is None, f"the server dropped the call before the hang-up: {dropped}"
    await caller.hang_up()
    await within(ws.wait_closed(), what="the close after the hang-up")
    ending = Ending.of(ws, caller.stop_message() is not None)
    assert ending.clean, f"the server did not end the call as a hang-up: {ending}"


_CLOSED = re.compile(r"session \S+ (closed .*)")


def session_closes(records: Sequence[logging.LogRecord]) -> list[str]:
    """How the server's log says each session in ``records`` ended, in order: ``closed 1000 (session ended)``,
    ``closed by the client``, ``closed 1011 (internal error)`` (``agent.runtime.call.connection``, at INFO)."""
    return [m.group(1) for r in records if (m := _CLOSED.fullmatch(r.getMessage())) is not None]


async def logged_hang_up(records: Sequence[logging.LogRecord], *, stop_message: bool, wait_s: float = WAIT_S) -> None:
    """``hang_up_cleanly`` for a call whose socket the test does not hold (one the CLI placed and hung up): see, in
    the server's log, that it ended the call's session as a hang-up ends it. After the provider's stop message
    (Twilio, Telnyx), it closed 1000 ``session ended``; where the caller closes the socket itself (Vonage), the
    client closed it. A call the server dropped (1011, 1008, ...) fails here, and so does one it never logged
    the end of. ``records``: the server's log records, a list kept up to date (pytest's ``caplog.records``, with
    INFO captured), holding one session; the server logs its end once the closing handshake is over, which may be
    after the client has seen it."""
    await until(lambda: bool(session_closes(records)), wait_s, "the server's log of the end of the call")
    expected = "closed 1000 (session ended)" if stop_message else "closed by the client"
    assert session_closes(records) == [expected], (
        f"the server did not end the call as a hang-up: {session_closes(records)}"
    )
