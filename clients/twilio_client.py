"""A simulated Twilio Media Streams caller: what Twilio does on a phone call, over one WebSocket.

Used by ``python -m clients.cli --twilio``, ``bench/twilio_pacing.py`` and the tests::

    async with connect("ws://127.0.0.1:8765/twilio") as ws:
        caller = TwilioCaller(ws, voice="alice")
        await caller.begin()                     # connected + start
        caller.say(pcm16_8k)                     # queued; silence is sent otherwise
        await caller.run_until(lambda: caller.replies_heard >= 1, timeout_s=60)
        await caller.hang_up()                   # stop

The caller sends 20 ms μ-law ``media`` frames at real-time pace (silence when it has nothing to say), and
plays what it receives through a simulated playout buffer: each ``media`` frame it receives adds 20 ms,
each ``mark`` is echoed when the audio before it has played, and a ``clear`` empties the buffer and echoes
the pending marks at once, as Twilio does. Everything received is recorded with its arrival time.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from agent.audio import mulaw
from clients.protocol_client import bearer

RATE = 8000
FRAME_BYTES = 320  # 20 ms of PCM16 at 8 kHz


@dataclass(slots=True)
class Received:
    """What the caller got from the server, with ``time.monotonic()`` arrival times."""

    media_times: list[float] = field(default_factory=list)
    audio: bytearray = field(default_factory=bytearray)  # PCM16 8 kHz, everything received
    marks: list[tuple[float, str]] = field(default_factory=list)
    clears: list[float] = field(default_factory=list)
    other: list[dict[str, Any]] = field(default_factory=list)


class TwilioCaller:
    def __init__(
        self, ws: ClientConnection, voice: str | None = None, stream_sid: str = "MZ0001", call_sid: str = "CA0001"
    ) -> None:
        self.ws = ws
        self.voice = voice
        self.stream_sid = stream_sid
        self.call_sid = call_sid
        self.received = Received()
        self.echoed: list[str] = []  # mark names echoed back (what the caller has "heard")
        self.speech_onsets: list[float] = []  # when each queued utterance began to be sent
        self._outgoing: asyncio.Queue[bytes] = asyncio.Queue()
        self._playout_until = 0.0
        self._pending_marks: list[tuple[float, str]] = []
        self._chunk = 0
        self._tasks: list[asyncio.Task[None]] = []

    async def send_json(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def begin(self) -> None:
        """Send ``connected`` and ``start``, then stream audio and receive in the background."""
        await self.send_json({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        params = {"voice": self.voice} if self.voice else {}
        await self.send_json(
            {
                "event": "start",
                "sequenceNumber": "1",
                "streamSid": self.stream_sid,
                "start": {
                    "streamSid": self.stream_sid,
                    "callSid": self.call_sid,
                    "accountSid": "AC0001",
                    "tracks": ["inbound"],
                    "customParameters": params,
                    "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": RATE, "channels": 1},
                },
            }
        )
        self._tasks = [asyncio.create_task(self._send_loop()), asyncio.create_task(self._receive_loop())]

    def say(self, pcm16_8k: bytes) -> None:
        """Queue an utterance (PCM16 mono at 8 kHz); it goes out in 20 ms frames after what is queued."""
        self._outgoing.put_nowait(pcm16_8k)

    def media_message(self, pcm: bytes) -> dict[str, Any]:
        self._chunk += 1
        payload = base64.b64encode(mulaw.encode(pcm)).decode("ascii")
        return {
            "event": "media",
            "streamSid": self.stream_sid,
            "media": {
                "track": "inbound",
                "chunk": str(self._chunk),
                "timestamp": str(self._chunk * 20),
                "payload": payload,
            },
        }

    async def _send_loop(self) -> None:
        pending = b""
        start = time.monotonic()
        sent = 0
        while True:
            if not pending and not self._outgoing.empty():
                pending = self._outgoing.get_nowait()
                self.speech_onsets.append(time.monotonic())
            frame, pending = pending[:FRAME_BYTES], pending[FRAME_BYTES:]
            await self.send_json(self.media_message(frame.ljust(FRAME_BYTES, b"\x00")))
            sent += 1
            self._echo_due_marks()
            await asyncio.sleep(max(0.0, start + sent * 0.02 - time.monotonic()))

    def _echo_due_marks(self) -> None:
        now = time.monotonic()
        while self._pending_marks and self._pending_marks[0][0] <= now:
            _, name = self._pending_marks.pop(0)
            self._echo(name)

    def _echo(self, name: str) -> None:
        self.echoed.append(name)
        message = {"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}}
        self._tasks.append(asyncio.create_task(self.send_json(message)))

    async def _receive_loop(self) -> None:
        try:
            async for raw in self.ws:
                now = time.monotonic()
                message = json.loads(raw)
                event = message.get("event")
                if event == "media":
                    pcm = mulaw.decode(base64.b64decode(message["media"]["payload"]))
                    self.received.media_times.append(now)
                    self.received.audio += pcm
                    self._playout_until = max(self._playout_until, now) + len(pcm) / (2 * RATE)
                elif event == "mark":
                    name = message["mark"]["name"]
                    self.received.marks.append((now, name))
                    self._pending_marks.append((self._playout_until, name))
                elif event == "clear":
                    self.received.clears.append(now)
                    self._playout_until = now
                    for _, name in self._pending_marks:
                        self._echo(name)
                    self._pending_marks.clear()
                else:
                    self.received.other.append(message)
        except ConnectionClosed:
            pass

    async def run_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline or self.ws.close_code is not None:
                return False
            await asyncio.sleep(0.02)
        return True

    async def hang_up(self) -> None:
        """Send ``stop`` and stop streaming."""
        for task in self._tasks[:2]:
            task.cancel()
        with contextlib.suppress(ConnectionClosed):
            await self.send_json({"event": "stop", "streamSid": self.stream_sid, "stop": {"callSid": self.call_sid}})
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def call(
    url: str,
    pcm16_8k: bytes,
    *,
    voice: str | None = None,
    headers: dict[str, str] | None = None,
    token: str | None = None,
    settle_s: float = 2.0,
    timeout_s: float = 60.0,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[TwilioCaller, bool]:
    """Play ``pcm16_8k`` to ``/twilio`` as a caller and listen until the replies have settled.

    Settled: the whole input was sent, some reply audio arrived, and none for ``settle_s``. Returns the
    caller (with everything received) and whether it settled before ``timeout_s``. Raises the
    ``websockets`` exceptions of ``connect`` (e.g. ``InvalidStatus`` for a 403 on a bad signature).
    ``token``: an access token sent as ``Authorization: Bearer`` (a server with auth on and no Twilio token).
    """
    say = on_progress or (lambda _text: None)
    async with connect(url, additional_headers={**(headers or {}), **bearer(token)}) as ws:
        caller = TwilioCaller(ws, voice=voice)
        await caller.begin()
        caller.say(pcm16_8k)
        sent_at = time.monotonic() + len(pcm16_8k) / (2 * RATE)
        got = caller.received
        reported = [0, 0]

        def settled() -> bool:
            if len(got.media_times) // 50 > reported[0]:
                reported[0] = len(got.media_times) // 50
                seconds = len(got.media_times) * 20 / 1000
                say(f"  received {seconds:.1f} s of reply audio, {len(caller.echoed)} marks played")
            if len(got.clears) > reported[1]:
                reported[1] = len(got.clears)
                say("  clear (barge-in): playback buffer emptied")
            now = time.monotonic()
            return now > sent_at and bool(got.media_times) and now - got.media_times[-1] > settle_s

        done = await caller.run_until(settled, timeout_s + len(pcm16_8k) / (2 * RATE))
        await caller.hang_up()
    return caller, done
