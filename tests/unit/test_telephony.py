"""The telephony core (``TelephonyWire``) on each provider's real gateway, with a recording socket and the
pacer on an injected clock: marks after each frame, a clear on barge-in and on a pause, segments after a
pause, refusals counted, and Vonage's exact binary frames. No event loop timing is involved."""

from __future__ import annotations

import json
import logging
from collections import Counter

import pytest

from agent.core.events import ClientEnded, SessionEnded
from agent.errors import ProtocolError
from agent.wires.phone.telephony import PhoneStart, TelephonyWire
from agent.wires.phone.telnyx import codec as telnyx
from agent.wires.phone.telnyx.gateway import TelnyxGateway, telnyx_start
from agent.wires.phone.vonage.gateway import vonage_start


class Clock:
    def __init__(self) -> None:
        self.now = 10.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def telnyx_wire(encoding: str = "PCMU", rate: int = 8000, clock: Clock | None = None) -> TelephonyWire:
    start = telnyx.Start("S1", "v3:c1", telnyx.MediaFormat(encoding, rate))
    clock = clock or Clock()
    return TelephonyWire(TelnyxGateway(start), lead_ms=60, clock=clock, sleep=clock.sleep)


def test_refusals_are_counted_and_dtmf_stop_and_errors_handled() -> None:
    dropped: Counter[str] = Counter()
    wire = TelephonyWire(TelnyxGateway(telnyx.Start("S1", "v3:c1")), lead_ms=60, dropped=dropped)
    for bad, code in [
        ("{x", "bad_json"),
        ('{"event": "nope"}', "unknown_type"),
        ('{"event": "connected"}', "already_started"),
    ]:
        with pytest.raises(ProtocolError):
            wire.decode(bad)
        assert dropped[code] == 1
    assert wire.decode('{"event": "dtmf", "dtmf": {"digit": "7"}}') is None
    assert wire.decode('{"event": "error", "payload": {"code": 1, "title": "t", "detail": "d"}}') is None
    assert wire.decode('{"event": "stop"}') == ClientEnded()
    assert "telnyx call v3:c1" in wire.summary() and "bad_json" in wire.summary()
    assert wire.encode(SessionEnded("goodbye")) == []


def test_caller_audio_is_decoded_in_the_stream_format() -> None:
    wire = telnyx_wire("L16", 16000)
    assert wire.input_rate == wire.output_rate == 16000
    assert wire.decode(json.dumps({"event": "media", "media": {"payload": "AAE="}})) == b"\x01\x00"  # big-endian


def test_start_decoders() -> None:
    assert telnyx_start('{"event": "connected", "version": "1.0.0"}') is None
    with pytest.raises(ProtocolError) as info:
        telnyx_start(json.dumps({"event": "media", "media": {"payload": "AA=="}}))
    assert info.value.code == "not_started"
    with pytest.raises(ProtocolError) as info:
        vonage_start(bytes(640))
    assert info.value.code == "not_started"
    start = vonage_start('{"event": "websocket:connected", "content-type": "audio/l16;rate=8000", "voice": "v"}')
    assert isinstance(start, PhoneStart) and start.voice == "v" and start.gateway.input_rate == 8000


# --- what a peer sent stays on one log line (issue 19) -----------------------------------------------------------

FORGED = "\nCRITICAL agent.security.auth: forged"


def test_a_telnyx_error_is_logged_on_one_line_however_its_fields_read(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agent.wires")
    wire = TelephonyWire(TelnyxGateway(telnyx.Start("S1", "v3:c1")), lead_ms=60)
    error = {"code": "1" + FORGED, "title": "t\r\n" + "x" * 500, "detail": "d" + FORGED}
    assert wire.decode(json.dumps({"event": "error", "payload": error})) is None
    (line,) = [r.getMessage() for r in caplog.records if "reports error" in r.getMessage()]
    assert "\n" not in line and "\r" not in line and line.isprintable()
    assert repr("d" + FORGED) in line and len(line) < 400


@pytest.mark.parametrize(
    "message",
    [
        '{"event": "dtmf", "dtmf": {"digit": "5' + FORGED.replace("\n", "\\n") + '"}}',
        '{"event": "dtmf", "dtmf": {"digit": "\\r"}}',
    ],
)
def test_a_keypress_that_is_not_a_digit_is_dropped_not_logged(caplog: pytest.LogCaptureFixture, message: str) -> None:
    caplog.set_level(logging.INFO, logger="agent.wires")
    dropped: Counter[str] = Counter()
    wire = TelephonyWire(TelnyxGateway(telnyx.Start("S1", "v3:c1")), lead_ms=60, dropped=dropped)
    with pytest.raises(ProtocolError):
        wire.decode(message)
    assert dropped["bad_message"] == 1 and not [r for r in caplog.records if "DTMF" in r.getMessage()]
    assert wire.decode('{"event": "dtmf", "dtmf": {"digit": "5"}}') is None
    assert [r.getMessage() for r in caplog.records if "DTMF" in r.getMessage()] == ["telnyx call v3:c1: DTMF 5"]


def test_a_vonage_call_id_header_that_is_not_an_id_is_not_used() -> None:
    connected = {"event": "websocket:connected", "content-type": "audio/l16;rate=16000"}
    forged = vonage_start(json.dumps({**connected, "call_uuid": "a" + FORGED, "uuid": "aaaa-0002"}))
    assert isinstance(forged, PhoneStart) and forged.gateway.call_id == "aaaa-0002"
    none = vonage_start(json.dumps({**connected, "call_uuid": "a" + FORGED}))
    assert isinstance(none, PhoneStart) and none.gateway.call_id == "-"
