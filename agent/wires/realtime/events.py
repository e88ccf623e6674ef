"""OpenAI Realtime API codec, server → client: the JSON of each server event, in the GA shape or, for a client
that connected with ``OpenAI-Beta: realtime=v1``, the beta one (``response.audio.delta`` for
``response.output_audio.delta``, ``conversation.item.created`` for ``conversation.item.added``/``.done``,
``input_audio_format`` for ``audio.input.format``...). Pure functions of their arguments; ``Dialect`` numbers
the events.

Reference: https://platform.openai.com/docs/api-reference/realtime-server-events
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.ports import ToolChoice, ToolSpec
from agent.wires.realtime.formats import FORMAT_RATES, GA_FORMAT_TYPES, AudioFormat
from agent.wires.realtime.session_update import TurnDetection
from agent.wires.realtime.tools import choice_json, tools_json

Status = Literal["completed", "cancelled", "incomplete", "failed", "in_progress"]


@dataclass(slots=True)
class SessionView:
    """The session as the client sees it (``session.created`` / ``session.updated``)."""

    id: str
    model: str
    voice: str
    instructions: str
    input_format: AudioFormat = "pcm16"
    output_format: AudioFormat = "pcm16"
    turn_detection: TurnDetection | None = field(default_factory=lambda: TurnDetection("server_vad"))
    transcription_model: str = "whisper-1"
    """Echoed only: this server's recogniser transcribes, whatever the client names."""
    language: str | None = None
    """The caller's language as configured (a code of ``agent.languages.LANGUAGES``); ``None``: detected."""
    tools: tuple[ToolSpec, ...] = ()
    """The functions the client declared (it runs them): all the model may call."""
    tool_choice: ToolChoice = "auto"


