"""The Twilio Media Streams codec on recorded-shape messages (as in Twilio's WebSocket message docs)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct

import pytest

from agent.audio import mulaw
from agent.errors import ProtocolError
from agent.wires.phone.twilio import codec as twilio

CONNECTED = '{"event": "connected", "protocol": "Call", "version": "1.0.0"}'
START = json.dumps(
    {
        "event": "start",
        "sequenceNumber": "1",
        "start": {
            "accountSid": "AC123",
            "streamSid": "MZ18ad3ab5a668481ce02b83e7395059f0",
            "callSid": "CA123",
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
            "customParameters": {"voice": "alice", "FirstName": "Jane"},
        },
        "streamSid": "MZ18ad3ab5a668481ce02b83e7395059f0",
    }
)


def _media(payload: str, chunk: str = "2") -> str:
    body = {"track": "inbound", "chunk": chunk, "timestamp": "5", "payload": payload}
    return json.dumps({"event": "media", "sequenceNumber": "3", "media": body, "streamSid": "MZ1"})


def test_decodes_each_twilio_event() -> None:
    assert twilio.decode(CONNECTED) == twilio.Connected("Call")
    start = twilio.decode(START)
    assert start == twilio.Start("MZ18ad3ab5a668481ce02b83e7395059f0", "CA123", {"voice": "alice", "FirstName": "Jane"})
    ulaw = bytes(range(0, 256, 16)) * 10  # 160 bytes = 20 ms
    media = twilio.decode(_media(base64.b64encode(ulaw).decode()))
    assert media == twilio.Media(mulaw.decode(ulaw), 2) and len(media.pcm) == 320
    assert twilio.decode(
        '{"event":"dtmf","streamSid":"MZ1","sequenceNumber":"5","dtmf":{"track":"inbound_track","digit":"1"}}'
    ) == twilio.Dtmf("1")
    assert twilio.decode('{"event":"mark","streamSid":"MZ1","mark":{"name":"3:1240"}}') == twilio.Mark("3:1240")
    assert twilio.decode('{"event":"stop","streamSid":"MZ1","stop":{"callSid":"CA123"}}') == twilio.Stop()


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("not json", "bad_json"),
        ("[1, 2]", "bad_message"),
        ('{"event": "hello"}', "unknown_type"),
        ('{"no": "event"}', "bad_message"),
        (_media("!!!not base64"), "bad_audio"),
        (_media(""), "bad_audio"),
        (_media(base64.b64encode(bytes(4000)).decode()), "frame_too_long"),
        ('{"event": "media", "media": "x"}', "bad_message"),
        ('{"event": "start", "start": {"callSid": "CA1"}}', "bad_message"),
        (START.replace("8000", "16000"), "unsupported_sample_rate"),
        ('{"event": "mark", "mark": {}}', "bad_message"),
    ],
)
def test_rejects_malformed_messages_with_a_code(message: str, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        twilio.decode(message)
    assert info.value.code == code


def test_binary_frames_are_rejected() -> None:
    with pytest.raises(ProtocolError):
        twilio.decode(b"\x00\x01")


def test_outbound_media_mark_and_clear() -> None:
    pcm = struct.pack("<160h", *range(-8000, 8000, 100))
    media = json.loads(twilio.media("MZ9", pcm))
    assert media["event"] == "media" and media["streamSid"] == "MZ9"
    assert base64.b64decode(media["media"]["payload"]) == mulaw.encode(pcm)
    assert set(media) == {"event", "streamSid", "media"}
    mark = json.loads(twilio.mark("MZ9", 4, 1260.0))
    assert mark == {"event": "mark", "streamSid": "MZ9", "mark": {"name": "4:1260"}}
    assert twilio.parse_mark("4:1260") == (4, 1260.0, 0)
    assert twilio.parse_mark(json.loads(twilio.mark("MZ9", 4, 80.4, 2))["mark"]["name"]) == (4, 80.0, 2)
    assert twilio.parse_mark("someone-else") is None and twilio.parse_mark("a:b") is None
    assert json.loads(twilio.clear("MZ9")) == {"event": "clear", "streamSid": "MZ9"}


def test_signature_is_hmac_sha1_of_the_exact_url() -> None:
    url = "wss://agent.example.com/twilio"
    expected = base64.b64encode(hmac.new(b"secret", url.encode(), hashlib.sha1).digest()).decode()
    assert twilio.signature("secret", url) == expected
    assert twilio.valid_signature("secret", url, expected)
    assert not twilio.valid_signature("secret", "ws://127.0.0.1:8765/twilio", expected)  # the internal URL
    assert not twilio.valid_signature("other", url, expected)
    assert not twilio.valid_signature("secret", url, None)
    assert not twilio.valid_signature("secret", url, "")
    # POST parameters (none for a WebSocket) are appended sorted by name, as in Twilio's webhook signing.
    with_params = base64.b64encode(hmac.new(b"k", b"https://x/yA1B2", hashlib.sha1).digest()).decode()
    assert twilio.signature("k", "https://x/y", {"B": "2", "A": "1"}) == with_params


def _start(**start: object) -> str:
    body = {"callSid": "CA1", "streamSid": "MZ1", **start}
    return json.dumps({"event": "start", "streamSid": "MZ1", "start": body})


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (_start(customParameters={"voice": {"a": 1}}), "bad_message"),
        (_start(customParameters={"voice": 5}), "bad_message"),
        (_start(customParameters={"voice": "v" * 1025}), "bad_message"),
        (_start(customParameters={f"k{i}": "v" for i in range(33)}), "bad_message"),
        (_start(mediaFormat={"encoding": "audio/x-mulaw", "sampleRate": "8000"}), "unsupported_sample_rate"),
        (_start(mediaFormat={"encoding": "audio/x-mulaw", "sampleRate": 8000.0}), "unsupported_sample_rate"),
        (
            _start(mediaFormat={"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": True}),
            "unsupported_sample_rate",
        ),
        (_start(callSid="C" * 257), "bad_message"),
    ],
)
def test_malformed_start_fields_are_protocol_errors(text: str, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        twilio.decode(text)
    assert info.value.code == code


@pytest.mark.parametrize("chunk", ["²", "٣", "9" * 5000, "-1", "1.5", 7, None])
def test_odd_chunk_numbers_are_ignored(chunk: object) -> None:
    payload = base64.b64encode(bytes(160)).decode()
    message = twilio.decode(json.dumps({"event": "media", "media": {"payload": payload, "chunk": chunk}}))
    assert isinstance(message, twilio.Media) and message.chunk is None


@pytest.mark.parametrize(
    "name", ["²:1", "1:²", "9" * 5000 + ":1", "1:" + "9" * 5000, ":", "a:1", "1: 2", "1:2:", "1:2:x"]
)
def test_mark_names_we_did_not_send_parse_to_none(name: str) -> None:
    assert twilio.parse_mark(name) is None


# --- what reaches a log line: ids and keypresses of an id's and a digit's shape (issue 19) ---------------------

FORGED = "\nCRITICAL agent.security.auth: forged"


@pytest.mark.parametrize("sid", ["CA1" + FORGED, "CA1\r", "CA 1", "CA1\x1b[2J", "CA1é", "", "C" * 129])
def test_a_call_sid_that_is_not_an_id_is_a_bad_message(sid: str) -> None:
    with pytest.raises(ProtocolError) as info:
        twilio.decode(_start(callSid=sid))
    assert info.value.code == "bad_message"


def test_a_real_call_sid_is_an_id() -> None:
    sid = "CA" + "0123456789abcdef" * 2
    start = twilio.decode(_start(callSid=sid))
    assert isinstance(start, twilio.Start) and start.call_sid == sid


def _dtmf(digit: object) -> str:
    return json.dumps({"event": "dtmf", "streamSid": "MZ1", "dtmf": {"track": "inbound_track", "digit": digit}})


@pytest.mark.parametrize("digit", [*"0123456789", "*", "#", "A", "B", "C", "D"])
def test_every_dtmf_digit_decodes(digit: str) -> None:
    assert twilio.decode(_dtmf(digit)) == twilio.Dtmf(digit)


@pytest.mark.parametrize("digit", ["5" + FORGED, "5\n", "12", "", "a", "E", " 5", "٣", 5, None])
def test_anything_but_one_dtmf_digit_is_a_bad_message(digit: object) -> None:
    with pytest.raises(ProtocolError) as info:
        twilio.decode(_dtmf(digit))
    assert info.value.code == "bad_message"


def test_an_empty_auth_token_accepts_no_signature() -> None:
    url = "wss://agent.example.com/twilio"
    assert not twilio.valid_signature("", url, twilio.signature("", url))  # anyone can sign with ''
