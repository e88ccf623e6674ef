"""What every simulated phone gateway does on its WebSocket, whatever the provider: ``PhoneCaller``.

A gateway streams the caller's audio in 20 ms frames at real-time pace (silence when the caller has nothing to
say) and plays what it receives through a playout buffer: each frame of reply audio adds its duration, each
mark (Twilio and Telnyx ``mark``, Vonage ``notify``) is echoed when the audio before it has played, and a clear
empties the buffer. Everything received is recorded with its ``time.monotonic()`` arrival time. A subclass
says how its provider writes each of these (``clients.twilio_client``, ``clients.telnyx_client``,
``clients.vonage_client``); ``call`` plays a whole call and listens until the replies have settled, and
``Ending`` says how it ended: as a hang-up ends it, or dropped by the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from clients.protocol_client import bearer

FRAME_MS = 20
CLOSE_WAIT_S = 10.0
"""How long ``call`` waits for the server's close after the hang-up."""


@dataclass(slots=True)
class Received:
    """What the caller got from the server, with ``time.monotonic()`` arrival times."""

    media_times: list[float] = field(default_factory=list)
    media_sent_ms: list[int] = field(default_factory=list)
    """For each reply frame, how much of the caller's own stream (ms, speech and silence) had been sent then."""
    audio: bytearray = field(default_factory=bytearray)  # PCM16 at the call's rate, everything received
    marks: list[tuple[float, str]] = field(default_factory=list)
    clears: list[float] = field(default_factory=list)
    other: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Ending:
    """How a call's WebSocket ended after the caller hung up: the close frame received (``code``, ``reason``;
    ``None``: the connection was cut, not closed) and whether the server sent its close first (``server_first``).

    A hang-up ends a call cleanly when the server ends the session on the provider's stop message (Twilio,
    Telnyx: it closes first, 1000 ``session ended``) or, for a provider without one (Vonage), answers the
    caller's own close with 1000."""

    code: int | None
    reason: str
    server_first: bool | None
    stop_message: bool

    @classmethod
    def of(cls, ws: ClientConnection, stop_message: bool) -> Ending:
        received = ws.protocol.close_rcvd
        if received is None:
            return cls(None, "", None, stop_message)
        return cls(received.code, received.reason, ws.protocol.close_rcvd_then_sent, stop_message)

    @property
    def clean(self) -> bool:
        if self.stop_message:
            return self.server_first is True and (self.code, self.reason) == (1000, "session ended")
        return self.server_first is False and self.code == 1000

    def __str__(self) -> str:
        if self.code is None:
            return "the connection was cut, not closed"
        who = "the server" if self.server_first else "the caller, answered by the server with"
        return f"closed by {who} {self.code}" + (f" {self.reason!r}" if self.reason else "")


