"""A caller who talks on past the longest utterance keeps the floor: their words are transcribed in pieces while they
talk, and answered once, all of them, after they stop (``agent.core.pieces``). Synchronous, on the session core.

Before, the words were cut into a turn at the longest utterance and answered at once: the reply was ready while the
caller was still talking, started in their next breath, and answered only the first part of what they said.
"""

from __future__ import annotations

from agent.core.events import (
    CancelTranscriptOrScore,
    CancelTurn,
    CommitInput,
    Effect,
    ErrorNotice,
    GenerateReply,
    HoldSpeech,
    PlaybackMark,
    PreemptionOutcome,
    SpeechStopped,
    Tick,
    Transcribe,
    TranscriptFailed,
    TranscriptReady,
    TranscriptText,
)
from agent.core.policies import Deadlines
from tests.session_driver import Driver, of, reply_to, say

TALK = "S" * 110  # 2.2 s without a pause: with a 1 s longest utterance, two pieces and the rest


def _asked(effects: list[Effect]) -> list[Transcribe]:
    return [e for e in effects if isinstance(e, Transcribe)]


def _user_words(ask: GenerateReply) -> str:
    return ask.history[-1].text


def test_one_turn_for_all_the_words_after_the_caller_stops() -> None:
    d = Driver(max_utterance_ms=1000)
    effects = say(d, TALK)
    pieces = _asked(effects)
    assert len(pieces) == 2 and all(p.purpose == "final" for p in pieces)  # never skipped
    assert not of(effects, SpeechStopped) and not of(effects, GenerateReply)  # the caller still has the floor
    words = ("My", "order")
    answered = [d.at(0.05, TranscriptReady(p.request, w, language="en")) for p, w in zip(pieces, words, strict=True)]
    assert not [e for step in answered for e in step]  # nothing to say yet: the caller is talking
    effects = say(d, "S" * 5 + "." * 45)
    (rest,) = _asked(effects)
    assert of(effects, SpeechStopped)
    assert sum(len(p.pcm) for p in pieces) + len(rest.pcm) >= 115 * 640  # every frame said, in one of them
    effects = d.at(0.05, TranscriptReady(rest.request, "never came.", language="en"))
    (text,) = of(effects, TranscriptText)
    assert text.text == "My order never came." and text.continues is None
    (ask,) = of(effects, GenerateReply)
    assert _user_words(ask) == "My order never came."


def test_the_turn_waits_for_a_piece_still_being_transcribed_and_keeps_the_words_in_order() -> None:
    d = Driver(max_utterance_ms=1000)
    first, second = _asked(say(d, TALK))
    (rest,) = _asked(say(d, "S" * 5 + "." * 45))
    assert not of(d.at(0.05, TranscriptReady(rest.request, "never came.", language="en")), GenerateReply)
    assert not of(d.at(0.05, TranscriptReady(second.request, "order", language="en")), GenerateReply)
    (ask,) = of(d.at(0.05, TranscriptReady(first.request, "My", language="en")), GenerateReply)
    assert _user_words(ask) == "My order never came."


def test_a_long_turn_whose_words_come_back_after_the_caller_went_on_waits_while_they_talk() -> None:
    d = Driver(max_utterance_ms=1000)
    first, second = _asked(say(d, TALK))
    (rest,) = _asked(say(d, "S" * 5 + "." * 45))
    d.at(0.05, TranscriptReady(rest.request, "never came.", language="en"))
    d.at(0.05, TranscriptReady(second.request, "order", language="en"))
    say(d, "S" * 5)  # the caller speaks again before the first piece's words are back
    effects = d.at(0.05, TranscriptReady(first.request, "My", language="en"))
    turn = d.session.active_turn
    assert turn is not None and of(effects, GenerateReply) and HoldSpeech(turn) in effects  # nothing over them


def test_a_piece_whose_transcript_failed_or_is_overdue_is_left_out_and_the_turn_goes_on() -> None:
    d = Driver(max_utterance_ms=1000, deadlines=Deadlines(asr_s=5.0))
    first, second = _asked(say(d, TALK))
    d.at(0.05, TranscriptFailed(first.request, "transcription failed: boom"))
    (rest,) = _asked(say(d, "S" * 5 + "." * 45))
    assert not of(d.at(0.05, TranscriptReady(rest.request, "never came.", language="en")), GenerateReply)
    assert not of(d.at(2.0, Tick()), GenerateReply)
    effects = d.at(3.0, Tick())  # the second piece's transcript never came: 5 s after the end, the turn goes on
    assert CancelTranscriptOrScore(second.request) in effects
    (ask,) = of(effects, GenerateReply)
    assert _user_words(ask) == "never came."


