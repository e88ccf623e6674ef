"""Fuzzing the protocol v1 decoder: any text frame or binary frame gives a message or a ``ProtocolError``."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent.audio.rates import SUPPORTED_INPUT_RATES, SUPPORTED_OUTPUT_RATES
from agent.errors import ProtocolError
from agent.wires.browser import codec as browser
from tests.fuzzing import JSON_VALUES, SCALARS, budget, nested

TYPES = [
    "session.start",
    "session.end",
    "playback.mark",
    "voice.enroll.begin",
    "voice.enroll.chunk",
    "voice.enroll.end",
    "voice.enroll.cancel",
    "voices.list",
    "voices.remove",
    "voices.",
    "voice.enroll.",
    "voice.enroll.other",
    "tool.result",
]
FIELDS = [
    "type",
    "sample_rate",
    "output_sample_rate",
    "voice",
    "token",
    "turn",
    "played_ms",
    "name",
    "consent",
    "size",
    "transcript",
    "language",
    "speaker",
    "data",
    "tools",
    "call_id",
    "output",
    "error",
]
CODES = {
    "bad_json",
    "bad_message",
    "unknown_type",
    "unsupported_sample_rate",
    "bad_name",
    "consent_required",
    "unauthorized",
}


def decode(text: str) -> browser.ClientMessage | ProtocolError:
    """The decoder's answer: a message, or the ``ProtocolError`` it raised (any other exception fails)."""
    try:
        message = browser.decode_text(text)
    except ProtocolError as exc:
        assert exc.code in CODES, exc.code
        assert isinstance(exc.message, str) and len(exc.message) < 400
        json.dumps(browser.error_body(exc.code, exc.message))  # the answer can always be sent
        return exc
    check_invariants(message)
    return message


def check_invariants(message: browser.ClientMessage) -> None:
    """What the rest of the server may rely on for a decoded message."""
    match message:
        case browser.SessionStart():
            assert message.sample_rate in SUPPORTED_INPUT_RATES
            assert message.output_sample_rate is None or message.output_sample_rate in SUPPORTED_OUTPUT_RATES
            assert message.voice is None or 0 < len(message.voice) <= 64
            assert message.token is None or len(message.token) <= browser.MAX_TOKEN_CHARS
        case browser.PlaybackMarkMessage():
            assert message.turn >= 0 and 0 <= message.played_ms < 86_400_000
        case browser.EnrollBegin():
            assert isinstance(message.name, str) and isinstance(message.consent, str) and message.size > 0
            assert message.speaker is None or len(message.speaker) <= browser.MAX_SPEAKER_CHARS
            assert message.token is None or len(message.token) <= browser.MAX_TOKEN_CHARS
        case browser.EnrollChunk():
            assert isinstance(message.data, bytes)
        case browser.VoicesList() | browser.VoicesRemove():
            assert message.token is None or len(message.token) <= browser.MAX_TOKEN_CHARS
        case _:
            pass


@given(st.text(max_size=300))
@budget(300)
def test_any_text_is_a_message_or_a_protocol_error(text: str) -> None:
    decode(text)


@given(JSON_VALUES)
@budget(300)
def test_any_json_value_is_a_message_or_a_protocol_error(value: Any) -> None:
    decode(json.dumps(value))


@given(
    st.sampled_from(TYPES) | st.text(max_size=20) | SCALARS,
    st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=6),
)
@budget(600)
def test_every_field_of_every_type_with_any_value(kind: Any, fields: dict[str, Any]) -> None:
    decode(json.dumps({"type": kind, **fields}))


VALID: dict[str, dict[str, Any]] = {
    "session.start": {"sample_rate": 16000, "voice": "ana", "output_sample_rate": 24000, "token": "t"},
    "playback.mark": {"turn": 1, "played_ms": 120},
    "voice.enroll.begin": {"name": "ana", "consent": "I agree", "size": 10, "speaker": "Ana", "token": "t"},
    "voice.enroll.chunk": {"data": "AAAA"},
    "voices.list": {"token": "t"},
    "voices.remove": {"name": "ana", "token": "t"},
}


@given(st.sampled_from(sorted(VALID)), st.data())
@budget(600)
def test_one_wrong_field_in_a_valid_message(kind: str, data: st.DataObject) -> None:
    message = {"type": kind, **VALID[kind]}
    assert not isinstance(decode(json.dumps(message)), ProtocolError)
    field = data.draw(st.sampled_from(sorted(message)), label="field")
    message[field] = data.draw(JSON_VALUES, label="value")
    decode(json.dumps(message))


@given(
    st.sampled_from(sorted(VALID)),
    st.sampled_from(FIELDS),
    st.integers(min_value=1, max_value=20_000),
    st.sampled_from(["[", '{"a":']),
)
@budget(200)
def test_deep_nesting_in_any_field(kind: str, field: str, depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    body = json.dumps({"type": kind, **VALID[kind]})[:-1]
    decode(f'{body}, "{field}": {opener * depth}0{closer * depth}}}')
    decode(nested(depth))


@given(st.sampled_from(sorted(VALID)), st.sampled_from(FIELDS), st.integers(min_value=1, max_value=6000))
@budget(200)
def test_huge_number_literals_in_any_field(kind: str, field: str, digits: int) -> None:
    body = json.dumps({"type": kind, **VALID[kind]})[:-1]
    for literal in ("9" * digits, "-" + "9" * digits, f"1e{digits}", f"0.{'0' * digits}1", "NaN", "-Infinity"):
        decode(f'{body}, "{field}": {literal}}}')


@given(
    st.binary(max_size=10_000),
    st.sampled_from(SUPPORTED_INPUT_RATES),
    st.integers(min_value=10, max_value=1000),
)
@budget(300)
def test_any_binary_frame_is_audio_or_a_protocol_error(frame: bytes, rate: int, max_ms: int) -> None:
    try:
        out = browser.check_audio(frame, rate, max_ms)
    except ProtocolError as exc:
        assert exc.code in {"bad_audio", "frame_too_long"}
    else:
        assert out == frame and len(frame) % 2 == 0 and len(frame) <= rate * 2 * max_ms // 1000
