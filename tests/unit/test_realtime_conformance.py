"""Every Realtime server event against the official ``openai`` package's models, and what issue 21 found.

``conforming`` parses an event with the model of its type (GA ``openai.types.realtime``, beta
``openai.types.beta.realtime``) strictly: every required field present, every value of the model's type, and no
field the model does not know (but the session's ``id`` and ``object``, which OpenAI's own sessions carry too).
``tests/integration/test_realtime_conformance.py`` applies it to a real session; here the wire is driven through
every event it emits, in both shapes, without sockets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, get_args

import pytest
from openai.types.beta.realtime import RealtimeServerEvent as BetaServerEvent
from openai.types.realtime import RealtimeServerEvent
from pydantic import BaseModel

from agent.core.events import (
    AudioEnd,
    AudioStart,
    ErrorNotice,
    InputCommitted,
    MessageDeleted,
    PlaybackClear,
    ReplyText,
    SpeechStarted,
    SpeechStopped,
    ToolCalled,
    ToolOutputAdded,
    TranscriptText,
    TurnMetrics,
)
from agent.ports import ToolCall
from agent.runtime.call.wire import Reconfigure
from agent.wires.realtime.codec import RealtimeError
from agent.wires.realtime.events import SessionView
from agent.wires.realtime.wire import RealtimeWire


def _by_type(union: object) -> dict[str, type[BaseModel]]:
    members = get_args(get_args(union)[0])  # Annotated[Union[...], PropertyInfo(discriminator="type")]
    return {get_args(model.model_fields["type"].annotation)[0]: model for model in members}


GA_MODELS = _by_type(RealtimeServerEvent)
BETA_MODELS = _by_type(BetaServerEvent)
KNOWN_EXTRAS = frozenset({"session.id", "session.object"})
"""Fields OpenAI's GA sessions carry that ``RealtimeSessionCreateRequest`` does not declare."""

"""Every server event type this server sends a GA client (docs/realtime.md)."""


def conforming(event: dict[str, Any], *, beta: bool = False) -> BaseModel:
    """``event`` parsed by the official model of its type; fails the test where it does not conform."""
    models = BETA_MODELS if beta else GA_MODELS
    model = models.get(event["type"])
    assert model is not None, f"{event['type']!r} is not a server event of the {'beta' if beta else 'GA'} API"
    parsed = model.model_validate(event, strict=True)
    unknown = [path for path in _extras(parsed, "") if path not in KNOWN_EXTRAS]
    assert not unknown, f"{event['type']}: fields the model does not know: {unknown}"
    return parsed


def _extras(value: object, path: str) -> Iterator[str]:
    if isinstance(value, BaseModel):
        for key in value.model_extra or {}:
            yield f"{path}{key}"
        for name in type(value).model_fields:
            yield from _extras(getattr(value, name), f"{path}{name}.")
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _extras(item, f"{path.rstrip('.')}[].")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _extras(item, f"{path}{key}.")


def wire(beta: bool = False) -> RealtimeWire:
    # The model is the one the client named in the URL, echoed (the beta session model takes only OpenAI's names).
    view = SessionView(id="sess_1", model="gpt-4o-realtime-preview", voice="local-preview", instructions="sys")
    return RealtimeWire(view, 40, beta=beta)


def sent(payloads: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(p) for p in payloads if isinstance(p, str)]


def metrics(turn: int, interrupted: bool = False) -> TurnMetrics:
    return TurnMetrics(turn, None, None, None, None, None, None, 0, 0, interrupted)


def update(w: RealtimeWire, session: dict[str, Any]) -> Reconfigure:
    change = w.decode(json.dumps({"type": "session.update", "session": session}))
    assert isinstance(change, Reconfigure)
    return change


# ---------------------------------------------------------------------------------------- every event


