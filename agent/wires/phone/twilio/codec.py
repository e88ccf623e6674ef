"""Twilio Media Streams codec (``/twilio``): pure functions, no sockets.

Twilio → server (text frames, JSON): ``connected``, ``start`` (streamSid, callSid, customParameters,
mediaFormat audio/x-mulaw 8000 Hz mono), ``media`` (base64 μ-law, about 20 ms each), ``dtmf``, ``mark``
(echoes a mark we sent once the audio before it has played, or when a ``clear`` dropped it), ``stop``.
Server → Twilio: ``media`` (base64 μ-law 8 kHz, no header), ``mark`` (a name), ``clear``.

Our mark names are ``"<turn>:<played_ms>"``: the reply audio of ``turn`` the caller has heard once Twilio
echoes the mark. ``decode`` raises ``ProtocolError``; the connection counts and drops such messages and
the call goes on: among them a ``callSid`` that is not an id and a DTMF digit not of ``0-9 * # A-D``
(``agent.wires.phone.ids``: both reach log lines).
Reference: https://www.twilio.com/docs/voice/media-streams/websocket-messages
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from typing import Any

from agent.audio import mulaw
from agent.errors import ProtocolError
from agent.wires.phone import fields, ids, marks

RATE = 8000
FRAME_MS = 20
FRAME_BYTES = RATE * FRAME_MS // 1000  # μ-law: one byte per sample
MAX_MEDIA_BYTES = FRAME_BYTES * 10  # a payload over 200 ms is not what Twilio sends
_DIGITS = re.compile(r"[0-9]{1,18}")


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


def _chunk(value: Any) -> int | None:
    """Twilio numbers media chunks with decimal strings; anything else is ignored (it is informative only)."""
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    return None


def _media_format(value: Any) -> None:
    fmt = fields.obj(value if value is not None else {}, "mediaFormat")
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
    message = fields.json_object(text, "Twilio")
    event = fields.event(message)
    if event == "media":
        media = fields.obj(message.get("media"), "media")
        if media.get("track", "inbound") != "inbound":
            raise ProtocolError("bad_message", "only the inbound track is accepted")
        ulaw = fields.payload(media.get("payload"), MAX_MEDIA_BYTES)
        return Media(mulaw.decode(ulaw), _chunk(media.get("chunk")))
    if event == "start":
        start = fields.obj(message.get("start"), "start")
        _media_format(start.get("mediaFormat"))
        params = fields.parameters(start.get("customParameters"), "customParameters")
        sid = fields.text(message if message.get("streamSid") else start, "streamSid", "start")
        return Start(sid, ids.call_id(start, "callSid", "start"), params)
    if event == "mark":
        return Mark(fields.text(fields.obj(message.get("mark"), "mark"), "name", "mark"))
    if event == "dtmf":
        return Dtmf(ids.dtmf_digit(fields.obj(message.get("dtmf"), "dtmf"), "digit", "dtmf"))
    if event == "connected":
        protocol = message.get("protocol", "")
        return Connected(protocol[: fields.MAX_NAME_CHARS] if isinstance(protocol, str) else "")
    if event == "stop":
        return Stop()
    raise fields.unknown(event)


def media(stream_sid: str, pcm: bytes) -> str:
    """A ``media`` message carrying PCM16LE 8 kHz audio as base64 μ-law."""
    payload = base64.b64encode(mulaw.encode(pcm)).decode("ascii")
    return json.dumps({"event": "media", "streamSid": stream_sid, "media": {"payload": payload}})


def mark(stream_sid: str, turn: int, played_ms: float, segment: int = 0) -> str:
    """A mark after reply audio: ``turn:played_ms``, and ``:segment`` once the turn was paused and resumed
    (Twilio echoes the marks of audio a ``clear`` dropped; the segment tells them from the new ones)."""
    return mark_named(stream_sid, marks.name(turn, played_ms, segment))


def mark_named(stream_sid: str, name: str) -> str:
    """A ``mark`` message with the name ``name`` (one of ``agent.wires.phone.marks``)."""
    return json.dumps({"event": "mark", "streamSid": stream_sid, "mark": {"name": name}})


def parse_mark(name: str) -> tuple[int, float, int] | None:
    """``(turn, played_ms, segment)`` from one of our mark names, or ``None`` for a name we did not send."""
    return marks.parse(name)


def clear(stream_sid: str) -> str:
    return json.dumps({"event": "clear", "streamSid": stream_sid})


def signature(auth_token: str, url: str, params: dict[str, str] | None = None) -> str:
    """Twilio's ``X-Twilio-Signature``: base64 HMAC-SHA1 of the URL followed by the sorted POST params."""
    data = url + "".join(k + v for k, v in sorted((params or {}).items()))
    digest = hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def valid_signature(auth_token: str, url: str, header: str | None) -> bool:
    """Constant-time check of a handshake's ``X-Twilio-Signature`` against the public ``url``. An empty
    ``auth_token`` accepts nothing (anyone could sign with it)."""
    if not auth_token or not header:
        return False
    return hmac.compare_digest(signature(auth_token, url).encode(), header.encode())
