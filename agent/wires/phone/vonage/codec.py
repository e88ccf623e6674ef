"""Vonage Voice API WebSockets codec (``/vonage``): pure functions, no sockets.

Vonage opens the socket when an NCCO ``connect`` action names a ``websocket`` endpoint. Vonage → server: first
a text message ``{"event": "websocket:connected", "content-type": "audio/l16;rate=16000", ...}`` carrying the
endpoint's ``headers`` at its top level; then binary messages of caller audio (linear PCM16, little-endian,
mono, 20 ms each: 640 bytes at 16 kHz, 320 at 8 kHz) and text events: ``websocket:dtmf`` (``digit``,
``duration``), ``websocket:cleared`` (a ``clear`` emptied the playback buffer), ``websocket:notify`` (the
audio sent before a ``notify`` has played; carries its ``payload``).
Server → Vonage: binary messages of reply audio in the same format, exactly 20 ms each; ``{"action":
"clear"}``; ``{"action": "notify", "payload": {...}}``, which we use as marks (``payload.mark`` names one).

Authentication: the endpoint's ``authorization`` sets the handshake's ``Authorization`` header: ``{"type":
"vonage"}`` sends ``Bearer <JWT>`` signed (HS256) with the account's signature secret, as signed webhooks
are (``valid_jwt``); ``{"type": "custom", "value": ...}`` sends the value verbatim (``valid_authorization``).
``decode`` raises ``ProtocolError`` with protocol v1's codes; the connection counts and drops such messages
and the call goes on: among them a DTMF digit not of ``0-9 * # A-D`` (``agent.wires.phone.ids``).
Reference: https://developer.vonage.com/en/voice/voice-api/concepts/websockets
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from typing import Any

from agent.errors import ProtocolError
from agent.wires.phone import fields, ids

FRAME_MS = 20
RATES = (8000, 16000)
MAX_AUDIO_BYTES = 16000 * 2 * 200 // 1000  # over 200 ms in one message is not what Vonage sends
_CONTENT_TYPE = re.compile(r"audio/l16;\s*rate=([0-9]{4,5})", re.IGNORECASE)
CLOCK_SKEW_S = 60
"""A JWT issued (``iat``) or valid from (``nbf``) up to this far in the future (Vonage's clock ahead of ours)
is still accepted."""


def frame_bytes(rate: int) -> int:
    """Bytes in one 20 ms message at ``rate`` (320 at 8 kHz, 640 at 16 kHz)."""
    return rate * 2 * FRAME_MS // 1000


@dataclass(frozen=True, slots=True)
class Connected:
    """The first message: the audio rate and the endpoint's string ``headers`` (others are ignored)."""

    rate: int
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Audio:
    """Caller audio, PCM16LE at the call's rate."""

    pcm: bytes


@dataclass(frozen=True, slots=True)
class Dtmf:
    digit: str


@dataclass(frozen=True, slots=True)
class Notify:
    """Vonage played what was sent before a ``notify``; ``mark`` is the name we put in its payload, if any."""

    mark: str | None


@dataclass(frozen=True, slots=True)
class Cleared:
    pass


VonageMessage = Connected | Audio | Dtmf | Notify | Cleared


def _rate(value: Any) -> int:
    match = _CONTENT_TYPE.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None or int(match[1]) not in RATES:
        raise ProtocolError("unsupported_sample_rate", "need content-type audio/l16;rate=16000 or audio/l16;rate=8000")
    return int(match[1])


def _headers(message: dict[str, Any]) -> dict[str, str]:
    extra = {k: v for k, v in message.items() if k not in ("event", "content-type") and isinstance(v, str)}
    return fields.parameters(dict(list(extra.items())[: fields.MAX_PARAMETERS]), "headers")


def decode(message: str | bytes) -> VonageMessage:
    """Parse one Vonage message. Raises ``ProtocolError`` (codes as in protocol v1) for anything else."""
    if isinstance(message, bytes):
        if not message or len(message) % 2:
            raise ProtocolError("bad_audio", "audio messages are PCM16: a non-zero, even number of bytes")
        if len(message) > MAX_AUDIO_BYTES:
            raise ProtocolError("frame_too_long", f"audio message of {len(message)} bytes")
        return Audio(message)
    body = fields.json_object(message, "Vonage")
    event = fields.event(body)
    if event == "websocket:dtmf":
        return Dtmf(ids.dtmf_digit(body, "digit", "websocket:dtmf"))
    if event == "websocket:notify":
        payload = body.get("payload")
        name = payload.get("mark") if isinstance(payload, dict) else None
        return Notify(name if isinstance(name, str) and len(name) <= fields.MAX_NAME_CHARS else None)
    if event == "websocket:cleared":
        return Cleared()
    if event == "websocket:connected":
        return Connected(_rate(body.get("content-type")), _headers(body))
    raise fields.unknown(event)


def audio(pcm: bytes, rate: int) -> bytes:
    """One binary message of reply audio: exactly 20 ms at ``rate`` (a short frame is padded with silence)."""
    size = frame_bytes(rate)
    if len(pcm) > size:
        raise ValueError(f"a Vonage audio message holds {size} bytes, not {len(pcm)}")
    return pcm.ljust(size, b"\x00")


def notify(mark: str) -> str:
    return json.dumps({"action": "notify", "payload": {"mark": mark}})


def clear() -> str:
    return json.dumps({"action": "clear"})


# --- handshake authentication ------------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt(secret: str, claims: dict[str, Any]) -> str:
    """An HS256 JWT over ``claims``: what Vonage sends (``Bearer <jwt>``) with ``authorization.type`` vonage."""
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64url(signature)}"


def _time(claims: dict[str, Any], name: str) -> float | None:
    """A time claim (seconds since the epoch); NaN when present but not a number, so that every comparison
    with it fails (and a bool is not a number here)."""
    value = claims.get(name)
    if value is None:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else float("nan")


def valid_jwt(secret: str, authorization: str | None, now: float, max_age_s: float) -> bool:
    """``Authorization: Bearer <jwt>`` signed HS256 with ``secret`` (checked in constant time before the
    claims are read), issued (``iat``) within ``max_age_s`` of ``now`` and not in the future, already valid
    (``nbf``, if any) and not expired (``exp``, if any); the future allows ``CLOCK_SKEW_S``. An empty
    ``secret`` accepts nothing."""
    scheme, _, token = (authorization or "").partition(" ")
    parts = token.strip().split(".")
    if not secret or scheme.lower() != "bearer" or len(parts) != 3 or len(token) > 4096:
        return False
    head, body, signature = parts
    expected = _b64url(hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        return False
    try:
        header, claims = json.loads(_unb64url(head)), json.loads(_unb64url(body))
    except (binascii.Error, ValueError, RecursionError):
        return False
    if not isinstance(header, dict) or header.get("alg") != "HS256" or not isinstance(claims, dict):
        return False
    iat, nbf, exp = _time(claims, "iat"), _time(claims, "nbf"), _time(claims, "exp")
    if iat is None or not now - max_age_s <= iat <= now + CLOCK_SKEW_S:
        return False
    if nbf is not None and not nbf <= now + CLOCK_SKEW_S:
        return False
    return exp is None or now < exp


def valid_authorization(expected: str, authorization: str | None) -> bool:
    """Constant-time check of an ``Authorization`` header set verbatim (``authorization.type`` custom). An empty
    ``expected`` accepts nothing."""
    if not expected or not authorization:
        return False
    return hmac.compare_digest(expected.encode(), authorization.encode())
