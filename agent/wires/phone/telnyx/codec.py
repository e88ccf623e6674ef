"""Telnyx media streaming codec (``/telnyx``): pure functions, no sockets.

Telnyx → server (text frames, JSON): ``connected`` (``version``), ``start`` (``stream_id``; in ``start``:
``call_control_id``, ``custom_parameters``, ``media_format`` {``encoding`` PCMU / PCMA / L16,
``sample_rate``, ``channels``}), ``media`` (base64 RTP payload without RTP headers, ``track``, ``chunk``,
``timestamp``), ``dtmf`` (``digit``), ``mark`` (echoes a mark we sent once the audio before it has played,
at once when nothing is queued, and for the queued marks when a ``clear`` drops them), ``error``
(``payload`` {``code``, ``title``, ``detail``}), ``stop``.
Server → Telnyx (bidirectional ``rtp`` mode): ``media`` (base64 payload in the stream's codec, 20 ms to 30 s
each), ``mark`` (a name), ``clear``.

Formats: PCMU and PCMA at 8 kHz; L16 (linear PCM, network byte order as RTP's L16, RFC 3551) at 8 or
16 kHz. What we send back uses the same format as what Telnyx sends, so the stream must be started with
``bidirectionalCodec`` (``stream_bidirectional_codec``) and its sampling rate equal to the streamed ones
(docs/telephony.md). ``decode`` raises ``ProtocolError`` with protocol v1's codes; the connection counts and
drops such messages and the call goes on: among them a ``call_control_id`` that is not an id and a DTMF digit
not of ``0-9 * # A-D`` (``agent.wires.phone.ids``: both reach log lines).
References: https://developers.telnyx.com/docs/voice/programmable-voice/media-streaming and the AsyncAPI
description at https://developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket
"""

from __future__ import annotations

import base64
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

from agent.audio.codecs import CODECS, G711_RATE
from agent.errors import AudioFormatError, ProtocolError
from agent.wires.phone import fields, ids

FRAME_MS = 20
MAX_MEDIA_MS = 200  # a payload over 200 ms is not what Telnyx sends
AUTH_HEADER = "x-telnyx-streaming-auth-token"
"""The handshake header carrying the ``stream_auth_token`` given to Telnyx when the stream was started (a secret:
its row in ``agent.wires.endpoints`` declares it, so the log filter redacts it)."""


@dataclass(frozen=True, slots=True)
class MediaFormat:
    """A stream's audio: ``encoding`` PCMU, PCMA or L16 at ``sample_rate`` Hz, mono."""

    encoding: str
    sample_rate: int

    @property
    def bytes_per_sample(self) -> int:
        return CODECS[self.encoding].bytes_per_sample

    def to_pcm(self, payload: bytes) -> bytes:
        """A payload in this format → PCM16LE. Raises ``ProtocolError`` (``bad_audio``)."""
        try:
            return CODECS[self.encoding].decode(payload)
        except AudioFormatError:
            raise ProtocolError("bad_audio", f"an {self.encoding} payload needs an even number of bytes") from None

    def from_pcm(self, pcm: bytes) -> bytes:
        """PCM16LE → a payload in this format."""
        return CODECS[self.encoding].encode(pcm)


RATES: dict[str, tuple[int, ...]] = {"PCMU": (G711_RATE,), "PCMA": (G711_RATE,), "L16": (8000, 16000)}
"""The formats this server takes, and their sample rates."""
PCMU_8K = MediaFormat("PCMU", 8000)


@dataclass(frozen=True, slots=True)
class Connected:
    version: str


@dataclass(frozen=True, slots=True)
class Start:
    stream_id: str
    call_control_id: str
    media_format: MediaFormat = PCMU_8K
    custom_parameters: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Media:
    """Caller audio as sent: the payload in the stream's format (``MediaFormat.to_pcm`` decodes it)."""

    payload: bytes


@dataclass(frozen=True, slots=True)
class Dtmf:
    digit: str


@dataclass(frozen=True, slots=True)
class Mark:
    name: str