class PhoneCaller:
    """One simulated call. Subclasses write the provider's messages; this class keeps time and the buffer."""

    def __init__(self, ws: ClientConnection, rate: int) -> None:
        self.ws = ws
        self.rate = rate
        self.frame_bytes = rate * 2 * FRAME_MS // 1000  # PCM16
        self.frames_sent = 0
        self.received = Received()
        self.echoed: list[str] = []  # mark names echoed back (what the caller has "heard")
        self.speech_onsets: list[float] = []  # when each queued utterance began to be sent
        self._outgoing: asyncio.Queue[bytes] = asyncio.Queue()
        self._playout_until = 0.0
        self._pending_marks: list[tuple[float, str]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self.ending: Ending | None = None
        """How the call ended (``call`` sets it once the socket is closed)."""

    # --- what a provider writes ------------------------------------------------------------------------

    async def open(self) -> None:
        """Send what the provider sends before the caller's audio (``connected``, ``start``...)."""
        raise NotImplementedError

    def frame_message(self, pcm: bytes) -> str | bytes:
        """The message carrying one 20 ms frame of caller audio (PCM16 at ``rate``)."""
        raise NotImplementedError

    def echo_message(self, name: str) -> str:
        """The message telling the server its mark ``name`` has played."""
        raise NotImplementedError

    def on_message(self, raw: str | bytes, now: float) -> None:
        """Handle one server message: call ``played``, ``marked``, ``cleared``, or record it in ``other``."""
        raise NotImplementedError

    def stop_message(self) -> str | None:
        """The message that ends the stream (``None``: the provider just closes the socket)."""
        return None

    # --- the playout buffer ----------------------------------------------------------------------------

    def played(self, pcm: bytes, now: float) -> None:
        """Reply audio arrived: it plays after what is buffered."""
        self.received.media_times.append(now)
        self.received.media_sent_ms.append(self.frames_sent * FRAME_MS)
        self.received.audio += pcm
        self._playout_until = max(self._playout_until, now) + len(pcm) / (2 * self.rate)

    def marked(self, name: str, now: float) -> None:
        """A mark arrived: echo it once the audio before it has played."""
        self.received.marks.append((now, name))
        self._pending_marks.append((self._playout_until, name))

    def cleared(self, now: float, *, echo_pending: bool = True) -> None:
        """A clear arrived: the buffer is emptied; the pending marks are echoed at once (Twilio and Telnyx)
        or forgotten."""
        self.received.clears.append(now)
        self._playout_until = now
        if echo_pending:
            for _, name in self._pending_marks:
                self._echo(name)
        self._pending_marks.clear()

    # --- the call ----------------------------------------------------------------------------------------

    async def send_json(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def begin(self) -> None:
        """Open the stream, then stream audio and receive in the background."""
        await self.open()
        self._tasks = [asyncio.create_task(self._send_loop()), asyncio.create_task(self._receive_loop())]

    def say(self, pcm: bytes) -> None:
        """Queue an utterance (PCM16 mono at ``rate``); it goes out in 20 ms frames after what is queued."""
        self._outgoing.put_nowait(pcm)

    async def _send_loop(self) -> None:
        pending = b""
        start = time.monotonic()
        sent = 0
        while True:
            if not pending and not self._outgoing.empty():
                pending = self._outgoing.get_nowait()
                self.speech_onsets.append(time.monotonic())
            frame, pending = pending[: self.frame_bytes], pending[self.frame_bytes :]
            await self.ws.send(self.frame_message(frame.ljust(self.frame_bytes, b"\x00")))
            sent += 1
            self.frames_sent = sent
            self._echo_due_marks()
            await asyncio.sleep(max(0.0, start + sent * FRAME_MS / 1000 - time.monotonic()))

    def _echo_due_marks(self) -> None:
        now = time.monotonic()
        while self._pending_marks and self._pending_marks[0][0] <= now:
            _, name = self._pending_marks.pop(0)
            self._echo(name)

    def _echo(self, name: str) -> None:
        self.echoed.append(name)
        self._tasks.append(asyncio.create_task(self.ws.send(self.echo_message(name))))

    async def _receive_loop(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                self.on_message(raw, time.monotonic())

    async def run_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline or self.ws.close_code is not None:
                return False
            await asyncio.sleep(0.02)
        return True

    async def hang_up(self) -> None:
        """Stop streaming and end the stream (the provider's stop message, if it has one)."""
        for task in self._tasks[:2]:
            task.cancel()
        stop = self.stop_message()
        with contextlib.suppress(ConnectionClosed):
            if stop is not None:
                await self.ws.send(stop)
            else:
                await self.ws.close()
        await asyncio.gather(*self._tasks, return_exceptions=True)


Caller = TypeVar("Caller", bound=PhoneCaller)


async def call(
    make: Callable[[ClientConnection], Caller],
    url: str,
    pcm: bytes,
    *,
    headers: dict[str, str] | None = None,
    token: str | None = None,
    settle_s: float = 2.0,
    timeout_s: float = 60.0,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[Caller, bool]:
    """Play ``pcm`` (PCM16 at the caller's rate) to ``url`` as the caller ``make`` builds, and listen until the
    replies have settled: the whole input was sent, some reply audio arrived, and none for ``settle_s``.

    Returns the caller (with everything received, and ``ending``: how the server ended the call once the caller
    hung up) and whether it settled before ``timeout_s``. Raises the ``websockets`` exceptions of ``connect``
    (``InvalidStatus`` for a refused handshake) and ``OSError``.
    ``token``: an access token sent as ``Authorization: Bearer`` (a server with auth on).
    """
    say = on_progress or (lambda _text: None)
    async with connect(url, additional_headers={**(headers or {}), **bearer(token)}) as ws:
        caller = make(ws)
        await caller.begin()
        caller.say(pcm)
        seconds = len(pcm) / (2 * caller.rate)
        sent_at = time.monotonic() + seconds
        got = caller.received
        reported = [0, 0]

        def settled() -> bool:
            if len(got.media_times) // 50 > reported[0]:
                reported[0] = len(got.media_times) // 50
                heard = len(got.media_times) * FRAME_MS / 1000
                say(f"  received {heard:.1f} s of reply audio, {len(caller.echoed)} marks played")
            if len(got.clears) > reported[1]:
                reported[1] = len(got.clears)
                say("  clear (barge-in): playback buffer emptied")
            now = time.monotonic()
            return now > sent_at and bool(got.media_times) and now - got.media_times[-1] > settle_s

        done = await caller.run_until(settled, timeout_s + seconds)
        await caller.hang_up()
        with contextlib.suppress(TimeoutError):  # a server that never closes: the call ends as cut
            await asyncio.wait_for(ws.wait_closed(), CLOSE_WAIT_S)
        caller.ending = Ending.of(ws, caller.stop_message() is not None)
    return caller, done
