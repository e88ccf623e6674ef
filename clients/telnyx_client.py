"""A simulated Telnyx media streaming caller: what Telnyx does on a call streamed to ``/telnyx``.

Written from Telnyx's media streaming reference (https://developers.telnyx.com/api-reference/websockets/
stream-call-media-over-websocket): the handshake carries ``x-telnyx-streaming-auth-token`` when a
``stream_auth_token`` was given; then ``connected``, ``start`` (``stream_id``; ``call_control_id``,
``custom_parameters``, ``media_format``), ``media`` frames of 20 ms (base64 RTP payload: PCMU or PCMA at
8 kHz, L16 big-endian at 8 or 16 kHz), ``mark`` echoes and ``stop``. What the server sends plays through the
simulated buffer of ``clients.phone_caller``: ``media`` adds its duration, a ``mark`` is echoed once the audio
before it has played, a ``clear`` empties the buffer and returns the queued marks, as Telnyx does::

    async with connect("ws://127.0.0.1:8765/telnyx") as ws:
        caller = TelnyxCaller(ws, voice="alice", encoding="PCMA")
        await caller.begin()
        caller.say(pcm16_8k)
        ...
        await caller.hang_up()                   # stop
"""

from __future__ import annotations

import base64
import json

from websockets.asyncio.client import ClientConnection

from agent.wires.phone.telnyx import codec as telnyx
from clients.phone_caller import PhoneCaller


class TelnyxCaller(PhoneCaller):
    def __init__(
        self,
        ws: ClientConnection,
        voice: str | None = None,
        encoding: str = "PCMU",
        rate: int = 8000,
        stream_id: str = "32DE0DEA-53CB-4B21-89A4-9E1819C043BC",
        call_control_id: str = "v3:call-0001",
    ) -> None:
        super().__init__(ws, rate)
        self.voice = voice
        self.format = telnyx.MediaFormat(encoding, rate)
        self.stream_id = stream_id
        self.call_control_id = call_control_id
        self._sequence = 0
        self._chunk = 0

    def _envelope(self, event: str, **body: object) -> str:
        self._sequence += 1
        return json.dumps({"event": event, "sequence_number": str(self._sequence), **body, "stream_id": self.stream_id})

    async def open(self) -> None:
        await self.send_json({"event": "connected", "version": "1.0.0"})
        params = {"voice": self.voice} if self.voice else {}
        start = {
            "user_id": "3E6F995F-85F7-4705-9741-53B116D28237",
            "call_control_id": self.call_control_id,
            "call_session_id": "ff55a038-6f5d-11ef-9692-02420aeffb1f",
            "from": "+13122010094",
            "to": "+13122123456",
            "tags": [],
            "client_state": "",
            "custom_parameters": params,
            "media_format": {"encoding": self.format.encoding, "sample_rate": self.format.sample_rate, "channels": 1},
        }
        await self.ws.send(self._envelope("start", start=start))

    def frame_message(self, pcm: bytes) -> str:
        self._chunk += 1
        payload = base64.b64encode(self.format.from_pcm(pcm)).decode("ascii")
        media = {"track": "inbound", "chunk": str(self._chunk), "timestamp": str(self._chunk * 20), "payload": payload}
        return self._envelope("media", media=media)

    def echo_message(self, name: str) -> str:
        return self._envelope("mark", mark={"name": name})

    def stop_message(self) -> str:
        return self._envelope("stop", stop={"user_id": "3E6F995F", "call_control_id": self.call_control_id})

    def on_message(self, raw: str | bytes, now: float) -> None:
        message = json.loads(raw)
        event = message.get("event")
        if event == "media":
            self.played(self.format.to_pcm(base64.b64decode(message["media"]["payload"])), now)
        elif event == "mark":
            self.marked(message["mark"]["name"], now)
        elif event == "clear":
            self.cleared(now)
        else:
            self.received.other.append(message)