@dataclass(slots=True)
class Dialect:
    beta: bool = False
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def event(self, kind: str, **body: Any) -> str:
        return json.dumps({"type": kind, "event_id": self.new_id("event"), **body})

    # --------------------------------------------------------------------------------------- session

    def session(self, kind: Literal["session.created", "session.updated"], view: SessionView) -> str:
        return self.event(kind, session=self._session(view))

    def _session(self, view: SessionView) -> dict[str, Any]:
        turn = _turn_detection(view.turn_detection)
        if self.beta:
            return {
                "id": view.id,
                "object": "realtime.session",
                "model": view.model,
                "modalities": ["audio", "text"],
                "instructions": view.instructions,
                "voice": view.voice,
                "input_audio_format": view.input_format,
                "output_audio_format": view.output_format,
                "input_audio_transcription": _transcription(view),
                "turn_detection": turn,
                "tools": tools_json(view.tools),
                "tool_choice": choice_json(view.tool_choice, beta=True),
            }
        return {
            "type": "realtime",
            "object": "realtime.session",
            "id": view.id,
            "model": view.model,
            "output_modalities": ["audio"],
            "instructions": view.instructions,
            "audio": {
                "input": {
                    "format": _ga_format(view.input_format),
                    "turn_detection": turn,
                    "transcription": _transcription(view),
                },
                "output": {"format": _ga_format(view.output_format), "voice": view.voice},
            },
            "tools": tools_json(view.tools),
            "tool_choice": choice_json(view.tool_choice, beta=False),
        }

    # ------------------------------------------------------------------------------------------ items

    def user_audio_item(self, item_id: str, transcript: str | None, status: Status = "completed") -> dict[str, Any]:
        content = {"type": "input_audio", "transcript": transcript}
        return _message(item_id, "user", [content], status)

    def text_item(self, item_id: str, role: str, text: str) -> dict[str, Any]:
        kind = "input_text" if role in ("user", "system") else ("text" if self.beta else "output_text")
        return _message(item_id, role, [{"type": kind, "text": text}], "completed")

    def reply_item(self, item_id: str, transcript: str | None, status: Status) -> dict[str, Any]:
        content = [] if transcript is None else [{"type": self._audio_part, "transcript": transcript}]
        return _message(item_id, "assistant", content, status)

    @property
    def _audio_part(self) -> str:
        return "audio" if self.beta else "output_audio"

    def item_added(self, item: dict[str, Any], previous_item_id: str | None) -> list[str]:
        """The item is in the conversation: ``conversation.item.added`` then ``.done`` (beta: ``.created``)."""
        if self.beta:
            return [self.event("conversation.item.created", previous_item_id=previous_item_id, item=item)]
        return [
            self.event("conversation.item.added", previous_item_id=previous_item_id, item=item),
            self.event("conversation.item.done", previous_item_id=previous_item_id, item=item),
        ]

    def transcription_completed(self, item_id: str, transcript: str, seconds: float, language: str | None) -> str:
        """The user item's transcript; ``usage`` by audio duration (as whisper-1's), and in the GA shape the
        language it was heard in (``languages``; left out when not known)."""
        body: dict[str, Any] = {
            "item_id": item_id,
            "content_index": 0,
            "transcript": transcript,
            "usage": {"type": "duration", "seconds": round(seconds, 3)},
        }
        if not self.beta and language is not None:
            body["languages"] = [{"code": language}]
        return self.event("conversation.item.input_audio_transcription.completed", **body)

    # -------------------------------------------------------------------------------------- responses

    def response(
        self,
        response_id: str,
        status: Status,
        output: list[dict[str, Any]],
        metadata: dict[str, Any],
        output_format: AudioFormat,
        voice: str,
        reason: str | None = None,
        error: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """``reason`` why it was cancelled, or the ``error`` it failed with (``status_details``)."""
        details: dict[str, Any] | None = None
        if reason is not None:
            details = {"type": status, "reason": reason}
        elif error is not None:
            details = {"type": status, "error": error}
        body: dict[str, Any] = {
            "id": response_id,
            "object": "realtime.response",
            "status": status,
            "status_details": details,
            "output": output,
            "conversation_id": "conv_default",
            "metadata": metadata or None,
            "usage": None,
        }
        if self.beta:
            body["modalities"] = ["audio", "text"]
            body["output_audio_format"] = output_format
            body["voice"] = voice
        else:
            body["output_modalities"] = ["audio"]
            body["audio"] = {"output": {"format": _ga_format(output_format), "voice": voice}}
        return body

    def audio_delta(self, response_id: str, item_id: str, index: int, delta: str) -> str:
        kind = "response.audio.delta" if self.beta else "response.output_audio.delta"
        return self.event(kind, **_part(response_id, item_id, index), delta=delta)

    def audio_done(self, response_id: str, item_id: str, index: int) -> str:
        kind = "response.audio.done" if self.beta else "response.output_audio.done"
        return self.event(kind, **_part(response_id, item_id, index))

    def transcript_delta(self, response_id: str, item_id: str, index: int, delta: str) -> str:
        kind = "response.audio_transcript.delta" if self.beta else "response.output_audio_transcript.delta"
        return self.event(kind, **_part(response_id, item_id, index), delta=delta)

    def transcript_done(self, response_id: str, item_id: str, index: int, transcript: str) -> str:
        kind = "response.audio_transcript.done" if self.beta else "response.output_audio_transcript.done"
        return self.event(kind, **_part(response_id, item_id, index), transcript=transcript)

    def content_part(self, kind: str, response_id: str, item_id: str, index: int, transcript: str) -> str:
        part = {"type": "audio", "transcript": transcript}
        return self.event(kind, **_part(response_id, item_id, index), part=part)

    # ----------------------------------------------------------------------------------------- errors

    def error(self, code: str, message: str, param: str | None = None, event_id: str | None = None) -> str:
        error = {"type": error_type(code), "code": code, "message": message, "param": param, "event_id": event_id}
        return self.event("error", error=error)


def error_type(code: str) -> str:
    """The ``type`` of an error of ``code``: ``server_error`` for the server's own faults."""
    return "server_error" if code in ("internal_error", "server_error") else "invalid_request_error"


def _part(response_id: str, item_id: str, index: int) -> dict[str, Any]:
    """Where an event of the reply's audio part belongs: the response, its message item (the ``index``-th of
    its output) and the one content part."""
    return {"response_id": response_id, "item_id": item_id, "output_index": index, "content_index": 0}


def _message(item_id: str, role: str, content: list[dict[str, Any]], status: Status) -> dict[str, Any]:
    return {
        "id": item_id,
        "object": "realtime.item",
        "type": "message",
        "status": status,
        "role": role,
        "content": content,
    }


def _transcription(view: SessionView) -> dict[str, Any]:
    """Transcripts are always made: the session's transcription is never ``null``."""
    return {"model": view.transcription_model, "language": view.language}


def _ga_format(name: AudioFormat) -> dict[str, Any]:
    fmt: dict[str, Any] = {"type": GA_FORMAT_TYPES[name]}
    if name == "pcm16":
        fmt["rate"] = FORMAT_RATES[name]
    return fmt


def _turn_detection(turn: TurnDetection | None) -> dict[str, Any] | None:
    if turn is None:
        return None
    body: dict[str, Any] = {
        "type": turn.kind,
        "create_response": turn.create_response,
        "interrupt_response": turn.interrupt_response,
    }
    if turn.kind == "semantic_vad":
        body["eagerness"] = turn.eagerness
    else:
        body |= {
            "threshold": turn.threshold,
            "prefix_padding_ms": turn.prefix_padding_ms,
            "silence_duration_ms": turn.silence_duration_ms,
        }
    return body
