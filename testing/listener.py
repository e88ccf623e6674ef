"""A caller on /ws who listens as a person's device does, for tests and benchmarks: it talks in real time, plays
every reply in real time, says what it played (``playback.mark`` every 100 ms), honours ``playback.pause`` and
``playback.clear``, and reads every message the server sends.

``Player`` is one turn's playout (what arrived where, what has played by now, the first copy of each position so
that audio sent again can be checked byte for byte); ``AudioSender`` streams 20 ms frames at real-time pace,
silence unless an utterance is queued; ``ListeningCaller`` runs both on an open session and records what the server
did (its messages, each pause as a ``HeardPause``, the close). It changes when what a listening client does on /ws
changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from testing.sockets import FrameClock

MARK_EVERY_S = 0.1
"""How often the listener says what it has played (a browser page's rate)."""


class Player:
    """A client's playout of one turn in real time: what it received where, what it has played."""

    def __init__(self, bytes_per_ms: float) -> None:
        self.bytes_per_ms = bytes_per_ms
        self.timeline = bytearray()  # first copy of each position of the turn's audio
        self.end_ms = 0.0  # buffered up to here
        self.base_ms = 0.0
        self.base_at: float | None = None
        self.stopped = False

    def played(self, now: float) -> float:
        if self.base_at is None:
            return 0.0
        return min(self.end_ms, self.base_ms + (now - self.base_at) * 1000.0)

    def receive(self, pcm: bytes, now: float) -> tuple[int, bool]:
        """Buffer ``pcm``; returns (its byte position in the turn, whether it matches the first copy there)."""
        if self.base_at is None:
            self.base_at = now
        at = round(self.end_ms * self.bytes_per_ms)
        known = self.timeline[at : at + len(pcm)]
        same = bytes(known) == pcm[: len(known)]
        if at + len(pcm) > len(self.timeline):
            self.timeline += pcm[len(self.timeline) - at :]
        if self.played(now) >= self.end_ms:  # starved: playing goes on from the buffer's end now
            self.base_ms, self.base_at = self.end_ms, now
        self.end_ms += len(pcm) / self.bytes_per_ms
        return at, same

    def pause(self, played_ms: float, now: float) -> None:
        self.base_ms = self.end_ms = played_ms
        self.base_at = now


class AudioSender:
    """Streams 20 ms frames at real time: silence, or a queued utterance; records when each utterance began."""

    def __init__(self, send: Callable[[bytes], Awaitable[Any]], rate: int) -> None:
        self._send = send
        self._frame = rate // 50 * 2
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.onsets: list[float] = []
        self.second = asyncio.Event()  # the second utterance has begun

    async def run(self) -> None:
        pending = b""
        async for _ in FrameClock(0.02):
            if not pending and not self.queue.empty():
                pending = self.queue.get_nowait()
                self.onsets.append(time.monotonic())
                if len(self.onsets) == 2:
                    self.second.set()
            frame, pending = pending[: self._frame], pending[self._frame :]
            await self._send(frame.ljust(self._frame, b"\x00"))


@dataclass(slots=True)
class HeardPause:
    """A ``playback.pause`` as the listening caller met it: what it had played, and where the server said the reply
    stopped."""

    turn: int
    heard_ms: float
    played_ms: int
    exact: bool = True
    """Every byte sent again after it was the reply's audio from ``played_ms`` on."""
    resent_bytes: int = 0


@dataclass(slots=True)
class Listened:
    """What the server did on the listener's call."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    pauses: list[HeardPause] = field(default_factory=list)
    audio_bytes: dict[int, int] = field(default_factory=dict)
    """Reply audio received, by turn."""
    closed: tuple[int, str] | None = None
    """The server's close (code, reason), if it closed the call."""

    def of(self, kind: str, turn: int | None = None) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == kind and (turn is None or m.get("turn") == turn)]


class ListeningCaller:
    """A caller that talks and listens as a device does, on ``ws``: a /ws session already started
    (``session.started`` read), whose reply audio comes at ``output_rate``; the caller's audio goes at ``rate``.
    ``run`` until the call ends or ``stop``."""

    def __init__(self, ws: ClientConnection, output_rate: int, rate: int = 16000) -> None:
        self.ws = ws
        self.rate = rate
        self.bytes_per_ms = output_rate * 2 / 1000
        self.sender = AudioSender(ws.send, rate)
        self.got = Listened()
        self.turn = 0
        """The turn playing (the latest ``audio.start``)."""
        self.player = Player(self.bytes_per_ms)
        self._stop = asyncio.Event()

    def say(self, pcm: bytes) -> None:
        """Queue an utterance (PCM16 at ``rate``): it goes out in real time after what is queued."""
        self.sender.queue.put_nowait(pcm)

    def played_ms(self) -> float:
        """What the listener has played of the turn playing."""
        return self.player.played(time.monotonic())

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> Listened:
        tasks = [asyncio.create_task(c) for c in (self.sender.run(), self._receive(), self._marks())]
        stopping = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait([tasks[1], stopping], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in [*tasks, stopping]:
                task.cancel()
            await asyncio.gather(*tasks, stopping, return_exceptions=True)
        return self.got

    async def _receive(self) -> None:
        got = self.got
        try:
            async for message in self.ws:
                now = time.monotonic()
                if isinstance(message, bytes):
                    got.audio_bytes[self.turn] = got.audio_bytes.get(self.turn, 0) + len(message)
                    if self.player.stopped:
                        continue
                    _, same = self.player.receive(message, now)
                    pause = got.pauses[-1] if got.pauses and got.pauses[-1].turn == self.turn else None
                    if pause is not None:
                        pause.exact = pause.exact and same
                        pause.resent_bytes += len(message)
                    continue
                event = json.loads(message)
                got.messages.append(event)
                kind, turn = event.get("type"), event.get("turn")
                if kind == "audio.start" and turn != self.turn:
                    self.turn = turn
                    self.player = Player(self.bytes_per_ms)
                elif kind == "playback.pause" and turn == self.turn:
                    got.pauses.append(HeardPause(turn, self.player.played(now), event["played_ms"]))
                    self.player.pause(event["played_ms"], now)
                elif kind == "playback.clear" and turn == self.turn:
                    self.player.stopped = True
        except ConnectionClosed as closed:
            if closed.rcvd is not None:
                got.closed = (closed.rcvd.code, closed.rcvd.reason)
        if got.closed is None and self.ws.close_code is not None:
            got.closed = (self.ws.close_code, self.ws.close_reason or "")

    async def _marks(self) -> None:
        while True:
            await asyncio.sleep(MARK_EVERY_S)
            player = self.player
            if self.turn and not player.stopped and player.base_at is not None:
                played = round(player.played(time.monotonic()))
                with contextlib.suppress(ConnectionClosed):
                    await self.ws.send(json.dumps({"type": "playback.mark", "turn": self.turn, "played_ms": played}))
