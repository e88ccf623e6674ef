"""Asterisk AudioSocket on the telephony core: the codec ``agent.wires.audiosocket.codec`` bound to one call
(``AudioSocketGateway``) and the start decoder its opening runs (``audiosocket_start``).

Asterisk sends the call's UUID first, then 20 ms of 8 kHz signed linear audio per message, DTMF digits and
a hangup. Replies leave as audio messages paced in real time by ``TelephonyWire`` (Asterisk plays them as
they arrive). AudioSocket has neither marks nor a clear: what the caller heard comes from the core's playback
clock (the pacer keeps Asterisk at most ``lead_ms`` ahead of it), and barge-in and pauses simply stop sending (the
connection drops the audio queued); at most the lead already sent still plays, and a resumed reply goes on after
it.

A byte stream has no resynchronisation: a stream that yields only bad messages for ``MAX_BAD_IN_A_ROW`` in a
row is out of step (garbage, or a peer that is not Asterisk) and the call is hung up; single bad messages are
counted and dropped, and the call goes on.
"""

from __future__ import annotations

import logging
import uuid

from agent.errors import ProtocolError
from agent.runtime.call.outbox import Payload
from agent.wires.audiosocket import codec as audiosocket
from agent.wires.phone.telephony import CallMessage, HungUp, Keypress, PhoneStart, StartDecoder

log = logging.getLogger(__name__)

MAX_BAD_IN_A_ROW = 25
"""Bad messages in a row (half a second of Asterisk's frames) after which the stream is out of step."""


class AudioSocketGateway:
    provider = "audiosocket"
    input_rate = audiosocket.RATE
    output_rate = audiosocket.RATE

    def __init__(self, call: uuid.UUID) -> None:
        self.call = call
        self._bad_in_a_row = 0

    @property
    def call_id(self) -> str:
        return str(self.call)

    def decode(self, message: str | bytes) -> CallMessage:
        try:
            decoded = self._decode(message)
        except ProtocolError:
            self._bad_in_a_row += 1
            if self._bad_in_a_row >= MAX_BAD_IN_A_ROW:
                if self._bad_in_a_row == MAX_BAD_IN_A_ROW:
                    log.warning(
                        "audiosocket call %s: %d bad messages in a row; hanging up", self.call, MAX_BAD_IN_A_ROW
                    )
                return HungUp()
            raise
        self._bad_in_a_row = 0
        return decoded

    def _decode(self, message: str | bytes) -> CallMessage:
        if isinstance(message, str):
            raise ProtocolError("bad_message", "AudioSocket carries binary messages only")
        match audiosocket.decode(message):
            case audiosocket.Audio(pcm=pcm):
                return pcm
            case audiosocket.Dtmf(digit=digit):
                return Keypress(digit)
            case audiosocket.Hangup():
                return HungUp()
            case audiosocket.Error() as error:
                return _error(self.call_id, error)
            case audiosocket.Uuid():
                raise ProtocolError("already_started", "the call has already sent its UUID")

    def media(self, pcm: bytes) -> Payload:
        return audiosocket.audio(pcm)

    def mark(self, name: str) -> None:
        return None  # AudioSocket has no marks: the core's playback clock says what was heard

    def clear(self) -> None:
        return None  # nor a clear: what was sent plays; barge-in and pauses stop sending


def _error(call: str, error: audiosocket.Error) -> HungUp:
    """Asterisk reports an error: the caller hung up (bit 0x01) ends the call; any other is counted."""
    if error.caller_hung_up:
        return HungUp()
    log.warning("audiosocket call %s: Asterisk reports error 0x%02x", call, error.code)
    raise ProtocolError("far_end_error", f"Asterisk reported error 0x{error.code:02x}")


def audiosocket_start(voice: str | None) -> StartDecoder:
    """The ``StartDecoder`` of an AudioSocket call answered in ``voice`` (``None``: the server's default).

    The UUID starts the call; a hangup before it ends the connection; anything else is refused
    (``not_started``), counted and dropped by the opening."""

    def first(message: str | bytes) -> PhoneStart | HungUp | None:
        if isinstance(message, str):
            raise ProtocolError("bad_message", "AudioSocket carries binary messages only")
        match audiosocket.decode(message):
            case audiosocket.Uuid(value=value):
                return PhoneStart(AudioSocketGateway(value), voice)
            case audiosocket.Hangup():
                return HungUp()
            case audiosocket.Error() as error if error.caller_hung_up:
                return HungUp()
            case _:
                raise ProtocolError("not_started", "message before the call's UUID")

    return first