def test_the_checker_refuses_what_the_official_models_do_not_take() -> None:
    transcript = {
        "type": "conversation.item.input_audio_transcription.completed",
        "event_id": "e",
        "item_id": "i",
        "content_index": 0,
        "transcript": "x",
    }
    with pytest.raises(ValueError, match="usage"):
        conforming(transcript)
    with pytest.raises(AssertionError, match="bogus"):
        conforming({**transcript, "usage": {"type": "duration", "seconds": 1.0}, "bogus": 1})
    with pytest.raises(AssertionError, match="not a server event"):
        conforming({"type": "conversation.item.done", "event_id": "e", "item": {}}, beta=True)


# ---------------------------------------------------------------------------------------- issue 21


def test_the_session_echoes_its_transcription_with_the_language() -> None:
    w = wire()
    created = sent(w.opening("sess_1", "v"))[0]["session"]
    assert created["audio"]["input"]["transcription"] == {"model": "whisper-1", "language": None}
    change = update(
        w, {"audio": {"input": {"transcription": {"model": "gpt-4o-mini-transcribe", "language": "de-DE"}}}}
    )
    assert (change.language_set, change.language) == (True, "de")
    updated = sent(change.applied("v"))[0]["session"]
    assert updated["audio"]["input"]["transcription"] == {"model": "gpt-4o-mini-transcribe", "language": "de"}
    # Another update that does not name the language keeps it; "auto" (or null) detects it again.
    change = update(w, {"instructions": "Kurz."})
    assert not change.language_set
    assert sent(change.applied("v"))[0]["session"]["audio"]["input"]["transcription"]["language"] == "de"
    change = update(w, {"audio": {"input": {"transcription": {"model": "whisper-1", "language": "auto"}}}})
    assert (change.language_set, change.language) == (True, None)
    assert sent(change.applied("v"))[0]["session"]["audio"]["input"]["transcription"]["language"] is None


def test_the_beta_shape_sets_and_echoes_the_language_too() -> None:
    w = wire(beta=True)
    change = update(w, {"input_audio_transcription": {"model": "whisper-1", "language": "fr"}})
    assert (change.language_set, change.language) == (True, "fr")
    assert sent(change.applied("v"))[0]["session"]["input_audio_transcription"] == {
        "model": "whisper-1",
        "language": "fr",
    }


@pytest.mark.parametrize(
    ("session", "language_set", "language"),
    [
        ({"audio": {"input": {"transcription": {"model": "whisper-1"}}}}, False, None),  # transcripts on: no change
        ({"audio": {"input": {"transcription": None}}}, False, None),
        ({"input_audio_transcription": None}, False, None),
        ({"audio": {"input": {"transcription": {"language": None}}}}, True, None),
        ({"audio": {"input": {"transcription": {"language": ""}}}}, True, None),
        ({"audio": {"input": {"transcription": {"language": "ES"}}}}, True, "es"),
        ({"input_audio_transcription": {"language": "pt_BR", "prompt": "Olá"}}, True, "pt"),
        # The GA object wins over the beta one, as for turn detection.
        (
            {
                "audio": {"input": {"transcription": {"language": "ja"}}},
                "input_audio_transcription": {"language": "ko"},
            },
            True,
            "ja",
        ),
    ],
)
def test_the_language_is_parsed(session: dict[str, Any], language_set: bool, language: str | None) -> None:
    change = update(wire(), session)
    assert (change.language_set, change.language) == (language_set, language)


@pytest.mark.parametrize(
    ("session", "param"),
    [
        ({"audio": {"input": {"transcription": {"language": "xx"}}}}, "session.audio.input.transcription.language"),
        ({"audio": {"input": {"transcription": {"language": 7}}}}, "session.audio.input.transcription.language"),
        ({"audio": {"input": {"transcription": "de"}}}, "session.audio.input.transcription"),
        ({"input_audio_transcription": {"language": "klingon"}}, "session.input_audio_transcription.language"),
        ({"input_audio_transcription": {"model": 3}}, "session.input_audio_transcription.model"),
    ],
)
def test_an_unsupported_language_is_refused_with_the_parameter(session: dict[str, Any], param: str) -> None:
    w = wire()
    with pytest.raises(RealtimeError) as info:
        w.decode(json.dumps({"type": "session.update", "event_id": "evt_7", "session": session}))
    error = sent(w.encode(ErrorNotice(info.value.code, info.value.message)))[0]
    conforming(error)
    assert error["error"]["type"] == "invalid_request_error"
    assert (error["error"]["code"], error["error"]["param"], error["error"]["event_id"]) == (
        "invalid_value",
        param,
        "evt_7",
    )
    assert w.view.language is None  # nothing changed