@dataclass(frozen=True, slots=True)
class Error:
    """Telnyx reports a problem with the stream (often with a message we sent)."""

    code: str
    title: str
    detail: str


@dataclass(frozen=True, slots=True)
class Stop:
    pass


TelnyxMessage = Connected | Start | Media | Dtmf | Mark | Error | Stop


def _media_format(value: Any) -> MediaFormat:
    fmt = fields.obj(value if value is not None else {}, "media_format")
    encoding, rate, channels = fmt.get("encoding", "PCMU"), fmt.get("sample_rate", 8000), fmt.get("channels", 1)
    if (
        not isinstance(encoding, str)
        or encoding not in RATES
        or isinstance(rate, bool)
        or not isinstance(rate, int)
        or rate not in RATES[encoding]
        or isinstance(channels, bool)
        or channels != 1
    ):
        raise ProtocolError(
            "unsupported_sample_rate", "need media_format PCMU or PCMA at 8000 Hz, or L16 at 8000 or 16000 Hz, mono"
        )
    return MediaFormat(encoding, rate)


def _short(value: Any) -> str:
    return str(value)[: fields.MAX_NAME_CHARS] if isinstance(value, str | int) and not isinstance(value, bool) else ""


def decode(text: str | bytes) -> TelnyxMessage:
    """Parse one Telnyx message. Raises ``ProtocolError`` (codes as in protocol v1) for anything else."""
    message = fields.json_object(text, "Telnyx")
    event = fields.event(message)
    if event == "media":
        media = fields.obj(message.get("media"), "media")
        if media.get("track", "inbound") != "inbound":
            raise ProtocolError("bad_message", "only the inbound track is accepted (stream track inbound_track)")
        return Media(fields.payload(media.get("payload"), 16000 * 2 * MAX_MEDIA_MS // 1000))
    if event == "start":
        start = fields.obj(message.get("start"), "start")
        media_format = _media_format(start.get("media_format"))
        params = fields.parameters(start.get("custom_parameters"), "custom_parameters")
        stream = fields.text(message if message.get("stream_id") else start, "stream_id", "start")
        return Start(stream, ids.call_id(start, "call_control_id", "start"), media_format, params)
    if event == "mark":
        return Mark(fields.text(fields.obj(message.get("mark"), "mark"), "name", "mark"))
    if event == "dtmf":
        return Dtmf(ids.dtmf_digit(fields.obj(message.get("dtmf"), "dtmf"), "digit", "dtmf"))
    if event == "connected":
        return Connected(_short(message.get("version")))
    if event == "error":
        body = fields.obj(message.get("payload", {}), "error payload")
        return Error(_short(body.get("code")), _short(body.get("title")), _short(body.get("detail")))
    if event == "stop":
        return Stop()
    raise fields.unknown(event)


def check_media(media: Media, fmt: MediaFormat) -> bytes:
    """The caller's PCM16LE from a ``media`` message of a stream in ``fmt``. Raises ``ProtocolError``: a
    payload longer than 200 ms of ``fmt`` (``frame_too_long``), an odd L16 payload (``bad_audio``)."""
    limit = fmt.sample_rate * fmt.bytes_per_sample * MAX_MEDIA_MS // 1000
    if len(media.payload) > limit:
        raise ProtocolError("frame_too_long", f"media payload of {len(media.payload)} bytes")
    return fmt.to_pcm(media.payload)


def media(fmt: MediaFormat, pcm: bytes) -> str:
    """A ``media`` message carrying PCM16LE audio at ``fmt.sample_rate`` in the stream's format."""
    payload = base64.b64encode(fmt.from_pcm(pcm)).decode("ascii")
    return json.dumps({"event": "media", "media": {"payload": payload}})


def mark(name: str) -> str:
    return json.dumps({"event": "mark", "mark": {"name": name}})


def clear() -> str:
    return json.dumps({"event": "clear"})


def valid_auth_token(expected: str, presented: str | None) -> bool:
    """Constant-time check of the ``stream_auth_token`` a handshake presents. An empty ``expected`` accepts
    nothing."""
    if not expected or not presented:
        return False
    return hmac.compare_digest(expected.encode(), presented.encode())
