"""Telnyx media streaming (``/telnyx``) on the telephony core: the codec ``agent.wires.phone.telnyx.codec`` bound to
one call (``TelnyxGateway``) and the start decoder its opening (``agent.wires.phone.telnyx.opening``) runs.

Telnyx sends ``connected`` then ``start``; the voice comes from ``start.custom_parameters.voice`` (a TeXML
``<Parameter>`` or a Call Control ``custom_parameters`` entry). Caller audio arrives in the stream's format
(PCMU or PCMA at 8 kHz, L16 at 8 or 16 kHz) and replies leave in the same one, as ``media`` messages each
followed by a ``mark``; barge-in and pauses send ``clear``. Telnyx's ``error`` frames are logged (their
fields escaped: ``agent.security.logsafe.shown``).
"""

from __future__ import annotations

import logging

from agent.errors import ProtocolError
from agent.runtime.call.outbox import Payload
from agent.security.logsafe import shown
from agent.wires.phone.telephony import CallMessage, HungUp, Keypress, MarkPlayed, PhoneStart
from agent.wires.phone.telnyx import codec as telnyx

log = logging.getLogger(__name__)


class TelnyxGateway:
    provider = "telnyx"

    def __init__(self, start: telnyx.Start) -> None:
        self.start = start
        self._format = start.media_format
        self._clear = telnyx.clear()

    @property
    def call_id(self) -> str:
        return self.start.call_control_id

    @property
    def input_rate(self) -> int:
        return self._format.sample_rate

    @property
    def output_rate(self) -> int:
        return self._format.sample_rate

    def decode(self, message: str | bytes) -> CallMessage:
        match telnyx.decode(message):
            case telnyx.Media() as media:
                return telnyx.check_media(media, self._format)
            case telnyx.Mark(name=name):
                return MarkPlayed(name)
            case telnyx.Stop():
                return HungUp()
            case telnyx.Dtmf(digit=digit):
                return Keypress(digit)
            case telnyx.Error(code=code, title=title, detail=detail):
                log.warning(
                    "telnyx call %s: Telnyx reports error %s %s: %s",
                    shown(self.call_id), shown(code), shown(title), shown(detail),
                )  # fmt: skip
                return None
            case telnyx.Start() | telnyx.Connected():
                raise ProtocolError("already_started", "the stream has already started")

    def media(self, pcm: bytes) -> Payload:
        return telnyx.media(self._format, pcm)

    def mark(self, name: str) -> str:
        return telnyx.mark(name)

    def clear(self) -> str:
        return self._clear


def telnyx_start(message: str | bytes) -> PhoneStart | HungUp | None:
    """The ``StartDecoder`` of ``/telnyx``: ``connected`` precedes the start; anything else is refused."""
    match telnyx.decode(message):
        case telnyx.Start() as start:
            params = start.custom_parameters
            return PhoneStart(TelnyxGateway(start), params.get("voice") or None, params.get("language") or None)
        case telnyx.Connected():
            return None
        case telnyx.Stop():
            return HungUp()
        case _:
            raise ProtocolError("not_started", "message before start")