def test_a_transcript_carries_its_audio_duration_and_language() -> None:
    w = wire()
    w.encode(SpeechStarted(1000))
    w.encode(SpeechStopped(1, 2500))
    done = sent(w.encode(TranscriptText(1, "Bonjour.", language="fr")))[0]
    assert (done["usage"], done["languages"]) == ({"type": "duration", "seconds": 1.5}, [{"code": "fr"}])
    # Committed audio counts as committed; a transcript that goes on with an earlier turn counts both.
    w.decode(json.dumps({"type": "input_audio_buffer.commit"}))
    w.encode(InputCommitted(2, 800))
    assert sent(w.encode(TranscriptText(2, "Oui.", language="en")))[0]["usage"]["seconds"] == 0.8
    w.encode(SpeechStarted(9000))
    w.encode(SpeechStopped(3, 9700))
    continued = sent(w.encode(TranscriptText(3, "Oui, et puis?", continues=2, language="fr")))[0]
    assert continued["usage"]["seconds"] == 1.5
    beta = wire(beta=True)
    beta.encode(SpeechStarted(0))
    beta.encode(SpeechStopped(1, 600))
    done = sent(beta.encode(TranscriptText(1, "Hi.", language="en")))[0]
    assert done["usage"] == {"type": "duration", "seconds": 0.6} and "languages" not in done  # no such beta field
    conforming(done, beta=True)


def _going(w: RealtimeWire, turn: int) -> str:
    """Turn ``turn``'s response is going; returns its item id."""
    added = sent(w.encode(ReplyText(turn, "Once upon", done=False)))
    w.encode(AudioStart(turn, 24000))
    item_id: str = next(e for e in added if e["type"] == "response.output_item.added")["item"]["id"]
    return item_id


def _reason(payloads: list[Any]) -> str:
    done = sent(payloads)[-1]
    assert done["type"] == "response.done" and done["response"]["status"] == "cancelled", done
    reason: str = done["response"]["status_details"]["reason"]
    return reason


def test_a_cancel_is_the_clients_on_the_playback_clear_path_too() -> None:
    w = wire()
    w.decode(json.dumps({"type": "session.update", "session": {"turn_detection": None}}))
    w.decode(json.dumps({"type": "response.create"}))
    _going(w, 1)
    w.decode(json.dumps({"type": "response.cancel"}))
    assert _reason(w.encode(PlaybackClear(1))) == "client_cancelled"
    assert w.encode(metrics(1, interrupted=True)) == []  # done once only
    # The caller's speech over the next response is turn_detected, whatever the client did before.
    _going(w, 2)
    assert _reason(w.encode(PlaybackClear(2))) == "turn_detected"


def test_a_truncate_that_stops_a_response_is_the_clients() -> None:
    w = wire()
    item = _going(w, 1)
    w.decode(json.dumps({"type": "conversation.item.truncate", "item_id": item, "audio_end_ms": 100}))
    assert _reason(w.encode(metrics(1, interrupted=True))) == "client_cancelled"


def test_a_refused_truncate_does_not_mark_the_next_barge_in_as_the_clients() -> None:
    w = wire()
    item = _going(w, 1)
    w.decode(json.dumps({"type": "conversation.item.truncate", "item_id": item, "audio_end_ms": 99999}))
    w.encode(ErrorNotice("invalid_value", "audio_end_ms is beyond the audio of that reply"))
    assert _reason(w.encode(PlaybackClear(1))) == "turn_detected"


