"""The Vonage Voice API WebSockets codec: every message shape Vonage documents, every refusal, frame sizes and
the handshake's two kinds of ``Authorization`` (a JWT signed with the signature secret, a custom value)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from agent.errors import ProtocolError
from agent.wires.phone.vonage import codec as vonage

NOW = 1_700_000_000.0
SECRET = "signature-secret"


def test_connected_carries_rate_and_string_headers() -> None:
    message = {
        "event": "websocket:connected",
        "content-type": "audio/l16;rate=16000",
        "voice": "alice",
        "call_uuid": "aaaa",
        "age": 40,  # Vonage passes any JSON; only strings matter here
        "address": {"city": "NYC"},
    }
    assert vonage.decode(json.dumps(message)) == vonage.Connected(16000, {"voice": "alice", "call_uuid": "aaaa"})
    eight = vonage.decode('{"event": "websocket:connected", "content-type": "audio/l16;rate=8000"}')
    assert eight == vonage.Connected(8000, {})


def test_audio_dtmf_notify_cleared() -> None:
    assert vonage.decode(bytes(640)) == vonage.Audio(bytes(640))
    assert vonage.decode(bytes(320)) == vonage.Audio(bytes(320))
    assert vonage.decode('{"event": "websocket:dtmf", "digit": "5", "duration": 260}') == vonage.Dtmf("5")
    notify = {"event": "websocket:notify", "payload": {"mark": "2:40:1"}}
    assert vonage.decode(json.dumps(notify)) == vonage.Notify("2:40:1")
    assert vonage.decode('{"event": "websocket:notify", "payload": {"other": 1}}') == vonage.Notify(None)
    assert vonage.decode('{"event": "websocket:notify"}') == vonage.Notify(None)
    assert vonage.decode('{"event": "websocket:cleared"}') == vonage.Cleared()


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (b"", "bad_audio"),
        (b"\x00" * 641, "bad_audio"),  # half a sample
        (bytes(6402), "frame_too_long"),
        ("{not json", "bad_json"),
        ("[]", "bad_message"),
        ('{"event": 1}', "bad_message"),
        ('{"action": "clear"}', "bad_message"),  # a command is not an event
        ('{"event": "websocket:whatever"}', "unknown_type"),
        ('{"event": "websocket:dtmf"}', "bad_message"),
        ('{"event": "websocket:dtmf", "digit": 5}', "bad_message"),
        ('{"event": "websocket:connected"}', "unsupported_sample_rate"),
        ('{"event": "websocket:connected", "content-type": "audio/l16;rate=24000"}', "unsupported_sample_rate"),
        ('{"event": "websocket:connected", "content-type": "audio/pcmu;rate=8000"}', "unsupported_sample_rate"),
        ('{"event": "websocket:connected", "content-type": 16000}', "unsupported_sample_rate"),
        (
            '{"event": "websocket:connected", "content-type": "audio/l16;rate=16000", "v": "' + "x" * 2000 + '"}',
            "bad_message",
        ),
    ],
)
def test_refusals_have_protocol_codes(message: str | bytes, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        vonage.decode(message)
    assert info.value.code == code and info.value.message


def test_outbound_frames_are_exactly_20_ms() -> None:
    assert vonage.frame_bytes(16000) == 640 and vonage.frame_bytes(8000) == 320
    assert vonage.audio(b"\x01\x02" * 320, 16000) == b"\x01\x02" * 320
    assert vonage.audio(b"\x01\x02" * 100, 8000) == b"\x01\x02" * 100 + bytes(120)  # a short last frame padded
    with pytest.raises(ValueError):
        vonage.audio(bytes(642), 16000)


def test_commands() -> None:
    assert json.loads(vonage.clear()) == {"action": "clear"}
    assert json.loads(vonage.notify("1:20")) == {"action": "notify", "payload": {"mark": "1:20"}}


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_jwt_is_standard_hs256() -> None:
    token = vonage.jwt(SECRET, {"iat": 1})
    head, body, signature = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(head + "==")) == {"alg": "HS256", "typ": "JWT"}
    expected = hmac.new(SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    assert signature == _b64url(expected)


def test_jwt_checks() -> None:
    good = "Bearer " + vonage.jwt(SECRET, {"iat": int(NOW) - 5, "jti": "x", "api_key": "k"})
    assert vonage.valid_jwt(SECRET, good, NOW, 300)
    assert vonage.valid_jwt(SECRET, "bearer " + good.split(" ")[1], NOW, 300)
    assert not vonage.valid_jwt("another-secret", good, NOW, 300)
    assert not vonage.valid_jwt(SECRET, good, NOW + 600, 300)  # too old
    assert not vonage.valid_jwt(SECRET, "Bearer " + vonage.jwt(SECRET, {"iat": NOW + 600}), NOW, 300)  # future
    assert not vonage.valid_jwt(SECRET, "Bearer " + vonage.jwt(SECRET, {"jti": "no iat"}), NOW, 300)
    assert not vonage.valid_jwt(SECRET, "Bearer " + vonage.jwt(SECRET, {"iat": True}), NOW, 300)
    expired = "Bearer " + vonage.jwt(SECRET, {"iat": NOW - 5, "exp": NOW - 1})
    assert not vonage.valid_jwt(SECRET, expired, NOW, 300)
    body = good.split(" ")[1].split(".")[1]
    none_alg = _b64url(json.dumps({"alg": "none"}).encode())
    forged = hmac.new(SECRET.encode(), f"{none_alg}.{body}".encode(), hashlib.sha256).digest()
    assert not vonage.valid_jwt(SECRET, f"Bearer {none_alg}.{body}.{_b64url(forged)}", NOW, 300)
    for header in (None, "", "Basic dXNlcg==", "Bearer", "Bearer a.b", "Bearer a.b.c", good.replace(".", "", 1)):
        assert not vonage.valid_jwt(SECRET, header, NOW, 300)


def test_custom_authorization_check() -> None:
    assert vonage.valid_authorization("Bearer abc", "Bearer abc")
    for header in (None, "", "Bearer ab", "bearer abc", "Bearer abc "):
        assert not vonage.valid_authorization("Bearer abc", header)


# --- a token not valid yet, an empty key, a keypress of a digit's shape (issue 19) ------------------------------


def _bearer(**claims: object) -> str:
    return "Bearer " + vonage.jwt(SECRET, claims)


def test_a_jwt_not_valid_yet_is_refused() -> None:
    iat = int(NOW) - 5
    assert not vonage.valid_jwt(SECRET, _bearer(iat=iat, nbf=NOW + 3600), NOW, 300)  # an hour ahead
    assert not vonage.valid_jwt(SECRET, _bearer(iat=iat, nbf=NOW + vonage.CLOCK_SKEW_S + 1), NOW, 300)
    assert vonage.valid_jwt(SECRET, _bearer(iat=iat, nbf=NOW + vonage.CLOCK_SKEW_S), NOW, 300)  # their clock ahead
    assert vonage.valid_jwt(SECRET, _bearer(iat=iat, nbf=iat), NOW, 300)
    assert vonage.valid_jwt(SECRET, _bearer(iat=iat, nbf=None), NOW, 300)  # null: no such claim
    for odd in ("0", True, [1], {"t": 1}):
        assert not vonage.valid_jwt(SECRET, _bearer(iat=iat, nbf=odd), NOW, 300)


def test_a_jwt_issued_in_the_future_is_refused_beyond_the_clock_skew() -> None:
    assert vonage.valid_jwt(SECRET, _bearer(iat=NOW + vonage.CLOCK_SKEW_S), NOW, 300)
    assert not vonage.valid_jwt(SECRET, _bearer(iat=NOW + vonage.CLOCK_SKEW_S + 1), NOW, 300)


def test_odd_time_claims_are_refused() -> None:
    for claims in ({"iat": "1700000000"}, {"iat": int(NOW), "exp": "never"}, {"iat": int(NOW), "exp": False}):
        assert not vonage.valid_jwt(SECRET, "Bearer " + vonage.jwt(SECRET, claims), NOW, 300)
    # JSON's NaN and Infinity (Python's json reads them): never a valid time
    head = _b64url(b'{"alg":"HS256","typ":"JWT"}')
    for body in (b'{"iat":NaN}', b'{"iat":1700000000,"nbf":NaN}', b'{"iat":1700000000,"exp":NaN}'):
        signed = f"{head}.{_b64url(body)}"
        signature = _b64url(hmac.new(SECRET.encode(), signed.encode(), hashlib.sha256).digest())
        assert not vonage.valid_jwt(SECRET, f"Bearer {signed}.{signature}", NOW, 300)


def test_an_empty_secret_or_custom_value_accepts_nothing() -> None:
    assert not vonage.valid_jwt("", "Bearer " + vonage.jwt("", {"iat": int(NOW)}), NOW, 300)
    assert not vonage.valid_authorization("", "")
    assert not vonage.valid_authorization("", "Bearer x")


@pytest.mark.parametrize("digit", ["5\nCRITICAL agent.security.auth: forged", "55", "", "*#", 5])
def test_anything_but_one_dtmf_digit_is_a_bad_message(digit: object) -> None:
    with pytest.raises(ProtocolError) as info:
        vonage.decode(json.dumps({"event": "websocket:dtmf", "digit": digit, "duration": 260}))
    assert info.value.code == "bad_message"
    assert vonage.decode('{"event": "websocket:dtmf", "digit": "D"}') == vonage.Dtmf("D")