def test_the_words_before_a_last_part_that_could_not_be_transcribed_are_answered() -> None:
    d = Driver(max_utterance_ms=1000)
    pieces = _asked(say(d, TALK))
    for piece, words in zip(pieces, ("My order", "never came"), strict=True):
        d.at(0.05, TranscriptReady(piece.request, words, language="en"))
    (rest,) = _asked(say(d, "S" * 5 + "." * 45))
    (ask,) = of(d.at(0.05, TranscriptFailed(rest.request, "transcription failed: boom")), GenerateReply)
    assert _user_words(ask) == "My order never came"  # not an apology for words that were understood


def test_a_reply_prepared_in_the_pause_answers_all_the_words() -> None:
    d = Driver(max_utterance_ms=1000, speculative_ms=100, preemption="llm")
    pieces = _asked(say(d, TALK))
    for piece, words in zip(pieces, ("My order", "from last week"), strict=True):
        d.at(0.05, TranscriptReady(piece.request, words, language="en"))
    (look,) = _asked(say(d, "S" * 5 + "." * 5))
    (ask,) = of(d.at(0.05, TranscriptReady(look.request, "never came.", language="en")), GenerateReply)
    assert _user_words(ask) == "My order from last week never came."
    effects = say(d, "." * 40)  # the caller stays silent: the turn ends as guessed, the prepared reply is the one
    assert [(o.turn, o.hit) for o in of(effects, PreemptionOutcome)] == [(ask.turn, True)]
    (text,) = of(effects, TranscriptText)
    assert text.text == "My order from last week never came." and not of(effects, GenerateReply)


def test_no_reply_is_prepared_in_the_pause_before_every_piece_is_transcribed() -> None:
    d = Driver(max_utterance_ms=1000, speculative_ms=100, preemption="llm")
    first, _second = _asked(say(d, TALK))
    d.at(0.05, TranscriptReady(first.request, "My order", language="en"))
    (look,) = _asked(say(d, "S" * 5 + "." * 5))
    assert not of(d.at(0.05, TranscriptReady(look.request, "never came.", language="en")), GenerateReply)


def test_the_caller_going_on_after_a_long_turn_continues_all_of_its_words() -> None:
    d = Driver(max_utterance_ms=1000, speculative_ms=100, pause=True, continue_within_ms=1000)
    pieces = _asked(say(d, TALK))
    for piece, words in zip(pieces, ("I need eggs,", "milk,"), strict=True):
        d.at(0.05, TranscriptReady(piece.request, words, language="en"))
    (look,) = _asked(say(d, "S" * 5 + "." * 5))
    d.at(0.05, TranscriptReady(look.request, "and bread.", language="en"))
    say(d, "." * 5)
    turn = reply_to(d, "Sure, eggs, milk and bread. Anything else?")
    d.at(0.01, PlaybackMark(turn, 200))
    say(d, "S" * 15)  # the caller goes on, soon after their words
    (look,) = _asked(say(d, "." * 5))
    assert CancelTurn(turn) in d.at(0.05, TranscriptReady(look.request, "and some butter.", language="en"))
    (whole,) = _asked(say(d, "."))  # the last part's audio and the new speech
    effects = d.at(0.05, TranscriptReady(whole.request, "and bread and some butter.", language="en"))
    effects += say(d, "." * 10)
    (text,) = of(effects, TranscriptText)
    assert text.text == "I need eggs, milk, and bread and some butter." and text.continues == turn


def test_a_commit_that_ends_a_long_turn_still_being_transcribed_is_no_empty_commit() -> None:
    d = Driver(max_utterance_ms=1000, speculative_ms=100)  # a Realtime client, server turn detection on
    first, second = _asked(say(d, TALK))
    (look,) = _asked(say(d, "S" * 5 + "." * 5))
    d.at(0.05, TranscriptReady(look.request, "never came.", language="en"))
    effects = d.at(0.0, CommitInput())
    assert not of(effects, ErrorNotice) and not of(effects, GenerateReply)  # the turn waits for its pieces
    d.at(0.05, TranscriptReady(first.request, "My", language="en"))
    effects = d.at(0.05, TranscriptReady(second.request, "order", language="en"))
    assert of(effects, SpeechStopped) and _user_words(of(effects, GenerateReply)[0]) == "My order never came."
