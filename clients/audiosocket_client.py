"""A simulated Asterisk: what ``AudioSocket(uuid,host:port)`` does on a call, over one TCP connection.

Written from the protocol documentation (https://docs.asterisk.org/Configuration/Channel-Drivers/AudioSocket/),
not from the server's codec: each message is ``kind (1 byte) | payload length (2 bytes, big-endian) |
payload``. Used by ``python -m clients.cli audiosocket`` and the tests::

    caller = await AudioSocketCaller.connect("127.0.0.1", 9092)
    await caller.begin()                     # the call's UUID (0x01), then audio in the background
    caller.say(pcm16_8k)                     # queued; silence is sent otherwise
    await caller.run_until(lambda: caller.received.audio_ms >= 1000, timeout_s=60)
    await caller.hang_up()                   # 0x00, then close

Like Asterisk, the caller sends 20 ms of signed linear 8 kHz audio (``0x10``, 320 bytes) every 20 ms, silence
when it has nothing to say, and plays what it receives as it arrives: a simulated playout adds each audio
message's duration, so ``heard_ms`` is what a phone would have played by now. Audio arriving faster than real
time piles up in that playout (the server must pace it). ``0x00`` from the server ends the call; any other
kind is recorded in ``received.other`` (Asterisk would end the call on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

RATE = 8000
FRAME_BYTES = 320  # 20 ms of PCM16 at 8 kHz
HANGUP, UUID, DTMF, AUDIO = 0x00, 0x01, 0x03, 0x10


def message(kind: int, payload: bytes = b"") -> bytes:
    return struct.pack(">BH", kind, len(payload)) + payload


@dataclass(slots=True)
class Received:
    """What the caller got from the server, with ``time.monotonic()`` arrival times."""

    audio_times: list[float] = field(default_factory=list)
    audio_sizes: list[int] = field(default_factory=list)
    audio_sent: list[int] = field(default_factory=list)
    """For each audio frame received, how many 20 ms frames the caller had sent by then: the caller's own audio
    time, which a loaded machine cannot squeeze as it can the arrival times (frames delayed, then in a burst)."""
    audio: bytearray = field(default_factory=bytearray)  # PCM16 8 kHz, everything received
    hangup_at: float | None = None
    closed_at: float | None = None
    other: list[int] = field(default_factory=list)  # kinds Asterisk does not take from a server

    @property
    def audio_ms(self) -> float:
        return len(self.audio) / (2 * RATE) * 1000


class AudioSocketCaller:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, call: uuid.UUID | None = None
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.call = call or uuid.uuid4()
        self.received = Received()
        self.speech_onsets: list[float] = []  # when each queued utterance began to be sent
        self.sent_frames = 0
        self._outgoing: asyncio.Queue[bytes] = asyncio.Queue()
        self._playout_until = 0.0
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    async def connect(cls, host: str, port: int, call: uuid.UUID | None = None) -> AudioSocketCaller:
        """Open the TCP connection. Raises ``OSError`` when nothing listens there."""
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer, call)

    @property
    def ended(self) -> bool:
        return self.received.hangup_at is not None or self.received.closed_at is not None

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def begin(self) -> None:
        """Send the call's UUID, then stream audio and receive in the background."""
        await self.send(message(UUID, self.call.bytes))
        self._tasks = [asyncio.create_task(self._send_loop()), asyncio.create_task(self._receive_loop())]

    def say(self, pcm16_8k: bytes) -> None:
        """Queue an utterance (PCM16 mono at 8 kHz); it goes out in 20 ms frames after what is queued."""
        self._outgoing.put_nowait(pcm16_8k)

    def heard_ms(self, now: float | None = None) -> float:
        """Reply audio the simulated phone has played by ``now`` (default: the current time)."""
        now = time.monotonic() if now is None else now
        return self.received.audio_ms - max(0.0, self._playout_until - now) * 1000

    async def _send_loop(self) -> None:
        pending = b""
        start = time.monotonic()
        sent = 0
        with contextlib.suppress(ConnectionError):
            while True:
                if not pending and not self._outgoing.empty():
                    pending = self._outgoing.get_nowait()
                    self.speech_onsets.append(time.monotonic())
                frame, pending = pending[:FRAME_BYTES], pending[FRAME_BYTES:]
                await self.send(message(AUDIO, frame.ljust(FRAME_BYTES, b"\x00")))
                sent += 1
                self.sent_frames = sent
                await asyncio.sleep(max(0.0, start + sent * 0.02 - time.monotonic()))

    async def _receive_loop(self) -> None:
        got = self.received
        try:
            while True:
                kind, length = struct.unpack(">BH", await self.reader.readexactly(3))
                payload = await self.reader.readexactly(length)
                now = time.monotonic()
                if kind == AUDIO:
                    got.audio_times.append(now)
                    got.audio_sizes.append(len(payload))
                    got.audio_sent.append(self.sent_frames)
                    got.audio += payload
                    self._playout_until = max(self._playout_until, now) + len(payload) / (2 * RATE)
                elif kind == HANGUP:
                    got.hangup_at = now
                    self._tasks[0].cancel()  # like Asterisk: the call is over, the socket closed
                    self.writer.close()
                    return
                else:
                    got.other.append(kind)
        except (asyncio.IncompleteReadError, ConnectionError):
            got.closed_at = time.monotonic()

    async def run_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Wait until ``done()``; ``False`` when ``timeout_s`` passed or the server ended the call first."""
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline or self.ended:
                return done()
            await asyncio.sleep(0.02)
        return True

    async def hang_up(self) -> None:
        """Send a hangup (``0x00``) unless the server hung up first, and close the connection."""
        for task in self._tasks[:1]:
            task.cancel()
        if not self.ended:
            with contextlib.suppress(ConnectionError):
                await self.send(message(HANGUP))
        await self.close()

    async def close(self) -> None:
        """Close the connection (without a hangup: what a crashed PBX does)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


async def call(
    host: str,
    port: int,
    pcm16_8k: bytes,
    *,
    call_id: uuid.UUID | None = None,
    settle_s: float = 2.0,
    timeout_s: float = 60.0,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[AudioSocketCaller, bool]:
    """Play ``pcm16_8k`` to an AudioSocket server as Asterisk would and listen until the replies have settled.

    Settled: the whole input was sent, some reply audio arrived, and none for ``settle_s``. Returns the caller
    (with everything received) and whether it settled before ``timeout_s`` (or the server hung up after
    answering). Raises ``OSError`` when nothing listens at ``host:port``."""
    say = on_progress or (lambda _text: None)
    caller = await AudioSocketCaller.connect(host, port, call_id)
    try:
        await caller.begin()
        caller.say(pcm16_8k)
        sent_at = time.monotonic() + len(pcm16_8k) / (2 * RATE)
        got = caller.received
        reported = [0]

        def settled() -> bool:
            if len(got.audio_times) // 50 > reported[0]:
                reported[0] = len(got.audio_times) // 50
                say(f"  received {got.audio_ms / 1000:.1f} s of reply audio, {caller.heard_ms() / 1000:.1f} s played")
            now = time.monotonic()
            return now > sent_at and bool(got.audio_times) and now - got.audio_times[-1] > settle_s

        done = await caller.run_until(settled, timeout_s + len(pcm16_8k) / (2 * RATE))
        if got.hangup_at is not None:
            say("  the server hung up")
            done = done or bool(got.audio_times)
    finally:
        await caller.hang_up()
    return caller, done
