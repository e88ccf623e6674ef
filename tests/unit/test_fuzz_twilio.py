"""Fuzzing the Twilio Media Streams decoder: any frame gives a message or a ``ProtocolError``."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent.errors import ProtocolError
from agent.wires.phone.twilio import codec as twilio
from tests.fuzzing import JSON_VALUES, SCALARS, budget

CODES = {"bad_json", "bad_message", "bad_audio", "frame_too_long", "unsupported_sample_rate", "unknown_type"}
PAYLOAD = base64.b64encode(b"\xff" * twilio.FRAME_BYTES).decode()

VALID: dict[str, dict[str, Any]] = {
    "connected": {"event": "connected", "protocol": "Call", "version": "1.0.0"},
    "start": {
        "event": "start",
        "sequenceNumber": "1",
        "streamSid": "MZ1",
        "start": {
            "streamSid": "MZ1",
            "accountSid": "AC1",
            "callSid": "CA1",
            "tracks": ["inbound"],
            "customParameters": {"voice": "ana", "token": "t"},
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
        },
    },
    "media": {
        "event": "media",
        "streamSid": "MZ1",
        "media": {"track": "inbound", "chunk": "2", "timestamp": "5", "payload": PAYLOAD},
    },
    "mark": {"event": "mark", "streamSid": "MZ1", "mark": {"name": "3:1200"}},
    "dtmf": {"event": "dtmf", "streamSid": "MZ1", "dtmf": {"track": "inbound_track", "digit": "5"}},
    "stop": {"event": "stop", "streamSid": "MZ1", "stop": {"accountSid": "AC1", "callSid": "CA1"}},
}


def paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path of a nested dict (the places a field can be replaced)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    return found


def decode(text: str | bytes) -> twilio.TwilioMessage | ProtocolError:
    try:
        message = twilio.decode(text)
    except ProtocolError as exc:
        assert exc.code in CODES, exc.code
        assert len(exc.message) < 400
        return exc
    match message:
        case twilio.Start():
            assert isinstance(message.stream_sid, str) and isinstance(message.call_sid, str)
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in message.custom_parameters.items())
        case twilio.Media():
            assert 0 < len(message.pcm) <= 2 * twilio.MAX_MEDIA_BYTES
            assert message.chunk is None or message.chunk >= 0
        case twilio.Mark():
            twilio.parse_mark(message.name)
        case _:
            pass
    return message


def test_the_valid_messages_decode() -> None:
    for body in VALID.values():
        assert not isinstance(decode(json.dumps(body)), ProtocolError)


@given(st.text(max_size=300) | st.binary(max_size=300))
@budget(300)
def test_any_frame_is_a_message_or_a_protocol_error(frame: str | bytes) -> None:
    decode(frame)


@given(JSON_VALUES)
@budget(300)
def test_any_json_value_is_a_message_or_a_protocol_error(value: Any) -> None:
    decode(json.dumps(value))


@given(st.sampled_from(sorted(VALID)), st.data())
@budget(600)
def test_valid_shaped_messages_with_malformed_fields(event: str, data: st.DataObject) -> None:
    message = copy.deepcopy(VALID[event])
    for _ in range(data.draw(st.integers(min_value=1, max_value=3), label="changes")):
        path = data.draw(st.sampled_from(paths(message)), label="path")
        holder: Any = message
        for key in path[:-1]:
            holder = holder[key]
        if not isinstance(holder, dict):
            continue
        if data.draw(st.booleans(), label="delete"):
            holder.pop(path[-1], None)
        else:
            holder[path[-1]] = data.draw(JSON_VALUES, label="value")
    decode(json.dumps(message))


ODD_FIELDS = st.sampled_from(
    [
        ("start", "customParameters", "voice"),
        ("start", "mediaFormat", "sampleRate"),
        ("start", "mediaFormat", "channels"),
        ("start", "mediaFormat", "encoding"),
        ("media", "media", "chunk"),
        ("media", "media", "payload"),
        ("media", "media", "track"),
        ("mark", "mark", "name"),
        ("dtmf", "dtmf", "digit"),
    ]
)


@given(ODD_FIELDS, SCALARS | st.dictionaries(st.text(max_size=5), SCALARS, max_size=3) | st.lists(SCALARS, max_size=3))
@budget(500)
def test_odd_values_in_the_fields_twilio_fills(where: tuple[str, str, str], value: Any) -> None:
    event, obj, key = where
    message = copy.deepcopy(VALID[event])
    holder = message["start"][obj] if event == "start" else message[obj]
    holder[key] = value
    decode(json.dumps(message))


BASE64ISH = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n\u00e9", max_size=4000
)


@given(BASE64ISH)
@budget(300)
def test_odd_base64_payloads(payload: str) -> None:
    message = copy.deepcopy(VALID["media"])
    message["media"]["payload"] = payload
    decode(json.dumps(message))


@given(st.text(max_size=60) | st.from_regex(r"[0-9²³¹٠-٩]{0,12}:[0-9²٠-٩.e-]{0,12}", fullmatch=True))
@budget(500)
def test_any_mark_name_is_ours_or_none(name: str) -> None:
    parsed = twilio.parse_mark(name)
    if parsed is not None:
        turn, played, segment = parsed
        assert turn >= 0 and played >= 0 and segment >= 0
        assert twilio.parse_mark(json.loads(twilio.mark("MZ1", turn, played, segment))["mark"]["name"]) == parsed
