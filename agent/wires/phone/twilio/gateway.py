"""Twilio Media Streams (``/twilio``) on the telephony core: the codec ``agent.wires.phone.twilio.codec`` bound to one
call (``TwilioGateway``) and the start decoder its opening (``agent.wires.phone.twilio.opening``) runs.

Twilio sends ``connected`` then ``start``; the voice comes from ``start.customParameters.voice``. Caller
audio is μ-law 8 kHz; replies leave as ``media`` messages, each followed by a ``mark``; barge-in and pauses
send ``clear``. Pacing, marks, segments and dropped-message counting are ``agent.wires.phone.telephony``'s.
"""

from __future__ import annotations

from agent.errors import ProtocolError
from agent.runtime.call.outbox import Payload
from agent.wires.phone.telephony import CallMessage, HungUp, Keypress, MarkPlayed, PhoneStart
from agent.wires.phone.twilio import codec as twilio


class TwilioGateway:
    provider = "twilio"
    input_rate = twilio.RATE
    output_rate = twilio.RATE

    def __init__(self, start: twilio.Start) -> None:
        self.start = start
        self._clear = twilio.clear(start.stream_sid)

    @property
    def call_id(self) -> str:
        return self.start.call_sid

    def decode(self, message: str | bytes) -> CallMessage:
        match twilio.decode(message):
            case twilio.Media(pcm=pcm):
                return pcm
            case twilio.Mark(name=name):
                return MarkPlayed(name)
            case twilio.Stop():
                return HungUp()
            case twilio.Dtmf(digit=digit):
                return Keypress(digit)
            case twilio.Start() | twilio.Connected():
                raise ProtocolError("already_started", "the stream has already started")

    def media(self, pcm: bytes) -> Payload:
        return twilio.media(self.start.stream_sid, pcm)

    def mark(self, name: str) -> str:
        return twilio.mark_named(self.start.stream_sid, name)

    def clear(self) -> str:
        return self._clear


def twilio_start(message: str | bytes) -> PhoneStart | HungUp | None:
    """The ``StartDecoder`` of ``/twilio``: ``connected`` precedes the start; anything else is refused."""
    match twilio.decode(message):
        case twilio.Start() as start:
            params = start.custom_parameters
            return PhoneStart(TwilioGateway(start), params.get("voice") or None, params.get("language") or None)
        case twilio.Connected():
            return None
        case twilio.Stop():
            return HungUp()
        case _:
            raise ProtocolError("not_started", "message before start")
