"""OpenAI Realtime API codec, client → server (``/v1/realtime``): pure functions, no sockets.

Every client event is a JSON text frame ``{"type": ..., "event_id": ...}``. ``decode`` turns one into a
``ClientEvent`` or raises ``RealtimeError`` (the documented ``error`` event: ``type``, ``code``, ``message``,
``param``, ``event_id``). What this server cannot do (images, text-only output, out-of-band responses, items
written as the model's) is refused with the parameter named, never ignored in silence. This module changes with
the client events; what ``session.update`` may change is read by ``agent.wires.realtime.session_update``, the
shapes of function calling by ``agent.wires.realtime.tools``.

Reference: https://platform.openai.com/docs/api-reference/realtime-client-events
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.ports import ToolChoice, ToolSpec
from agent.wires.realtime.fields import MAX_ID_CHARS, audio, identifier, integer, obj, optional_id, optional_text
from agent.wires.realtime.fields import (
    RealtimeError as RealtimeError,  # raised by decode: part of this module's interface
)
from agent.wires.realtime.session_update import SessionPatch, check_modalities, session_patch
from agent.wires.realtime.tools import check_parallel, read_choice, read_output, read_tools

Role = Literal["system", "user", "assistant"]


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
class OutputCreate:
    """A ``function_call_output`` item: the client's result of the model's call ``call_id``."""

    call_id: str
    output: str
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
    tools: tuple[ToolSpec, ...] | None = None
    """The tools the client names for this response (``None``: not given)."""
    tool_choice: ToolChoice | None = None


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
    | OutputCreate
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
            return SessionUpdate(session_patch(obj(message.get("session"), "session")), event_id)
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


# ---------------------------------------------------------------------------------- items and responses


def _item(item: dict[str, Any], previous: str | None, event_id: str | None) -> ItemCreate | OutputCreate:
    kind = item.get("type", "message")
    item_id = optional_id(item.get("id"), "item.id")
    if kind == "function_call_output":
        call_id, output = read_output(item)
        return OutputCreate(call_id, output, item_id, previous, event_id)
    if kind == "function_call":
        raise RealtimeError(
            "unsupported_parameter", "function_call items are the model's: a client cannot add them here", "item.type"
        )
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
    check_parallel(response.get("parallel_tool_calls"), "response.parallel_tool_calls")
    key = "output_modalities" if "output_modalities" in response else "modalities"
    check_modalities(response.get(key), f"response.{key}")
    metadata = response.get("metadata") or {}
    return ResponseCreate(
        optional_text(response.get("instructions"), "response.instructions"),
        obj(metadata, "response.metadata"),
        event_id,
        read_tools(response.get("tools"), "response.tools"),
        read_choice(response.get("tool_choice"), "response.tool_choice"),
    )
