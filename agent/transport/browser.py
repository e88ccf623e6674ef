"""Protocol v1 codec for browser and CLI callers (``/ws``): pure functions, no sockets.

Client → server: a ``session.start`` text frame, then binary PCM16LE mono frames at the declared rate,
then ``session.end``. Server → client: JSON text frames, and binary frames of reply audio between
``audio.start`` and ``audio.end``. The full contract is in docs/protocol.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, assert_never

from agent.config import SUPPORTED_INPUT_RATES, SUPPORTED_OUTPUT_RATES
from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioStart,
    ErrorNotice,
    ReplyText,
    ServerEvent,
    SessionEnded,
    SpeechStarted,
    SpeechStopped,
    TranscriptText,
    TurnMetrics,
)
from agent.errors import ProtocolError

PROTOCOL_VERSION = 1
_MAX_VOICE_NAME = 64


@dataclass(frozen=True, slots=True)
class SessionStart:
    sample_rate: int
    voice: str | None
    output_sample_rate: int | None


@dataclass(frozen=True, slots=True)
class SessionEnd:
    pass


ClientMessage = SessionStart | SessionEnd


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
    if not isinstance(kind, str):
        raise ProtocolError("bad_message", "every message needs a string 'type'")
    raise ProtocolError("unknown_type", f"unknown message type {kind[:40]!r}")


def _session_start(message: dict[str, Any]) -> SessionStart:
    rate = message.get("sample_rate", 16000)
    if isinstance(rate, bool) or not isinstance(rate, int) or rate not in SUPPORTED_INPUT_RATES:
        raise ProtocolError(
            "unsupported_sample_rate",
            f"sample_rate must be one of {list(SUPPORTED_INPUT_RATES)}, got {str(rate)[:20]}",
        )
    out_rate = message.get("output_sample_rate")
    if out_rate is not None and (
        isinstance(out_rate, bool) or not isinstance(out_rate, int) or out_rate not in SUPPORTED_OUTPUT_RATES
    ):
        raise ProtocolError(
            "unsupported_sample_rate",
            f"output_sample_rate must be one of {list(SUPPORTED_OUTPUT_RATES)}, got {str(out_rate)[:20]}",
        )
    voice = message.get("voice")
    if voice is not None and (not isinstance(voice, str) or not 0 < len(voice) <= _MAX_VOICE_NAME):
        raise ProtocolError("bad_message", f"voice must be null or a name of 1-{_MAX_VOICE_NAME} characters")
    return SessionStart(sample_rate=rate, voice=voice, output_sample_rate=out_rate)


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


def encode(event: ServerEvent) -> str | bytes:
    """The wire form of a server event: a JSON text frame, or raw PCM for audio."""
    match event:
        case AudioChunk():
            return event.pcm
        case SpeechStarted():
            body: dict[str, Any] = {"type": "speech.started", "audio_ms": event.audio_ms}
        case SpeechStopped():
            body = {"type": "speech.stopped", "turn": event.turn, "audio_ms": event.audio_ms}
        case TranscriptText():
            body = {"type": "transcript", "turn": event.turn, "text": event.text}
        case ReplyText():
            body = {"type": "reply.done" if event.done else "reply.delta", "turn": event.turn, "text": event.text}
        case AudioStart():
            body = {"type": "audio.start", "turn": event.turn, "sample_rate": event.sample_rate}
        case AudioEnd():
            body = {"type": "audio.end", "turn": event.turn}
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
            }
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


def session_started(session_id: str, sample_rate: int, output_sample_rate: int, voice: str) -> str:
    return json.dumps(
        {
            "type": "session.started",
            "session_id": session_id,
            "protocol": PROTOCOL_VERSION,
            "input_sample_rate": sample_rate,
            "output_sample_rate": output_sample_rate,
            "voice": voice,
        }
    )
