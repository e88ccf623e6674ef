"""The session core's answers to a client that edits the conversation (the Realtime path), on a simulated clock;
and, at the end, the requests the protocol v1 clients (``python -m clients.cli``, ``--mic``) build: the call's
``language`` in ``session.start``, and the language each transcript came back in."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from agent.core.events import (
    AddMessage,
    CancelResponse,
    CancelTranscriptOrScore,
    CancelTurn,
    ClearInput,
    CommitInput,
    CreateResponse,
    DeleteMessage,
    ErrorNotice,
    GenerateReply,
    InputCleared,
    InputCommitted,
    MessageAdded,
    MessageDeleted,
    ReplyDelta,
    ReplyEnded,
    ReplyTruncated,
    SpeechAudio,
    SpeechEnded,
    SpeechStopped,
    TranscriptReady,
    TranscriptText,
    TruncateReply,
    TurnMetrics,
)
from agent.core.history import Dialogue
from agent.ports import ChatMessage
from clients.mic import on_server_message
from clients.playback import CAPABILITIES, PlaybackBuffer
from clients.protocol_client import session_start
from tests.session_driver import AUDIO_100MS, Driver, answered_turn, of, requests, utter


def asked(effects: Sequence[object]) -> list[GenerateReply]:
    return [e for e in effects if isinstance(e, GenerateReply)]


def errors(effects: Sequence[object]) -> list[str]:
    return [e.code for e in of(effects, ErrorNotice)]  # type: ignore[arg-type]


def manual(d: Driver) -> Driver:
    """Turn detection off: the client commits and asks for the responses."""
    d.session.reconfigure(replace(d.session.config, detect_turns=False, respond=False))
    return d


def speak_reply(d: Driver, turn: int, text: str = "One. Two.", chunks: int = 20) -> None:
    d.at(0.01, ReplyDelta(turn, text))
    d.at(0.01, ReplyEnded(turn))
    for i in range(chunks):
        d.at(0.001, SpeechAudio(turn, AUDIO_100MS, 0 if i < chunks // 2 else 1))
    d.at(0.001, SpeechEnded(turn))


def test_a_commit_without_turn_detection_makes_the_buffer_a_turn_that_is_not_answered_until_asked() -> None:
    d = manual(Driver())
    assert not of(d.audio("S" * 30 + "." * 30), SpeechStopped)  # no detector decides anything
    assert errors(d.at(0.0, ClearInput())) == [] and of(d.at(0.0, ClearInput()), InputCleared)
    assert errors(d.at(0.0, CommitInput())) == ["input_audio_buffer_commit_empty"]
    d.audio("S" * 20)
    effects = d.at(0.0, CommitInput())
    (committed,) = of(effects, InputCommitted)
    assert committed.audio_ms == 400
    (request,) = requests(effects)
    effects = d.at(0.1, TranscriptReady(request, "What time is it?", language="en"))
    assert of(effects, TranscriptText)[0].turn == committed.turn
    assert not asked(effects), "answered although the client did not ask"
    (reply,) = asked(d.at(0.0, CreateResponse()))
    assert reply.history[-1] == ChatMessage("user", "What time is it?")


def test_a_commit_with_turn_detection_ends_the_utterance_in_progress_at_once() -> None:
    d = Driver()  # the end of turn would wait 400 ms or more
    d.audio("S" * 20)
    effects = d.at(0.0, CommitInput())
    assert of(effects, SpeechStopped) and requests(effects), effects
    assert errors(d.at(0.0, CommitInput())) == ["input_audio_buffer_commit_empty"]


def test_a_commit_of_a_sound_too_short_to_be_speech_is_refused_even_with_a_look_at_it_under_way() -> None:
    d = Driver(speculative_ms=20)
    assert requests(d.audio("SS" + "."))  # 40 ms of voice (the turn's minimum is 60), then a look at the pause
    effects = d.at(0.0, CommitInput())
    assert of(effects, CancelTranscriptOrScore) and errors(effects) == ["input_audio_buffer_commit_empty"]


def test_create_response_uses_its_own_instructions_and_is_refused_while_one_is_being_prepared() -> None:
    d = Driver()
    assert of(d.at(0.0, AddMessage("user", "Hi there")), MessageAdded)
    (reply,) = asked(d.at(0.0, CreateResponse("Answer in French.")))
    assert reply.history == (ChatMessage("system", "Answer in French."), ChatMessage("user", "Hi there"))
    assert errors(d.at(0.0, CreateResponse())) == ["conversation_already_has_active_response"]
    speak_reply(d, reply.turn)  # all of it sent: the client may be playing it, a new response may be asked for
    d.at(0.0, AddMessage("user", "And you?"))
    (again,) = asked(d.at(0.0, CreateResponse()))
    assert again.history == (
        ChatMessage("system", "sys"),
        ChatMessage("user", "Hi there"),
        ChatMessage("assistant", "One. Two."),
        ChatMessage("user", "And you?"),
    )


def test_cancel_stops_the_response_and_keeps_what_was_heard() -> None:
    d = Driver()
    assert errors(d.at(0.0, CancelResponse())) == ["response_cancel_not_active"]
    d.at(0.0, AddMessage("user", "Tell me a story."))
    (reply,) = asked(d.at(0.0, CreateResponse()))
    effects = d.at(0.0, CancelResponse())
    assert CancelTurn(reply.turn) in effects and of(effects, TurnMetrics)[0].interrupted


def test_truncate_cuts_a_reply_still_playing_and_one_already_over_to_what_was_played() -> None:
    d = Driver()
    turn = answered_turn(d)  # two sentences of 1 s each, sent, still playing
    effects = d.at(0.2, TruncateReply(turn, 1500))
    assert CancelTurn(turn) in effects and of(effects, ReplyTruncated) == [ReplyTruncated(turn, 1500)]
    assert d.session.active_turn is None
    history = d.session.history.snapshot()
    assert history[-1] == ChatMessage("assistant", "Hello there my friend. How are…"), history
    # Played further than that after all (the client reports again): the history follows.
    d.at(0.0, TruncateReply(turn, 2000))
    assert d.session.history.snapshot()[-1].text == "Hello there my friend. How are you today?"
    assert errors(d.at(0.0, TruncateReply(turn, 9000))) == ["invalid_value"]
    assert errors(d.at(0.0, TruncateReply(turn + 5, 10))) == ["invalid_value"]


def test_delete_removes_a_message_from_what_the_model_is_told() -> None:
    d = Driver()
    added = of(d.at(0.0, AddMessage("user", "My PIN is 1234.")), MessageAdded)[0]
    d.at(0.0, AddMessage("user", "What is the weather?"))
    assert of(d.at(0.0, DeleteMessage(added.turn, "user")), MessageDeleted)
    (reply,) = asked(d.at(0.0, CreateResponse()))
    assert all("PIN" not in m.text for m in reply.history), reply.history


def test_create_response_off_means_an_utterance_joins_the_conversation_unanswered() -> None:
    d = Driver()
    d.session.reconfigure(replace(d.session.config, respond=False))
    (request,) = requests(utter(d))
    effects = d.at(0.1, TranscriptReady(request, "Hello.", language="en"))
    assert of(effects, TranscriptText) and not asked(effects)
    assert of(d.at(0.0, CreateResponse()), GenerateReply)


def test_a_pending_commit_keeps_its_turn_number_when_a_message_is_added_meanwhile() -> None:
    d = manual(Driver())
    d.audio("S" * 20)
    effects = d.at(0.0, CommitInput())
    turn, request = of(effects, InputCommitted)[0].turn, requests(effects)[0]
    d.at(0.0, AddMessage("user", "(typed meanwhile)"))
    assert of(d.at(0.1, TranscriptReady(request, "Spoken.", language="en")), TranscriptText)[0].turn == turn
    (reply,) = asked(d.at(0.0, CreateResponse()))
    assert [m.text for m in reply.history[1:]] == ["Spoken.", "(typed meanwhile)"]


def test_the_dialogue_keeps_turn_order_and_edits_by_turn() -> None:
    dialogue = Dialogue("sys")
    dialogue.add("user", "one", 1)
    dialogue.add("user", "two", 3)
    dialogue.add("assistant", "reply to one", 2)  # a reply that ended after turn 3 began
    assert [m.text for m in dialogue.snapshot()] == ["sys", "one", "reply to one", "two"]
    dialogue.replace(2, "assistant", "reply…")
    assert dialogue.remove(1, "user") and not dialogue.remove(1, "user")
    assert [m.text for m in dialogue.snapshot("other")] == ["other", "reply…", "two"]


# --- the protocol v1 clients' requests: the call's language ---------------------------------------------------


def test_session_start_carries_the_language_only_when_one_was_given() -> None:
    assert session_start(16000) == {"type": "session.start", "sample_rate": 16000, "voice": None}
    assert session_start(16000, voice="joe", output_sample_rate=24000, capabilities=CAPABILITIES, language="de") == {
        "type": "session.start", "sample_rate": 16000, "voice": "joe", "output_sample_rate": 24000,
        "capabilities": ["playback.pause"], "language": "de",
    }  # fmt: skip
    assert session_start(8000, language="auto")["language"] == "auto"


def test_the_microphone_client_prints_the_language_of_what_it_heard() -> None:
    buffer = PlaybackBuffer(24000)
    heard = {"type": "transcript", "turn": 1, "text": "Bonjour"}
    assert on_server_message(buffer, json.dumps(heard | {"language": "fr"})) == "you [fr]: Bonjour"
    assert on_server_message(buffer, json.dumps(heard)) == "you: Bonjour"
