"""Protocol v1 codec for browser and CLI callers (``/ws``): pure functions, no sockets.

Client → server: a ``session.start`` text frame, then binary PCM16LE mono frames at the declared rate,
then ``session.end``; ``tool.result`` answers a ``tool.call`` (``agent.wires.browser.tools``). Server → client:
JSON text frames, and binary frames of reply audio between ``audio.start`` and ``audio.end``. The full contract
is in docs/protocol.md.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, assert_never

from agent.audio.rates import SUPPORTED_INPUT_RATES, SUPPORTED_OUTPUT_RATES
from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioStart,
    ErrorNotice,
    PlaybackClear,
    PlaybackPause,
    ReplyText,
    SessionEnded,
    SpeechStarted,
    SpeechStopped,
    ToolCalled,
    ToolResult,
    TranscriptText,
    TurnEvent,
    TurnMetrics,
)
from agent.errors import ProtocolError
from agent.languages import AUTO, parse_language
from agent.ports import ToolSpec
from agent.wires.browser import tools as tooling

PROTOCOL_VERSION = 1
_MAX_VOICE_NAME = 64
CAPABILITIES: tuple[str, ...] = ("playback.pause",)
"""Optional client abilities a ``session.start`` may list; unknown ones are ignored (newer clients)."""
_MAX_CAPABILITIES = 16
MAX_TOKEN_CHARS = 4096
MAX_SPEAKER_CHARS = 200


@dataclass(frozen=True, slots=True)
class SessionStart:
    sample_rate: int
    voice: str | None
    output_sample_rate: int | None
    token: str | None = None
    capabilities: frozenset[str] = frozenset()
    """The known ``CAPABILITIES`` the client listed."""
    language: str | None = None
    """The caller's language (an ``agent.languages`` code); ``None``: ``"auto"`` or not given."""
    tools: tuple[ToolSpec, ...] = ()
    """The functions the client declared and runs itself (``runs_on="client"``; ``agent.wires.browser.tools``)."""


@dataclass(frozen=True, slots=True)
class SessionEnd:
    pass


@dataclass(frozen=True, slots=True)
class EnrollBegin:
    """``voice.enroll.begin``: an upload of ``size`` bytes follows in ``voice.enroll.chunk`` messages."""

    name: str
    consent: str
    size: int
    transcript: str | None
    language: str | None
    token: str | None = None
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class EnrollChunk:
    data: bytes


@dataclass(frozen=True, slots=True)
class EnrollEnd:
    pass


@dataclass(frozen=True, slots=True)
class EnrollCancel:
    pass


@dataclass(frozen=True, slots=True)
class VoicesList:
    token: str | None = None


@dataclass(frozen=True, slots=True)
class VoicesRemove:
    """``voices.remove``: delete one of the caller's tenant's voices (needs the ``enroll`` scope)."""

    name: str
    token: str | None = None


@dataclass(frozen=True, slots=True)
class PlaybackMarkMessage:
    """``playback.mark``: the client has played ``played_ms`` of turn ``turn``'s audio."""

    turn: int
    played_ms: float


EnrollmentMessage = EnrollBegin | EnrollChunk | EnrollEnd | EnrollCancel | VoicesList | VoicesRemove
ClientMessage = SessionStart | SessionEnd | PlaybackMarkMessage | ToolResult | EnrollmentMessage


def decode_text(text: str) -> ClientMessage:
    """Parse a client text frame. Raises ``ProtocolError`` with a wire code for anything unacceptable."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError("bad_json", f"text frames must be JSON objects: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise ProtocolError("bad_json", "text frames must be JSON objects")
    kind = message.get("type")
    if kind == "session.start":
        return _session_start(message)
    if kind == "session.end":
        return SessionEnd()
    if kind == "playback.mark":
        return _playback_mark(message)
    if kind == "tool.result":
        return tooling.tool_result(message)
    if isinstance(kind, str) and kind.startswith(("voice.enroll.", "voices.")):
        return _enrollment(kind, message)
    if not isinstance(kind, str):
        raise ProtocolError("bad_message", "every message needs a string 'type'")
    raise ProtocolError("unknown_type", f"unknown message type {kind[:40]!r}")


def describe(value: Any) -> str:
    """A short, safe description of a client value for an error message (never ``str`` of a nested value:
    a deeply nested one would recurse, a huge one would be copied)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)[:20] if value.bit_length() < 64 else "a huge integer"
    if isinstance(value, float):
        return repr(value)[:20]
    if isinstance(value, str):
        return repr(value[:20])
    return f"a JSON {'array' if isinstance(value, list) else 'object'}"


