"""The Realtime API's ``session.update``, read: what a client may change in its session, and what it may not.

Pure. Both shapes are read: the GA one (``session.audio.input.format``, ``session.audio.output.voice``...) and
the beta one (``input_audio_format``, ``voice``, ``turn_detection``...). What this server cannot do (MCP tools,
text-only output, stored prompts) is refused with the parameter named, never ignored in silence; settings that
only tune OpenAI's own models (``temperature``, ``noise_reduction``, the transcription model...) are accepted
and have no effect (docs/realtime.md). The transcription's ``language`` is read
(``agent.languages.parse_language``): the caller's language, or detect it; ``tools`` and ``tool_choice`` by
``agent.wires.realtime.tools``. This module changes when the
session's settings do; the other client events are ``agent.wires.realtime.codec``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agent.languages import parse_language
from agent.ports import ToolChoice, ToolSpec
from agent.wires.realtime.fields import RealtimeError, boolean, obj, optional_id, optional_int, optional_text
from agent.wires.realtime.formats import FORMAT_RATES, GA_FORMATS, AudioFormat
from agent.wires.realtime.tools import check_parallel, read_choice, read_tools

Eagerness = Literal["low", "medium", "high", "auto"]
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
    tools: tuple[ToolSpec, ...] | None = None
    """The functions the client declares (they replace the session's)."""
    tool_choice: ToolChoice | None = None


def session_patch(session: dict[str, Any]) -> SessionPatch:
    """What the ``session`` object of a ``session.update`` changes. Raises ``RealtimeError``."""
    for key in session:
        if key not in _SESSION_KEYS:
            raise RealtimeError("unknown_parameter", f"unknown parameter session.{key[:60]}", f"session.{key[:60]}")
    if session.get("type", "realtime") != "realtime":
        raise RealtimeError("invalid_value", "only session type 'realtime' is supported", "session.type")
    check_parallel(session.get("parallel_tool_calls"), "session.parallel_tool_calls")
    if session.get("prompt") is not None:
        raise RealtimeError("unsupported_parameter", "stored prompts are not supported", "session.prompt")
    modalities_key = "output_modalities" if "output_modalities" in session else "modalities"
    check_modalities(session.get(modalities_key), f"session.{modalities_key}")
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
        tools=read_tools(session.get("tools"), "session.tools"),
        tool_choice=read_choice(session.get("tool_choice"), "session.tool_choice"),
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
    "parallel_tool_calls",
    "prompt",
}


def _format(ga: dict[str, Any], session: dict[str, Any], side: Literal["input", "output"]) -> AudioFormat | None:
    if "format" in ga:
        param = f"session.audio.{side}.format"
        fmt = obj(ga["format"], param)
        kind = fmt.get("type")
        if kind not in GA_FORMATS:
            raise RealtimeError("invalid_value", f"{param}.type must be one of {sorted(GA_FORMATS)}", param)
        name = GA_FORMATS[kind]
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


def check_modalities(value: Any, param: str) -> None:
    """Refuses ``modalities`` / ``output_modalities`` without audio: this server always speaks."""
    if value is None:
        return
    if not isinstance(value, list) or "audio" not in value or any(m not in ("audio", "text") for m in value):
        raise RealtimeError(
            "unsupported_parameter", "this server always answers with audio (and its transcript)", param
        )
