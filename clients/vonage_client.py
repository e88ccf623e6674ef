"""A simulated Vonage Voice API WebSocket: what Vonage does when an NCCO ``connect`` names ``/vonage``.

Written from Vonage's WebSockets guide (https://developer.vonage.com/en/voice/voice-api/concepts/websockets):
the handshake carries the endpoint's ``Authorization`` (``Bearer <JWT>`` signed with the signature secret, or
a custom value); the first message is ``websocket:connected`` with the ``content-type`` and the endpoint's
``headers`` at its top level; then binary frames of 20 ms linear PCM16 (640 bytes at 16 kHz, 320 at 8 kHz).
What the server sends plays through the simulated buffer of ``clients.phone_caller``: a binary frame adds
20 ms (frames of any other size are counted in ``wrong_sizes``, as Vonage requires exact frames); ``notify``
is answered with ``websocket:notify`` and its payload once the audio before it has played; ``clear`` empties
the buffer, forgets pending notifies and is answered with ``websocket:cleared``. Vonage has no stop message:
hanging up closes the socket::

    async with connect("ws://127.0.0.1:8765/vonage") as ws:
        caller = VonageCaller(ws, voice="alice", rate=16000)
        await caller.begin()
        caller.say(pcm16_16k)
        ...
        await caller.hang_up()
"""

from __future__ import annotations

import asyncio
import json
import time

from websockets.asyncio.client import ClientConnection

from agent.wires.phone.vonage import codec as vonage
from clients.phone_caller import PhoneCaller


class VonageCaller(PhoneCaller):
    def __init__(
        self, ws: ClientConnection, voice: str | None = None, rate: int = 16000, call_uuid: str = "aaaa-0001"
    ) -> None:
        super().__init__(ws, rate)
        self.voice = voice
        self.call_uuid = call_uuid
        self.wrong_sizes: list[int] = []  # reply frames that were not exactly 20 ms
        self._payloads: dict[str, object] = {}  # notify payloads by the mark they name

    async def open(self) -> None:
        headers = {"call_uuid": self.call_uuid, **({"voice": self.voice} if self.voice else {})}
        await self.send_json({"event": "websocket:connected", "content-type": f"audio/l16;rate={self.rate}", **headers})

    def frame_message(self, pcm: bytes) -> bytes:
        return pcm

    def echo_message(self, name: str) -> str:
        return json.dumps({"event": "websocket:notify", "payload": self._payloads.pop(name, {"mark": name})})

    def on_message(self, raw: str | bytes, now: float) -> None:
        if isinstance(raw, bytes):
            if len(raw) != self.frame_bytes:
                self.wrong_sizes.append(len(raw))
            self.played(raw, now)
            return
        message = json.loads(raw)
        action = message.get("action")
        if action == "notify":
            payload = message.get("payload", {})
            name = payload.get("mark") if isinstance(payload, dict) else None
            name = name if isinstance(name, str) else json.dumps(payload)
            self._payloads[name] = payload
            self.marked(name, now)
        elif action == "clear":
            self.cleared(now, echo_pending=False)
            self._payloads.clear()
            self._tasks.append(asyncio.create_task(self.send_json({"event": "websocket:cleared"})))
        else:
            self.received.other.append(message)

    def dtmf(self, digit: str) -> None:
        """The caller presses a key."""
        message = {"event": "websocket:dtmf", "digit": digit, "duration": 260}
        self._tasks.append(asyncio.create_task(self.send_json(message)))


def vonage_jwt(signature_secret: str, now: float | None = None) -> str:
    """The ``Authorization`` value Vonage sends with ``authorization.type`` vonage: ``Bearer`` and an HS256 JWT
    signed with the signature secret (claims as in Vonage's signed webhooks)."""
    issued = int(time.time() if now is None else now)
    claims = {"iat": issued, "jti": f"jti-{issued}", "iss": "Vonage", "api_key": "abcd1234", "application_id": "app"}
    return "Bearer " + vonage.jwt(signature_secret, claims)