def _playback_mark(message: dict[str, Any]) -> PlaybackMarkMessage:
    turn, played = message.get("turn"), message.get("played_ms")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
        raise ProtocolError("bad_message", "playback.mark needs an integer 'turn'")
    if isinstance(played, bool) or not isinstance(played, int | float) or not 0 <= played < 86_400_000:
        raise ProtocolError("bad_message", "playback.mark needs a non-negative number 'played_ms'")
    return PlaybackMarkMessage(turn=turn, played_ms=float(played))


def _session_start(message: dict[str, Any]) -> SessionStart:
    rate = message.get("sample_rate", 16000)
    if isinstance(rate, bool) or not isinstance(rate, int) or rate not in SUPPORTED_INPUT_RATES:
        raise ProtocolError(
            "unsupported_sample_rate",
            f"sample_rate must be one of {list(SUPPORTED_INPUT_RATES)}, got {describe(rate)}",
        )
    out_rate = message.get("output_sample_rate")
    if out_rate is not None and (
        isinstance(out_rate, bool) or not isinstance(out_rate, int) or out_rate not in SUPPORTED_OUTPUT_RATES
    ):
        raise ProtocolError(
            "unsupported_sample_rate",
            f"output_sample_rate must be one of {list(SUPPORTED_OUTPUT_RATES)}, got {describe(out_rate)}",
        )
    voice = message.get("voice")
    if voice is not None and (not isinstance(voice, str) or not 0 < len(voice) <= _MAX_VOICE_NAME):
        raise ProtocolError("bad_message", f"voice must be null or a name of 1-{_MAX_VOICE_NAME} characters")
    return SessionStart(
        sample_rate=rate,
        voice=voice,
        output_sample_rate=out_rate,
        token=_token(message),
        capabilities=_capabilities(message),
        language=_language(message),
        tools=tooling.declared_tools(message),
    )


def _language(message: dict[str, Any]) -> str | None:
    value = message.get("language")
    if value is not None and not isinstance(value, str):
        raise ProtocolError("bad_message", "language must be a string: 'auto' or a language code such as 'de'")
    try:
        return parse_language(value)
    except ValueError as exc:
        raise ProtocolError("bad_message", str(exc)) from None


def _capabilities(message: dict[str, Any]) -> frozenset[str]:
    listed = message.get("capabilities", [])
    if (
        not isinstance(listed, list)
        or len(listed) > _MAX_CAPABILITIES
        or not all(isinstance(c, str) and len(c) <= _MAX_VOICE_NAME for c in listed)
    ):
        raise ProtocolError("bad_message", f"capabilities must be a list of at most {_MAX_CAPABILITIES} short strings")
    return frozenset(c for c in listed if c in CAPABILITIES)


def _token(message: dict[str, Any]) -> str | None:
    """The optional ``token`` of a pre-session message; only its shape is checked here (see agent.security.auth)."""
    token = message.get("token")
    if token is None:
        return None
    if not isinstance(token, str):
        raise ProtocolError("bad_message", "token must be a string or null")
    if len(token) > MAX_TOKEN_CHARS:
        raise ProtocolError("unauthorized", f"token longer than {MAX_TOKEN_CHARS} characters")
    return token


def _optional_text(message: dict[str, Any], field: str) -> str | None:
    value = message.get(field)
    if value is not None and not isinstance(value, str):
        raise ProtocolError("bad_message", f"{field} must be a string or null")
    return value


def _enrollment(kind: str, message: dict[str, Any]) -> EnrollmentMessage:
    if kind == "voice.enroll.begin":
        size = message.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ProtocolError("bad_message", "voice.enroll.begin needs size: the upload's length in bytes (> 0)")
        name, consent = message.get("name"), message.get("consent", "")
        if not isinstance(name, str):
            raise ProtocolError("bad_name", "voice.enroll.begin needs a string name")
        if not isinstance(consent, str):
            raise ProtocolError("consent_required", "consent must be a string")
        transcript = _optional_text(message, "transcript")
        speaker = _optional_text(message, "speaker")
        if speaker is not None and len(speaker) > MAX_SPEAKER_CHARS:
            raise ProtocolError("bad_message", f"speaker must be at most {MAX_SPEAKER_CHARS} characters")
        language = _optional_text(message, "language")
        return EnrollBegin(name, consent, size, transcript, language, token=_token(message), speaker=speaker)
    if kind == "voice.enroll.chunk":
        data = message.get("data")
        if not isinstance(data, str):
            raise ProtocolError("bad_message", "voice.enroll.chunk needs data: a base64 string")
        try:
            return EnrollChunk(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError):
            raise ProtocolError("bad_message", "voice.enroll.chunk data is not valid base64") from None
    if kind == "voice.enroll.end":
        return EnrollEnd()
    if kind == "voice.enroll.cancel":
        return EnrollCancel()
    if kind == "voices.list":
        return VoicesList(token=_token(message))
    if kind == "voices.remove":
        name = message.get("name")
        if not isinstance(name, str):
            raise ProtocolError("bad_name", "voices.remove needs a string name")
        return VoicesRemove(name, token=_token(message))
    raise ProtocolError("unknown_type", f"unknown message type {kind[:40]!r}")


