"""Twilio Media Streams codec (``/twilio``): pure functions, no sockets.

Twilio → server (text frames, JSON): ``connected``, ``start`` (streamSid, callSid, customParameters,
mediaFormat audio/x-mulaw 8000 Hz mono), ``media`` (base64 μ-law, about 20 ms each), ``dtmf``, ``mark``
(echoes a mark we sent once the audio before it has played, or when a ``clear`` dropped it), ``stop``.
Server → Twilio: ``media`` (base64 μ-law 8 kHz, no header), ``mark`` (a name), ``clear``.

Our mark names are ``"<turn>:<played_ms>"``: the reply audio of ``turn`` the caller has heard once Twilio
echoes the mark. ``decode`` raises ``ProtocolError``; the connection counts and drops such messages and
the call goes on. Reference: https://www.twilio.com/docs/voice/media-streams/websocket-messages
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

from agent.audio import mulaw
from agent.errors import ProtocolError

RATE = 8000
FRAME_MS = 20
FRAME_BYTES = RATE * FRAME_MS // 1000  # μ-law: one byte per sample
MAX_MEDIA_BYTES = FRAME_BYTES * 10  # a payload over 200 ms is not what Twilio sends
MAX_PARAMETERS = 32  # customParameters: Twilio's <Parameter> elements, name → value strings
MAX_PARAMETER_CHARS = 1024
MAX_NAME_CHARS = 256  # sids, mark names, the protocol string
_DIGITS = re.compile(r"[0-9]{1,18}")
_MARK = re.compile(r"([0-9]{1,9}):([0-9]{1,12})(?::([0-9]{1,6}))?")


@dataclass(frozen=True, slots=True)
class Connected:
    protocol: str


@dataclass(frozen=True, slots=True)
class Start:
    stream_sid: str
    call_sid: str
    custom_parameters: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Media:
    """Caller audio, already decoded to PCM16LE at 8 kHz."""

    pcm: bytes
    chunk: int | None


@dataclass(frozen=True, slots=True)
class Dtmf:
    digit: str


@dataclass(frozen=True, slots=True)
class Mark:
    name: str


@dataclass(frozen=True, slots=True)
class Stop:
    pass


TwilioMessage = Connected | Start | Media | Dtmf | Mark | Stop


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolError("bad_message", f"{what} must be an object")
    return value


def _text(obj: dict[str, Any], key: str, what: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME_CHARS:
        raise ProtocolError("bad_message", f"{what} needs a string {key!r} of 1-{MAX_NAME_CHARS} characters")
    return value


def _chunk(value: Any) -> int | None:
    """Twilio numbers media chunks with decimal strings; anything else is ignored (it is informative only)."""
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    return None


def _parameters(value: Any) -> dict[str, str]:
    """``customParameters``: string names to string values, as Twilio sends them."""
    params = _obj(value if value is not None else {}, "customParameters")
    if len(params) > MAX_PARAMETERS:
        raise ProtocolError("bad_message", f"customParameters holds over {MAX_PARAMETERS} entries")
    for key, item in params.items():
        if not isinstance(item, str) or len(key) > MAX_NAME_CHARS or len(item) > MAX_PARAMETER_CHARS:
            raise ProtocolError(
                "bad_message",
                f"customParameters values must be strings of at most {MAX_PARAMETER_CHARS} characters",
            )
    return dict(params)


def _media_format(value: Any) -> None:
    fmt = _obj(value if value is not None else {}, "mediaFormat")
    encoding, rate, channels = fmt.get("encoding", "audio/x-mulaw"), fmt.get("sampleRate", RATE), fmt.get("channels", 1)
    if (
        encoding != "audio/x-mulaw"
        or isinstance(rate, bool)
        or not isinstance(rate, int)
        or rate != RATE
        or isinstance(channels, bool)
        or channels != 1
    ):
        raise ProtocolError("unsupported_sample_rate", "need mediaFormat audio/x-mulaw, 8000 Hz, 1 channel")


def decode(text: str | bytes) -> TwilioMessage:
    """Parse one Twilio message. Raises ``ProtocolError`` (codes as in protocol v1) for anything else."""
    if isinstance(text, bytes):
        raise ProtocolError("bad_message", "Twilio sends text frames only")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        raise ProtocolError("bad_json", "not JSON") from None
    message = _obj(message, "a message")
    event = message.get("event")
    if event == "media":
        media = _obj(message.get("media"), "media")
        if media.get("track", "inbound") != "inbound":
            raise ProtocolError("bad_message", "only the inbound track is accepted")
        payload = media.get("payload")
        if not isinstance(payload, str):
            raise ProtocolError("bad_audio", "media needs a base64 string payload")
        try:
            ulaw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise ProtocolError("bad_audio", "media payload is not valid base64") from None
        if not ulaw:
            raise ProtocolError("bad_audio", "empty media payload")
        if len(ulaw) > MAX_MEDIA_BYTES:
            raise ProtocolError("frame_too_long", f"media payload of {len(ulaw)} bytes")
        return Media(mulaw.decode(ulaw), _chunk(media.get("chunk")))
    if event == "start":
        start = _obj(message.get("start"), "start")
        _media_format(start.get("mediaFormat"))
        params = _parameters(start.get("customParameters"))
        sid = _text(message if message.get("streamSid") else start, "streamSid", "start")
        return Start(sid, _text(start, "callSid", "start"), params)
    if event == "mark":
        return Mark(_text(_obj(message.get("mark"), "mark"), "name", "mark"))
    if event == "dtmf":
        return Dtmf(_text(_obj(message.get("dtmf"), "dtmf"), "digit", "dtmf"))
    if event == "connected":
        protocol = message.get("protocol", "")
        return Connected(protocol[:MAX_NAME_CHARS] if isinstance(protocol, str) else "")
    if event == "stop":
        return Stop()
    if not isinstance(event, str):
        raise ProtocolError("bad_message", "every message needs a string 'event'")
    raise ProtocolError("unknown_type", f"unknown event {event[:40]!r}")


def media(stream_sid: str, pcm: bytes) -> str:
    """A ``media`` message carrying PCM16LE 8 kHz audio as base64 μ-law."""
    payload = base64.b64encode(mulaw.encode(pcm)).decode("ascii")
    return json.dumps({"event": "media", "streamSid": stream_sid, "media": {"payload": payload}})


def mark(stream_sid: str, turn: int, played_ms: float, segment: int = 0) -> str:
    """A mark after reply audio: ``turn:played_ms``, and ``:segment`` once the turn was paused and resumed
    (Twilio echoes the marks of audio a ``clear`` dropped; the segment tells them from the new ones)."""
    name = f"{turn}:{played_ms:.0f}" + (f":{segment}" if segment else "")
    return json.dumps({"event": "mark", "streamSid": stream_sid, "mark": {"name": name}})


def parse_mark(name: str) -> tuple[int, float, int] | None:
    """``(turn, played_ms, segment)`` from one of our mark names, or ``None`` for a name we did not send."""
    match = _MARK.fullmatch(name)
    if match is None:
        return None
    return int(match[1]), float(match[2]), int(match[3] or 0)


def clear(stream_sid: str) -> str:
    return json.dumps({"event": "clear", "streamSid": stream_sid})


def signature(auth_token: str, url: str, params: dict[str, str] | None = None) -> str:
    """Twilio's ``X-Twilio-Signature``: base64 HMAC-SHA1 of the URL followed by the sorted POST params."""
    data = url + "".join(k + v for k, v in sorted((params or {}).items()))
    digest = hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def valid_signature(auth_token: str, url: str, header: str | None) -> bool:
    """Constant-time check of a handshake's ``X-Twilio-Signature`` against the public ``url``."""
    if not header:
        return False
    return hmac.compare_digest(signature(auth_token, url).encode(), header.encode())
