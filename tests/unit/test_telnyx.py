"""The Telnyx media streaming codec: every message shape Telnyx documents, every refusal, and the formats."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pytest

from agent.audio import alaw, mulaw
from agent.errors import ProtocolError
from agent.wires.phone.telnyx import codec as telnyx

PCM = struct.pack("<160h", *range(-8000, 8000, 100))  # 20 ms at 8 kHz


def start(**body: Any) -> str:
    fields = {
        "user_id": "3E6F995F",
        "call_control_id": "v3:abc",
        "call_session_id": "ff55",
        "from": "+13122010094",
        "to": "+13122123456",
        "tags": ["TAG1"],
        "client_state": "aGF2ZQ==",
        "custom_parameters": {"voice": "alice"},
        "media_format": {"encoding": "PCMU", "sample_rate": 8000, "channels": 1},
        **body,
    }
    return json.dumps({"event": "start", "sequence_number": "1", "stream_id": "32DE", "start": fields})


def media(payload: Any, **extra: Any) -> str:
    body = {"track": "inbound", "chunk": "2", "timestamp": "5", "payload": payload, **extra}
    return json.dumps({"event": "media", "sequence_number": "4", "media": body, "stream_id": "32DE"})


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_connected_and_start() -> None:
    assert telnyx.decode('{"event": "connected", "version": "1.0.0"}') == telnyx.Connected("1.0.0")
    message = telnyx.decode(start())
    assert message == telnyx.Start("32DE", "v3:abc", telnyx.MediaFormat("PCMU", 8000), {"voice": "alice"})


@pytest.mark.parametrize(("encoding", "rate"), [("PCMU", 8000), ("PCMA", 8000), ("L16", 8000), ("L16", 16000)])
def test_every_supported_format_starts(encoding: str, rate: int) -> None:
    message = telnyx.decode(start(media_format={"encoding": encoding, "sample_rate": rate, "channels": 1}))
    assert isinstance(message, telnyx.Start) and message.media_format == telnyx.MediaFormat(encoding, rate)


def test_media_mark_dtmf_error_stop() -> None:
    assert telnyx.decode(media(b64(b"\xff" * 160))) == telnyx.Media(b"\xff" * 160)
    mark = {"event": "mark", "sequence_number": "3", "stream_id": "32DE", "mark": {"name": "1:20"}}
    assert telnyx.decode(json.dumps(mark)) == telnyx.Mark("1:20")
    dtmf = {"event": "dtmf", "stream_id": "32DE", "occurred_at": "2024-01-01T00:00:00Z", "dtmf": {"digit": "5"}}
    assert telnyx.decode(json.dumps(dtmf)) == telnyx.Dtmf("5")
    error = {"event": "error", "payload": {"code": 100002, "title": "Unknown error", "detail": "oops"}}
    assert telnyx.decode(json.dumps(error)) == telnyx.Error("100002", "Unknown error", "oops")
    stop = {"event": "stop", "sequence_number": "5", "stop": {"user_id": "u", "call_control_id": "v3:abc"}}
    assert telnyx.decode(json.dumps(stop)) == telnyx.Stop()


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("{not json", "bad_json"),
        (b"\x00\x01", "bad_message"),
        ("[]", "bad_message"),
        ('{"no": "event"}', "bad_message"),
        ('{"event": 7}', "bad_message"),
        ('{"event": "whatever"}', "unknown_type"),
        ('{"event": "media", "media": "x"}', "bad_message"),
        (media("%%%"), "bad_audio"),
        (media(12), "bad_audio"),
        (media(""), "bad_audio"),
        (media(b64(bytes(8000))), "frame_too_long"),
        (media(b64(bytes(160)), track="outbound"), "bad_message"),
        ('{"event": "mark", "mark": {}}', "bad_message"),
        ('{"event": "mark", "mark": {"name": {"turn": 1}}}', "bad_message"),
        ('{"event": "dtmf", "dtmf": {}}', "bad_message"),
        ('{"event": "error", "payload": "x"}', "bad_message"),
        (start(call_control_id=5), "bad_message"),
        (start(custom_parameters={"voice": {"a": 1}}), "bad_message"),
        (start(custom_parameters=["voice"]), "bad_message"),
        (start(media_format={"encoding": "OPUS", "sample_rate": 16000, "channels": 1}), "unsupported_sample_rate"),
        (start(media_format={"encoding": "PCMU", "sample_rate": 16000, "channels": 1}), "unsupported_sample_rate"),
        (start(media_format={"encoding": "L16", "sample_rate": 24000, "channels": 1}), "unsupported_sample_rate"),
        (start(media_format={"encoding": "L16", "sample_rate": "16000", "channels": 1}), "unsupported_sample_rate"),
        (start(media_format={"encoding": "PCMA", "sample_rate": 8000, "channels": 2}), "unsupported_sample_rate"),
        (start(media_format={"encoding": "PCMA", "sample_rate": 8000, "channels": True}), "unsupported_sample_rate"),
        (start(media_format=["PCMU"]), "bad_message"),
    ],
)
def test_refusals_have_protocol_codes(message: str | bytes, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        telnyx.decode(message)
    assert info.value.code == code and info.value.message


def test_stream_id_may_sit_inside_start() -> None:
    body = json.loads(start())
    body["start"]["stream_id"] = body.pop("stream_id")
    message = telnyx.decode(json.dumps(body))
    assert isinstance(message, telnyx.Start) and message.stream_id == "32DE"


@pytest.mark.parametrize(
    ("fmt", "payload"),
    [
        (telnyx.MediaFormat("PCMU", 8000), mulaw.encode(PCM)),
        (telnyx.MediaFormat("PCMA", 8000), alaw.encode(PCM)),
        (telnyx.MediaFormat("L16", 8000), struct.pack(">160h", *range(-8000, 8000, 100))),  # network byte order
    ],
)
def test_formats_decode_and_encode_payloads(fmt: telnyx.MediaFormat, payload: bytes) -> None:
    pcm = telnyx.check_media(telnyx.Media(payload), fmt)
    assert fmt.from_pcm(pcm) == payload
    sent = json.loads(telnyx.media(fmt, pcm))
    assert sent == {"event": "media", "media": {"payload": b64(payload)}}
    if fmt.encoding == "L16":
        assert pcm == PCM


def test_check_media_refuses_long_and_odd_payloads() -> None:
    with pytest.raises(ProtocolError) as info:
        telnyx.check_media(telnyx.Media(bytes(1601)), telnyx.MediaFormat("PCMU", 8000))  # over 200 ms
    assert info.value.code == "frame_too_long"
    with pytest.raises(ProtocolError) as info:
        telnyx.check_media(telnyx.Media(bytes(321)), telnyx.MediaFormat("L16", 8000))
    assert info.value.code == "bad_audio"
    assert len(telnyx.check_media(telnyx.Media(bytes(6400)), telnyx.MediaFormat("L16", 16000))) == 6400


def test_outbound_mark_and_clear() -> None:
    assert json.loads(telnyx.mark("3:120:1")) == {"event": "mark", "mark": {"name": "3:120:1"}}
    assert json.loads(telnyx.clear()) == {"event": "clear"}


def test_stream_auth_token_check() -> None:
    assert telnyx.valid_auth_token("s3cret", "s3cret")
    for presented in (None, "", "s3cre", "s3cret ", "S3CRET", "é"):
        assert not telnyx.valid_auth_token("s3cret", presented)


# --- what reaches a log line: ids and keypresses of an id's and a digit's shape (issue 19) ---------------------

FORGED = "\nCRITICAL agent.security.auth: forged"


@pytest.mark.parametrize("call", ["v3:x" + FORGED, "v3:x\r", "v3 x", "", "v" * 129, "v3:\u2028"])
def test_a_call_control_id_that_is_not_an_id_is_a_bad_message(call: str) -> None:
    with pytest.raises(ProtocolError) as info:
        telnyx.decode(start(call_control_id=call))
    assert info.value.code == "bad_message"


def test_a_real_call_control_id_is_an_id() -> None:
    call = "v3:T02llQxIyaRkhfRKxgAP8nY511EhFLizdvdUKJiSw8d6A9BborherQ"
    decoded = telnyx.decode(start(call_control_id=call))
    assert isinstance(decoded, telnyx.Start) and decoded.call_control_id == call


@pytest.mark.parametrize("digit", ["5" + FORGED, "55", "", "x", 5])
def test_anything_but_one_dtmf_digit_is_a_bad_message(digit: object) -> None:
    with pytest.raises(ProtocolError) as info:
        telnyx.decode(json.dumps({"event": "dtmf", "dtmf": {"digit": digit}}))
    assert info.value.code == "bad_message"
    assert telnyx.decode(json.dumps({"event": "dtmf", "dtmf": {"digit": "#"}})) == telnyx.Dtmf("#")


def test_an_empty_stream_auth_token_accepts_nothing() -> None:
    assert not telnyx.valid_auth_token("", "")
    assert not telnyx.valid_auth_token("", "anything")
    assert telnyx.valid_auth_token("tok", "tok")
