"""A simulated Twilio Media Streams caller: what Twilio does on a phone call, over one WebSocket.

Used by ``python -m clients.cli twilio``, ``bench/twilio_pacing.py`` and the tests::

    async with connect("ws://127.0.0.1:8765/twilio") as ws:
        caller = TwilioCaller(ws, voice="alice")
        await caller.begin()                     # connected + start
        caller.say(pcm16_8k)                     # queued; silence is sent otherwise
        await caller.run_until(lambda: len(caller.received.media_times) >= 50, timeout_s=60)
        await caller.hang_up()                   # stop

The caller sends 20 ms μ-law ``media`` frames at real-time pace and plays what it receives through a
simulated playout buffer (``clients.phone_caller``): each ``media`` frame adds 20 ms, each ``mark`` is echoed
when the audio before it has played, and a ``clear`` empties the buffer and echoes the pending marks at once,
as Twilio does. Reference: https://www.twilio.com/docs/voice/media-streams/websocket-messages
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection

from agent.audio import mulaw
from clients import phone_caller
from clients.phone_caller import PhoneCaller, Received

RATE = 8000
FRAME_BYTES = 320  # 20 ms of PCM16 at 8 kHz

__all__ = ["FRAME_BYTES", "RATE", "Received", "TwilioCaller", "call"]


class TwilioCaller(PhoneCaller):
    def __init__(
        self, ws: ClientConnection, voice: str | None = None, stream_sid: str = "MZ0001", call_sid: str = "CA0001"
    ) -> None:
        super().__init__(ws, RATE)
        self.voice = voice
        self.stream_sid = stream_sid
        self.call_sid = call_sid
        self._chunk = 0

    async def open(self) -> None:
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

    def frame_message(self, pcm: bytes) -> str:
        return json.dumps(self.media_message(pcm))

    def echo_message(self, name: str) -> str:
        return json.dumps({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}})

    def stop_message(self) -> str:
        return json.dumps({"event": "stop", "streamSid": self.stream_sid, "stop": {"callSid": self.call_sid}})

    def on_message(self, raw: str | bytes, now: float) -> None:
        message = json.loads(raw)
        event = message.get("event")
        if event == "media":
            self.played(mulaw.decode(base64.b64decode(message["media"]["payload"])), now)
        elif event == "mark":
            self.marked(message["mark"]["name"], now)
        elif event == "clear":
            self.cleared(now)
        else:
            self.received.other.append(message)


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
    """Play ``pcm16_8k`` to ``/twilio`` as a caller and listen until the replies have settled
    (``clients.phone_caller.call``). Raises the ``websockets`` exceptions of ``connect`` (e.g. ``InvalidStatus``
    for a 403 on a bad signature). ``token``: sent as ``Authorization: Bearer`` (auth on, no Twilio token)."""
    return await phone_caller.call(
        lambda ws: TwilioCaller(ws, voice=voice),
        url,
        pcm16_8k,
        headers=headers,
        token=token,
        settle_s=settle_s,
        timeout_s=timeout_s,
        on_progress=on_progress,
    )
