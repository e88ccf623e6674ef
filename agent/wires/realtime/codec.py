"""OpenAI Realtime API codec, client → server (``/v1/realtime``): pure functions, no sockets.

Every client event is a JSON text frame ``{"type": ..., "event_id": ...}``. ``decode`` turns one into a
``ClientEvent`` or raises ``RealtimeError`` (the documented ``error`` event: ``type``, ``code``, ``message``,
``param``, ``event_id``). Both shapes of ``session.update`` are read: the GA one (``session.audio.input.format``,
``session.audio.output.voice``...) and the beta one (``input_audio_format``, ``voice``, ``turn_detection``...).
What this server cannot do (tools, images, text-only output, out-of-band responses) is refused with the
parameter named, never ignored in silence; settings that only tune OpenAI's own models (``temperature``,
``noise_reduction``, the transcription model...) are accepted and have no effect (docs/realtime.md). The
transcription's ``language`` is read (``agent.languages.parse_language``): the caller's language, or detect it.

Reference: https://platform.openai.com/docs/api-reference/realtime-client-events
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.languages import parse_language
from agent.wires.realtime.fields import (
    MAX_ID_CHARS,
    audio,
    boolean,
    identifier,
    integer,
    obj,
    optional_id,
    optional_int,
    optional_text,
)
from agent.wires.realtime.fields import (
    RealtimeError as RealtimeError,  # raised by decode: part of this module's interface
)

AudioFormat = Literal["pcm16", "g711_ulaw", "g711_alaw"]
FORMAT_RATES: dict[AudioFormat, int] = {"pcm16": 24000, "g711_ulaw": 8000, "g711_alaw": 8000}
_GA_FORMATS: dict[str, AudioFormat] = {"audio/pcm": "pcm16", "audio/pcmu": "g711_ulaw", "audio/pcma": "g711_alaw"}
Eagerness = Literal["low", "medium", "high", "auto"]
Role = Literal["system", "user", "assistant"]
_IGNORED_SESSION_KEYS = frozenset(
    {
        "type",
        "model",
        "id",
        "object",
        "expires_at",
        "temperature",
        "max_response_output_tokens",
        "max_output_tokens",
        "input_audio_noise_reduction",
        "include",
        "tracing",
        "truncation",
        "speed",
        "client_secret",
    }
)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()


@dataclass(frozen=True, slots=True)
class TurnDetection:
    """``server_vad`` or ``semantic_vad`` (``None`` fields: not given, the server's own value stays)."""

    kind: Literal["server_vad", "semantic_vad"]
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None
    create_response: bool = True
    interrupt_response: bool = True
    eagerness: Eagerness = "auto"


@dataclass(frozen=True, slots=True)
class SessionPatch:
    """What a ``session.update`` changes (``None``/``UNSET``: unchanged)."""

    instructions: str | None = None
    voice: str | None = None
    input_format: AudioFormat | None = None
    output_format: AudioFormat | None = None
    turn_detection: TurnDetection | _Unset | None = UNSET
    """``None``: turn detection off (the client commits and asks for responses)."""
    transcription_model: str | None = None
    """The transcription model the client named (echoed only: this server's recogniser transcribes)."""
    language: str | _Unset | None = UNSET
    """The caller's language (a code of ``agent.languages.LANGUAGES``); ``None``: detect it."""


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    patch: SessionPatch
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class AudioAppend:
    audio: bytes
    """As sent, in the session's input format."""
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class AudioCommit:
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class AudioClear:
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class ItemCreate:
    """A message item: ``text``, or ``audio`` (a user message, in the session's input format)."""

    role: Role
    text: str | None
    audio: bytes | None = None
    item_id: str | None = None
    previous_item_id: str | None = None
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class ItemTruncate:
    item_id: str
    content_index: int
    audio_end_ms: int
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class ItemDelete:
    item_id: str
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class ResponseCreate:
    instructions: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class ResponseCancel:
    response_id: str | None = None
    event_id: str | None = None


ClientEvent = (
    SessionUpdate
    | AudioAppend
    | AudioCommit
    | AudioClear
    | ItemCreate
    | ItemTruncate
    | ItemDelete
    | ResponseCreate
    | ResponseCancel
)


def decode(text: str | bytes) -> ClientEvent:
    """Parse one client event. Raises ``RealtimeError``."""
    if isinstance(text, bytes):
        raise RealtimeError("invalid_request_error", "the Realtime API takes JSON text frames only")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        raise RealtimeError("invalid_json", "the event is not valid JSON") from None
    if not isinstance(message, dict):
        raise RealtimeError("invalid_json", "an event must be a JSON object")
    event_id = message.get("event_id")
    event_id = event_id[:MAX_ID_CHARS] if isinstance(event_id, str) else None
    kind = message.get("type")
    try:
        return _decode(kind, message, event_id)
    except RealtimeError as exc:
        exc.event_id = event_id
        raise


def _decode(kind: Any, message: dict[str, Any], event_id: str | None) -> ClientEvent:
    match kind:
        case "session.update":
            return SessionUpdate(_session(obj(message.get("session"), "session")), event_id)
        case "input_audio_buffer.append":
            return AudioAppend(audio(message.get("audio"), "audio"), event_id)
        case "input_audio_buffer.commit":
            return AudioCommit(event_id)
        case "input_audio_buffer.clear":
            return AudioClear(event_id)
        case "conversation.item.create":
            previous = optional_id(message.get("previous_item_id"), "previous_item_id")
            return _item(obj(message.get("item"), "item"), previous, event_id)
        case "conversation.item.truncate":
            return ItemTruncate(
                identifier(message.get("item_id"), "item_id"),
                integer(message.get("content_index", 0), "content_index", 0, 0),
                integer(message.get("audio_end_ms"), "audio_end_ms", 0, 3_600_000),
                event_id,
            )
        case "conversation.item.delete":
            return ItemDelete(identifier(message.get("item_id"), "item_id"), event_id)
        case "response.create":
            return _response(obj(message.get("response", {}), "response"), event_id)
        case "response.cancel":
            return ResponseCancel(optional_id(message.get("response_id"), "response_id"), event_id)
        case "conversation.item.retrieve" | "output_audio_buffer.clear" | "transcription_session.update":
            raise RealtimeError("unsupported_event", f"{kind} is not supported by this server", "type")
        case str():
            raise RealtimeError("invalid_event_type", f"unknown event type {kind[:60]!r}", "type")
        case _:
            raise RealtimeError("invalid_event_type", "every event needs a string 'type'", "type")


# ----------------------------------------------------------------------------------------- session.update


def _session(session: dict[str, Any]) -> SessionPatch:
    for key in session:
        if key not in _SESSION_KEYS:
            raise RealtimeError("unknown_parameter", f"unknown parameter session.{key[:60]}", f"session.{key[:60]}")
    if session.get("type", "realtime") != "realtime":
        raise RealtimeError("invalid_value", "only session type 'realtime' is supported", "session.type")
    _refuse_tools(session.get("tools"), session.get("tool_choice"), "session")
    if session.get("prompt") is not None:
        raise RealtimeError("unsupported_parameter", "stored prompts are not supported", "session.prompt")
    modalities_key = "output_modalities" if "output_modalities" in session else "modalities"
    _modalities(session.get(modalities_key), f"session.{modalities_key}")
    audio = obj(session.get("audio", {}), "session.audio")
    audio_in = obj(audio.get("input", {}), "session.audio.input")
    audio_out = obj(audio.get("output", {}), "session.audio.output")
    voice = audio_out.get("voice", session.get("voice"))
    turn: TurnDetection | _Unset | None = UNSET
    if "turn_detection" in audio_in:
        turn = _turn_detection(audio_in["turn_detection"], "session.audio.input.turn_detection")
    elif "turn_detection" in session:
        turn = _turn_detection(session["turn_detection"], "session.turn_detection")
    if "transcription" in audio_in:
        model, language = _transcription(audio_in["transcription"], "session.audio.input.transcription")
    else:
        model, language = _transcription(session.get("input_audio_transcription"), "session.input_audio_transcription")
    return SessionPatch(
        instructions=optional_text(session.get("instructions"), "session.instructions"),
        voice=optional_id(voice, "session.audio.output.voice" if "voice" in audio_out else "session.voice"),
        input_format=_format(audio_in, session, "input"),
        output_format=_format(audio_out, session, "output"),
        turn_detection=turn,
        transcription_model=model,
        language=language,
    )


_SESSION_KEYS = _IGNORED_SESSION_KEYS | {
    "instructions",
    "voice",
    "audio",
    "input_audio_format",
    "output_audio_format",
    "turn_detection",
    "input_audio_transcription",
    "modalities",
    "output_modalities",
    "tools",
    "tool_choice",
    "prompt",
}


def _format(ga: dict[str, Any], session: dict[str, Any], side: Literal["input", "output"]) -> AudioFormat | None:
    if "format" in ga:
        param = f"session.audio.{side}.format"
        fmt = obj(ga["format"], param)
        kind = fmt.get("type")
        if kind not in _GA_FORMATS:
            raise RealtimeError("invalid_value", f"{param}.type must be one of {sorted(_GA_FORMATS)}", param)
        name = _GA_FORMATS[kind]
        rate = fmt.get("rate", FORMAT_RATES[name])
        if rate != FORMAT_RATES[name]:
            raise RealtimeError("invalid_value", f"{kind} is {FORMAT_RATES[name]} Hz here", f"{param}.rate")
        return name
    value = session.get(f"{side}_audio_format")
    if value is None:
        return None
    if value not in FORMAT_RATES:
        param = f"session.{side}_audio_format"
        raise RealtimeError("invalid_value", f"{param} must be one of {sorted(FORMAT_RATES)}", param)
    return value  # type: ignore[no-any-return]


def _transcription(value: Any, param: str) -> tuple[str | None, str | _Unset | None]:
    """The model and language of ``audio.input.transcription`` (beta ``input_audio_transcription``).

    Transcripts are always made, so ``null`` (or no object) changes nothing; so does an object without
    ``language`` (clients send ``{"model": "whisper-1"}`` only to turn transcripts on). ``language`` ``null``,
    ``""`` or ``"auto"``: detect it. ``prompt``, ``keywords``, ``delay``... tune OpenAI's models: ignored."""
    if value is None:
        return None, UNSET
    transcription = obj(value, param)
    model = optional_id(transcription.get("model"), f"{param}.model")
    if "language" not in transcription:
        return model, UNSET
    language = transcription["language"]
    if language is not None and not isinstance(language, str):
        raise RealtimeError("invalid_value", f"{param}.language must be a string", f"{param}.language")
    try:
        return model, parse_language(language)
    except ValueError as exc:
        raise RealtimeError("invalid_value", f"{param}.language: {exc}", f"{param}.language") from None


def _turn_detection(value: Any, param: str) -> TurnDetection | None:
    if value is None:
        return None
    detection = obj(value, param)
    kind = detection.get("type", "server_vad")
    if kind not in ("server_vad", "semantic_vad"):
        raise RealtimeError("invalid_value", f"{param}.type must be server_vad or semantic_vad", f"{param}.type")
    threshold = detection.get("threshold")
    if threshold is not None and (not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0):
        raise RealtimeError("invalid_value", f"{param}.threshold must be a number from 0 to 1", f"{param}.threshold")
    eagerness = detection.get("eagerness", "auto")
    if eagerness not in ("low", "medium", "high", "auto"):
        raise RealtimeError("invalid_value", f"{param}.eagerness must be low, medium, high or auto", param)
    return TurnDetection(
        kind=kind,
        threshold=None if threshold is None else float(threshold),
        prefix_padding_ms=optional_int(detection.get("prefix_padding_ms"), f"{param}.prefix_padding_ms", 0, 2000),
        silence_duration_ms=optional_int(
            detection.get("silence_duration_ms"), f"{param}.silence_duration_ms", 100, 5000
        ),
        create_response=boolean(detection.get("create_response", True), f"{param}.create_response"),
        interrupt_response=boolean(detection.get("interrupt_response", True), f"{param}.interrupt_response"),
        eagerness=eagerness,
    )


def _modalities(value: Any, param: str) -> None:
    if value is None:
        return
    if not isinstance(value, list) or "audio" not in value or any(m not in ("audio", "text") for m in value):
        raise RealtimeError(
            "unsupported_parameter", "this server always answers with audio (and its transcript)", param
        )


def _refuse_tools(tools: Any, choice: Any, where: str) -> None:
    if tools not in (None, []):
        raise RealtimeError("unsupported_parameter", "tools (function calling) are not supported", f"{where}.tools")
    if choice not in (None, "auto", "none"):
        raise RealtimeError(
            "unsupported_parameter", "tools (function calling) are not supported", f"{where}.tool_choice"
        )


# ---------------------------------------------------------------------------------- items and responses


def _item(item: dict[str, Any], previous: str | None, event_id: str | None) -> ItemCreate:
    kind = item.get("type", "message")
    if kind != "message":
        raise RealtimeError("unsupported_parameter", f"items of type {str(kind)[:40]!r} are not supported", "item.type")
    role = item.get("role")
    if role not in ("user", "assistant", "system"):
        raise RealtimeError("invalid_value", "item.role must be user, assistant or system", "item.role")
    content = item.get("content")
    if not isinstance(content, list) or len(content) != 1:
        raise RealtimeError("invalid_value", "item.content must hold exactly one part", "item.content")
    part = obj(content[0], "item.content[0]")
    part_type = part.get("type")
    item_id = optional_id(item.get("id"), "item.id")
    if part_type in ("input_text", "text", "output_text"):
        text = optional_text(part.get("text"), "item.content[0].text")
        if not text or not text.strip():
            raise RealtimeError("invalid_value", "a text part needs non-empty text", "item.content[0].text")
        return ItemCreate(role, text, None, item_id, previous, event_id)
    if part_type == "input_audio" and role == "user":
        return ItemCreate(role, None, audio(part.get("audio"), "item.content[0].audio"), item_id, previous, event_id)
    raise RealtimeError(
        "unsupported_parameter",
        f"content parts of type {str(part_type)[:40]!r} are not supported here",
        "item.content[0].type",
    )


def _response(response: dict[str, Any], event_id: str | None) -> ResponseCreate:
    for key in ("input", "prompt"):
        if response.get(key) is not None:
            raise RealtimeError("unsupported_parameter", f"response.{key} is not supported", f"response.{key}")
    if response.get("conversation", "auto") != "auto":
        raise RealtimeError("unsupported_parameter", "out-of-band responses are not supported", "response.conversation")
    _refuse_tools(response.get("tools"), response.get("tool_choice"), "response")
    key = "output_modalities" if "output_modalities" in response else "modalities"
    _modalities(response.get(key), f"response.{key}")
    metadata = response.get("metadata") or {}
    return ResponseCreate(
        optional_text(response.get("instructions"), "response.instructions"),
        obj(metadata, "response.metadata"),
        event_id,
    )