def check_audio(frame: bytes, sample_rate: int, max_frame_ms: int) -> bytes:
    """Validate one binary audio frame (PCM16LE mono at ``sample_rate``). Raises ``ProtocolError``."""
    if len(frame) % 2:
        raise ProtocolError("bad_audio", f"PCM16 frames need an even byte length, got {len(frame)}")
    limit = sample_rate * 2 * max_frame_ms // 1000
    if len(frame) > limit:
        raise ProtocolError(
            "frame_too_long", f"audio frames may hold at most {max_frame_ms} ms ({limit} bytes), got {len(frame)}"
        )
    return frame


def encode(event: TurnEvent) -> str | bytes:
    """The wire form of a server event: a JSON text frame, or raw PCM for audio."""
    match event:
        case AudioChunk():
            return event.pcm
        case SpeechStarted():
            body: dict[str, Any] = {"type": "speech.started", "audio_ms": event.audio_ms}
        case SpeechStopped():
            body = {"type": "speech.stopped", "turn": event.turn, "audio_ms": event.audio_ms}
        case TranscriptText():
            body = {"type": "transcript", "turn": event.turn, "text": event.text, "language": event.language}
            if event.continues is not None:
                body["continues"] = event.continues
        case ReplyText():
            body = {"type": "reply.done" if event.done else "reply.delta", "turn": event.turn, "text": event.text}
        case AudioStart():
            body = {"type": "audio.start", "turn": event.turn, "sample_rate": event.sample_rate}
        case AudioEnd():
            body = {"type": "audio.end", "turn": event.turn}
        case PlaybackClear():
            body = {"type": "playback.clear", "turn": event.turn}
        case PlaybackPause():
            body = {"type": "playback.pause", "turn": event.turn, "played_ms": event.played_ms}
        case TurnMetrics():
            body = {
                "type": "turn.metrics",
                "turn": event.turn,
                "endpoint_ms": event.endpoint_ms,
                "asr_ms": event.asr_ms,
                "llm_first_text_ms": event.llm_first_text_ms,
                "llm_total_ms": event.llm_total_ms,
                "tts_first_audio_ms": event.tts_first_audio_ms,
                "voice_to_voice_ms": event.voice_to_voice_ms,
                "utterance_ms": event.utterance_ms,
                "reply_audio_ms": event.reply_audio_ms,
                "interrupted": event.interrupted,
                "speculative_asr": event.speculative_asr,
                "heard_ms": event.heard_ms,
                "preemptive": event.preemptive,
                "tail_ms": event.tail_ms,
                "caller_voice_to_voice_ms": event.caller_voice_to_voice_ms,
                "spec_asr_ms": event.spec_asr_ms,
                "score_ms": event.score_ms,
                "words_ms": event.words_ms,
                "tools": tooling.timings(event.tools),
            }
        case ToolCalled():
            body = tooling.tool_call_body(event)
        case ErrorNotice():
            body = error_body(event.code, event.message, event.turn)
        case SessionEnded():
            body = {"type": "session.ended", "reason": event.reason}
        case _:
            assert_never(event)
    return json.dumps(body)


def error_body(code: str, message: str, turn: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if turn is not None:
        body["turn"] = turn
    return body


def session_started(
    session_id: str,
    sample_rate: int,
    output_sample_rate: int,
    voice: str,
    capabilities: frozenset[str] = frozenset(),
    language: str | None = None,
    tools: tuple[ToolSpec, ...] = (),
) -> str:
    """``language``: the one the client gave (``None``: ``"auto"``); ``tools``: the ones it declared."""
    return json.dumps(
        {
            "type": "session.started",
            "session_id": session_id,
            "protocol": PROTOCOL_VERSION,
            "input_sample_rate": sample_rate,
            "output_sample_rate": output_sample_rate,
            "voice": voice,
            "capabilities": sorted(capabilities),
            "language": language or AUTO,
            "tools": [tool.name for tool in tools],
        }
    )
