"""The Realtime codec and wire without sockets: client events → core requests, core events → server events."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest

from agent.audio import mulaw
from agent.core.events import (
    AddMessage,
    AudioChunk,
    AudioEnd,
    AudioStart,
    CancelResponse,
    CommitInput,
    CreateResponse,
    DeleteMessage,
    ErrorNotice,
    InputCommitted,
    MessageAdded,
    ReplyText,
    SpeechStarted,
    SpeechStopped,
    TranscriptText,
    TruncateReply,
    TurnMetrics,
)
from agent.core.policies import SessionConfig
from agent.runtime.call.wire import Reconfigure
from agent.wires.realtime import codec as realtime
from agent.wires.realtime.codec import RealtimeError
from agent.wires.realtime.events import SessionView
from agent.wires.realtime.session_update import TurnDetection
from agent.wires.realtime.wire import RealtimeWire


def wire(beta: bool = False) -> RealtimeWire:
    view = SessionView(id="sess_1", model="m", voice="local-preview", instructions="sys")
    return RealtimeWire(view, 40, beta=beta)


def sent(payloads: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(p) for p in payloads]


def types(payloads: list[Any]) -> list[str]:
    return [e["type"] for e in sent(payloads)]


def metrics(turn: int, interrupted: bool = False) -> TurnMetrics:
    return TurnMetrics(turn, None, None, None, None, None, None, 0, 0, interrupted)


# ------------------------------------------------------------------------------------------------ decode


def test_session_update_reads_the_ga_shape() -> None:
    event = realtime.decode(
        json.dumps(
            {
                "type": "session.update",
                "event_id": "e1",
                "session": {
                    "type": "realtime",
                    "instructions": "Be brief.",
                    "temperature": 0.7,
                    "audio": {
                        "input": {
                            "format": {"type": "audio/pcmu"},
                            "turn_detection": {"type": "semantic_vad", "eagerness": "high", "create_response": False},
                        },
                        "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "alice"},
                    },
                },
            }
        )
    )
    assert isinstance(event, realtime.SessionUpdate) and event.event_id == "e1"
    patch = event.patch
    assert (patch.instructions, patch.voice, patch.input_format, patch.output_format) == (
        "Be brief.",
        "alice",
        "g711_ulaw",
        "pcm16",
    )
    assert patch.turn_detection == TurnDetection("semantic_vad", create_response=False, eagerness="high")


def test_session_update_reads_the_beta_shape_and_null_turn_detection() -> None:
    session = {
        "voice": "bob",
        "input_audio_format": "g711_alaw",
        "turn_detection": None,
        "modalities": ["text", "audio"],
    }
    event = realtime.decode(json.dumps({"type": "session.update", "session": session}))
    assert isinstance(event, realtime.SessionUpdate)
    assert (event.patch.voice, event.patch.input_format, event.patch.turn_detection) == ("bob", "g711_alaw", None)


@pytest.mark.parametrize(
    ("event", "code", "param"),
    [
        (
            {"type": "session.update", "session": {"tools": [{"type": "mcp", "server_label": "x"}]}},
            "unsupported_parameter",
            "session.tools[0].type",
        ),
        (
            {"type": "session.update", "session": {"tools": [{"type": "function"}]}},
            "invalid_value",
            "session.tools[0].name",
        ),
        (
            {"type": "session.update", "session": {"output_modalities": ["text"]}},
            "unsupported_parameter",
            "session.output_modalities",
        ),
        ({"type": "session.update", "session": {"bogus": 1}}, "unknown_parameter", "session.bogus"),
        (
            {"type": "session.update", "session": {"input_audio_format": "mp3"}},
            "invalid_value",
            "session.input_audio_format",
        ),
        (
            {
                "type": "session.update",
                "session": {"audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}},
            },
            "invalid_value",
            "session.audio.input.format.rate",
        ),
        (
            {"type": "session.update", "session": {"turn_detection": {"type": "server_vad", "threshold": 3}}},
            "invalid_value",
            "session.turn_detection.threshold",
        ),
        ({"type": "input_audio_buffer.append", "audio": "not base64!"}, "invalid_value", "audio"),
        ({"type": "input_audio_buffer.append"}, "invalid_value", "audio"),
        ({"type": "conversation.item.create", "item": {"type": "function_call"}}, "unsupported_parameter", "item.type"),
        (
            {"type": "conversation.item.create", "item": {"role": "user", "content": []}},
            "invalid_value",
            "item.content",
        ),
        ({"type": "conversation.item.truncate", "item_id": "i", "audio_end_ms": -1}, "invalid_value", "audio_end_ms"),
        ({"type": "conversation.item.delete"}, "invalid_value", "item_id"),
        (
            {"type": "response.create", "response": {"conversation": "none"}},
            "unsupported_parameter",
            "response.conversation",
        ),
        (
            {"type": "response.create", "response": {"tools": [{"type": "mcp"}]}},
            "unsupported_parameter",
            "response.tools[0].type",
        ),
        ({"type": "conversation.item.retrieve", "item_id": "i"}, "unsupported_event", "type"),
        ({"type": "nope"}, "invalid_event_type", "type"),
        ({"no": "type"}, "invalid_event_type", "type"),
    ],
)
def test_refusals_name_the_parameter(event: dict[str, Any], code: str, param: str) -> None:
    with pytest.raises(RealtimeError) as info:
        realtime.decode(json.dumps({**event, "event_id": "evt"}))
    assert (info.value.code, info.value.param, info.value.event_id) == (code, param, "evt")


def test_not_json_and_binary_frames_are_refused() -> None:
    for frame in ("{", "[1]", b"\x00"):
        with pytest.raises(RealtimeError):
            realtime.decode(frame)


# -------------------------------------------------------------------------------------------------- wire


def test_a_spoken_turn_becomes_a_user_item_and_its_reply_a_response() -> None:
    w = wire()
    started = sent(w.encode(SpeechStarted(1200)))[0]
    assert started["type"] == "input_audio_buffer.speech_started" and started["audio_start_ms"] == 1200
    stopped = w.encode(SpeechStopped(1, 2500))
    assert types(stopped) == [
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
    ]
    user_item = started["item_id"]
    assert all(e["item_id"] == user_item for e in sent(stopped)[:2])
    done = sent(w.encode(TranscriptText(1, "Hi.", language="en")))
    assert done[0]["type"] == "conversation.item.input_audio_transcription.completed"
    assert (done[0]["item_id"], done[0]["transcript"]) == (user_item, "Hi.")
    reply = w.encode(ReplyText(1, "Hello", done=False))
    assert types(reply) == [
        "response.created",
        "response.output_item.added",
        "conversation.item.added",
        "response.content_part.added",
        "response.output_audio_transcript.delta",
    ]
    assert w.encode(AudioStart(1, 24000)) == []
    assert w.encode(AudioChunk(1, b"\x01\x00")) == [b"\x01\x00"]  # raw until it is sent
    assert types(w.encode(ReplyText(1, "Hello", done=True))) == ["response.output_audio_transcript.done"]
    end = sent(w.encode(AudioEnd(1)))
    assert [e["type"] for e in end][-1] == "response.done"
    assert end[-1]["response"]["status"] == "completed"
    assert end[-1]["response"]["output"][0]["content"][0]["transcript"] == "Hello"
    assert w.encode(metrics(1)) == []  # done once only
    # The client's item ids come back as the core's turns.
    reply_item = sent(reply)[1]["item"]["id"]
    assert w.decode(json.dumps({"type": "conversation.item.truncate", "item_id": reply_item, "audio_end_ms": 300})) == (
        TruncateReply(1, 300)
    )
    assert w.decode(json.dumps({"type": "conversation.item.delete", "item_id": user_item})) == DeleteMessage(1, "user")
    with pytest.raises(RealtimeError):
        w.decode(json.dumps({"type": "conversation.item.truncate", "item_id": user_item, "audio_end_ms": 1}))


def test_the_beta_shape_uses_the_beta_names() -> None:
    w = wire(beta=True)
    assert types(w.encode(SpeechStopped(1, 100)))[-1] == "conversation.item.created"
    assert "response.audio_transcript.delta" in types(w.encode(ReplyText(1, "Hi", done=False)))
    created = sent(w.opening("s", "v"))[0]["session"]
    assert created["input_audio_format"] == "pcm16" and created["voice"] == "v"


def test_a_cancelled_response_is_done_as_cancelled_with_the_reason() -> None:
    w = wire()
    w.decode(json.dumps({"type": "response.create"}))
    w.encode(ReplyText(3, "Once upon", done=False))
    assert w.decode(json.dumps({"type": "response.cancel"})) == CancelResponse()
    done = sent(w.encode(metrics(3, interrupted=True)))[-1]
    assert done["response"]["status"] == "cancelled"
    assert done["response"]["status_details"] == {"type": "cancelled", "reason": "client_cancelled"}


def test_items_the_client_creates_keep_its_ids_and_audio_is_converted() -> None:
    w = wire()
    text = {"type": "message", "id": "mine", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}
    assert w.decode(json.dumps({"type": "conversation.item.create", "item": text})) == AddMessage("user", "Hi")
    added = sent(w.encode(MessageAdded(4, "user", "Hi")))[0]
    assert added["item"]["id"] == "mine"
    with pytest.raises(RealtimeError):  # only at the end of the conversation
        w.decode(json.dumps({"type": "conversation.item.create", "previous_item_id": "other", "item": text}))
    pcm = b"\x10\x00" * 2400  # 100 ms at 24 kHz
    append = {"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()}
    assert w.decode(json.dumps(append)) == pcm
    assert w.decode(json.dumps({"type": "input_audio_buffer.commit"})) == CommitInput()
    assert w.decode(json.dumps({"type": "response.create", "response": {"instructions": "x"}})) == CreateResponse("x")


def test_session_update_is_applied_by_the_connection_then_answered() -> None:
    w = wire()
    update = {
        "type": "session.update",
        "session": {
            "instructions": "New.",
            "audio": {"input": {"format": {"type": "audio/pcmu"}, "turn_detection": None}},
        },
    }
    change = w.decode(json.dumps(update))
    assert isinstance(change, Reconfigure) and change.voice is None
    assert w.input_rate == 24000  # not until it is applied
    config = change.rules(SessionConfig(language="en"), SessionConfig(language="en"))
    assert (config.system_prompt, config.detect_turns, config.respond) == ("New.", False, False)
    updated = sent(change.applied("alice"))[0]
    assert updated["type"] == "session.updated" and updated["session"]["audio"]["output"]["voice"] == "alice"
    assert w.input_rate == 8000
    ulaw = mulaw.encode(b"\x00\x10" * 80)
    assert w.decode(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(ulaw).decode()})) == (
        mulaw.decode(ulaw)
    )


def test_server_vad_settings_map_onto_the_end_of_turn_rules() -> None:
    w = wire()
    detection = {
        "type": "server_vad",
        "silence_duration_ms": 700,
        "prefix_padding_ms": 200,
        "interrupt_response": False,
    }
    change = w.decode(json.dumps({"type": "session.update", "session": {"turn_detection": detection}}))
    assert isinstance(change, Reconfigure)
    base = SessionConfig(language="en")
    config = change.rules(replace(base, system_prompt="old"), base)
    assert config.endpointing.hangover_ms == 700 and config.policy.preroll_ms == 200
    assert not config.barge_in.enabled and config.respond and config.detect_turns
    assert config.system_prompt == "sys"  # the session's instructions as they stand


def test_errors_carry_the_client_event_id_and_the_parameter() -> None:
    w = wire()
    with pytest.raises(RealtimeError) as info:
        w.decode(json.dumps({"type": "input_audio_buffer.append", "audio": "??", "event_id": "e9"}))
    error = sent(w.encode(ErrorNotice(info.value.code, info.value.message)))[0]["error"]
    assert (error["type"], error["param"], error["event_id"]) == ("invalid_request_error", "audio", "e9")
    w.decode(json.dumps({"type": "response.create", "event_id": "e10"}))
    error = sent(w.encode(ErrorNotice("conversation_already_has_active_response", "busy")))[0]["error"]
    assert error["event_id"] == "e10" and error["param"] is None


def test_a_refused_request_does_not_shift_the_ids_of_the_next_ones() -> None:
    w = wire()
    w.decode(json.dumps({"type": "input_audio_buffer.commit"}))
    w.encode(ErrorNotice("input_audio_buffer_commit_empty", "nothing to commit"))
    audio = base64.b64encode(b"\x00\x00" * 4000).decode()
    item = {"type": "message", "id": "rec", "role": "user", "content": [{"type": "input_audio", "audio": audio}]}
    assert isinstance(w.decode(json.dumps({"type": "conversation.item.create", "item": item})), CommitInput)
    added = sent(w.encode(InputCommitted(2, 250)))
    assert added[0]["type"] == "conversation.item.added"  # a client item: no buffer commit
    assert added[0]["item"]["id"] == "rec"
    w.decode(json.dumps({"type": "response.create", "response": {"metadata": {"n": 1}}}))
    w.decode(json.dumps({"type": "response.create", "response": {"metadata": {"n": 2}}}))
    w.encode(ErrorNotice("conversation_already_has_active_response", "busy"))
    created = sent(w.encode(ReplyText(3, "Hi", done=False)))[0]
    assert created["response"]["metadata"] == {"n": 1}


def test_a_refused_cancel_does_not_mark_the_next_barge_in_as_the_clients() -> None:
    w = wire()
    w.decode(json.dumps({"type": "response.cancel"}))
    w.encode(ErrorNotice("response_cancel_not_active", "nothing to cancel"))
    w.encode(ReplyText(2, "Once upon", done=False))
    done = sent(w.encode(metrics(2, interrupted=True)))[-1]
    assert done["response"]["status_details"] == {"type": "cancelled", "reason": "turn_detected"}
