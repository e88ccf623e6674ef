"""Vonage Voice API WebSockets (``/vonage``) on the telephony core: the codec ``agent.wires.phone.vonage.codec`` bound
to one call (``VonageGateway``) and the start decoder its opening (``agent.wires.phone.vonage.opening``) runs.

The call starts with ``websocket:connected``; its ``content-type`` fixes the rate (8 or 16 kHz, both ways)
and the endpoint's ``voice`` header picks the voice. Caller audio arrives as binary 20 ms frames; replies
leave as binary frames of exactly 20 ms, each followed by a ``notify`` whose payload names a mark (Vonage
answers ``websocket:notify`` once it has played the audio before it); barge-in and pauses send ``clear``.
Vonage has no message that ends the stream: the call ends when the socket closes.
"""

from __future__ import annotations

from agent.errors import ProtocolError
from agent.runtime.call.outbox import Payload
from agent.wires.phone import ids
from agent.wires.phone.telephony import CallMessage, HungUp, Keypress, MarkPlayed, PhoneStart
from agent.wires.phone.vonage import codec as vonage


class VonageGateway:
    provider = "vonage"

    def __init__(self, connected: vonage.Connected, call_id: str) -> None:
        self.connected = connected
        self.call_id = call_id
        self._clear = vonage.clear()

    @property
    def input_rate(self) -> int:
        return self.connected.rate

    @property
    def output_rate(self) -> int:
        return self.connected.rate

    def decode(self, message: str | bytes) -> CallMessage:
        match vonage.decode(message):
            case vonage.Audio(pcm=pcm):
                return pcm
            case vonage.Notify(mark=mark):
                return None if mark is None else MarkPlayed(mark)
            case vonage.Dtmf(digit=digit):
                return Keypress(digit)
            case vonage.Cleared():
                return None
            case vonage.Connected():
                raise ProtocolError("already_started", "the call has already started")

    def media(self, pcm: bytes) -> Payload:
        return vonage.audio(pcm, self.connected.rate)

    def mark(self, name: str) -> str:
        return vonage.notify(name)

    def clear(self) -> str:
        return self._clear


CALL_ID_HEADERS = ("call_uuid", "uuid", "conversation_uuid")
"""Endpoint headers that may name the call (set them in the NCCO to see the call's id in the logs); the first
one with an id's shape (``agent.wires.phone.ids``) does, else the call is ``-``."""


def vonage_start(message: str | bytes) -> PhoneStart | HungUp | None:
    """The ``StartDecoder`` of ``/vonage``: the first message must be ``websocket:connected``."""
    match vonage.decode(message):
        case vonage.Connected() as connected:
            headers = connected.headers
            call_id = next((headers[k] for k in CALL_ID_HEADERS if ids.is_id(headers.get(k))), "-")
            gateway = VonageGateway(connected, call_id)
            return PhoneStart(gateway, headers.get("voice") or None, headers.get("language") or None)
        case _:
            raise ProtocolError("not_started", "the call starts with websocket:connected")