def test_a_barge_in_after_a_cancel_that_stopped_nothing_is_turn_detected() -> None:
    w = wire()
    _going(w, 1)
    w.decode(json.dumps({"type": "response.cancel"}))  # accepted; the core answers with the clear at once...
    w.decode(json.dumps({"type": "input_audio_buffer.append", "audio": "AAAAAA=="}))  # ...so the next event is new
    assert _reason(w.encode(PlaybackClear(1))) == "turn_detected"


def test_a_response_cut_short_by_a_failure_has_failed_with_the_error() -> None:
    w = wire()
    _going(w, 1)
    w.encode(ErrorNotice("tts_timeout", "speech did not start in time", turn=1))
    done = sent(w.encode(metrics(1, interrupted=True)))[-1]
    conforming(done)
    assert done["response"]["status"] == "failed"
    assert done["response"]["status_details"] == {
        "type": "failed",
        "error": {"type": "invalid_request_error", "code": "tts_timeout", "message": "speech did not start in time"},
    }
    # A failure the turn recovers from (the reply goes on, or an apology is spoken) leaves it completed.
    _going(w, 2)
    w.encode(ErrorNotice("llm_failed", "the language model failed", turn=2))
    w.encode(ReplyText(2, "Once upon", done=True))
    assert sent(w.encode(AudioEnd(2)))[-1]["response"]["status"] == "completed"


# ---------------------------------------------------------------------------------------- issue 30

FUNCTION_CALLING = frozenset(
    {
        "session.updated",
        "response.created",
        "response.output_item.added",
        "conversation.item.added",
        "response.content_part.added",
        "response.output_audio_transcript.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.output_audio_transcript.done",
        "response.content_part.done",
        "response.done",
        "conversation.item.deleted",
        "error",
    }
)
"""The GA events of function calling: the session's tools, a reply that speaks and calls, the client's output."""

_BETA = {
    "conversation.item.added": "conversation.item.created",
    "response.output_audio_transcript.delta": "response.audio_transcript.delta",
    "response.output_audio_transcript.done": "response.audio_transcript.done",
}


@pytest.mark.parametrize("beta", [False, True], ids=["ga", "beta"])
def test_every_function_calling_event_conforms_to_the_official_models(beta: bool) -> None:
    w = wire(beta)
    tool = {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    choice = {"type": "function", "name": "get_weather"}
    out = sent(update(w, {"tools": [tool], "tool_choice": choice}).applied("local-preview"))
    out += sent(w.encode(ReplyText(1, "Let me see.", done=False)))
    out += sent(w.encode(ToolCalled(1, ToolCall("call_1", "get_weather", '{"city": "Paris"}'))))
    out += sent(w.encode(ToolCalled(1, ToolCall("call_2", "get_weather", '{"city": "Rome"}'))))
    out += sent(w.encode(ReplyText(1, "Let me see.", done=True)))
    out += sent(w.encode(metrics(1)))
    for call_id in ("call_1", "call_2"):
        item = {"type": "function_call_output", "call_id": call_id, "output": '{"sky": "sunny"}'}
        w.decode(json.dumps({"type": "conversation.item.create", "item": item}))
        out += sent(w.encode(ToolOutputAdded(1, call_id, '{"sky": "sunny"}')))
    w.decode(json.dumps({"type": "response.create", "response": {"tools": [tool], "tool_choice": choice}}))
    out += sent(w.encode(ToolCalled(2, ToolCall("call_3", "get_weather", "{}"))))
    out += sent(w.encode(metrics(2)))
    out += sent(w.encode(MessageDeleted(1, "assistant")))
    w.decode(json.dumps({"type": "conversation.item.create", "item": {**item, "call_id": "call_0"}}))
    out += sent(w.encode(ErrorNotice("unknown_call", "no such call")))
    expected = (
        {_BETA.get(kind, kind) for kind in FUNCTION_CALLING - {"conversation.item.done"}} if beta else FUNCTION_CALLING
    )
    assert {e["type"] for e in out} == expected
    for event in out:
        conforming(event, beta=beta)
