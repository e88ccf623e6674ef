"""The session core never wedges and speaks every failure: deadlines, apologies, hold phrase, greeting,
cancelled superseded transcriptions. Synchronous, simulated clock."""

from __future__ import annotations

from agent.core.events import (
    AudioEnd,
    CancelReply,
    CancelTranscriptOrScore,
    CancelTurn,
    ErrorNotice,
    FinishSynthesis,
    GenerateReply,
    PlaybackMark,
    ReplyDelta,
    ReplyEnded,
    ReplyText,
    SpeechAudio,
    SpeechEnded,
    StageFailed,
    Synthesize,
    Tick,
    TranscriptFailed,
    TranscriptReady,
    TurnMetrics,
)
from agent.core.policies import Deadlines, Phrases
from tests.session_driver import AUDIO_100MS, Driver, answered_turn, events, of, requests, utter

SORRY = "Sorry, something went wrong."
PHRASES = Phrases(apology=SORRY)
HOLD = Phrases(apology=SORRY, hold="One moment.", hold_after_ms=2000)


def apology(turn: int) -> Synthesize:
    return Synthesize(turn, SORRY, -1, phrase="apology", language="en")


def transcribed(d: Driver, text: str = "hello") -> int:
    (req,) = requests(utter(d))
    d.at(0.1, TranscriptReady(req, text, language="en"))
    turn = d.session.active_turn
    assert turn is not None
    return turn


# ------------------------------------------------------------------------------------ failures spoken


def test_asr_failure_is_reported_and_apologised_for() -> None:
    d = Driver(phrases=PHRASES)
    (req,) = requests(utter(d))
    effects = d.at(0.1, TranscriptFailed(req, "boom"))
    assert ErrorNotice("asr_failed", "boom", 1) in events(effects)
    assert ReplyText(1, SORRY, done=True) in events(effects)
    assert apology(1) in effects and effects[-1] == FinishSynthesis(1)
    assert not of(effects, TurnMetrics)  # the turn lasts until the apology was heard
    d.at(0.01, SpeechAudio(1, AUDIO_100MS, -1))
    d.at(0.01, SpeechEnded(1))
    (metrics,) = of(d.at(1.0, Tick()), TurnMetrics)
    assert not metrics.interrupted
    assert [m.role for m in d.session.history.snapshot()] == ["system"]  # nothing was understood or said


def test_unexpected_asr_error_keeps_its_generic_code() -> None:
    d = Driver(phrases=PHRASES)
    (req,) = requests(utter(d))
    effects = d.at(0.1, TranscriptFailed(req, "internal error", "internal_error"))
    assert ErrorNotice("internal_error", "internal error", 1) in events(effects)
    assert apology(1) in effects


def test_llm_failure_with_nothing_said_is_apologised_for() -> None:
    d = Driver(phrases=PHRASES)
    turn = transcribed(d)
    effects = d.at(0.01, StageFailed(turn, "llm", "internal_error", "internal error"))
    assert ErrorNotice("internal_error", "internal error", turn) in events(effects)
    assert apology(turn) in effects and FinishSynthesis(turn) in effects
    assert ReplyText(turn, SORRY, done=True) in events(effects)


def test_llm_failure_after_some_text_speaks_that_text_without_apology() -> None:
    d = Driver(phrases=PHRASES)
    turn = transcribed(d)
    d.at(0.01, ReplyDelta(turn, "Partial answer here"))
    effects = d.at(0.01, StageFailed(turn, "llm", "llm_failed", "stream broke"))
    assert Synthesize(turn, "Partial answer here", 0, language="en") in effects
    assert not [e for e in of(effects, Synthesize) if e.phrase == "apology"]


def test_without_an_apology_text_a_failed_transcript_ends_the_turn_at_once() -> None:
    d = Driver()
    (req,) = requests(utter(d))
    effects = d.at(0.1, TranscriptFailed(req, "boom"))
    assert not of(effects, Synthesize) and of(effects, TurnMetrics)


# ------------------------------------------------------------------------------------------- deadlines


def test_transcript_deadline_cancels_the_transcription_and_apologises() -> None:
    d = Driver(deadlines=Deadlines(asr_s=5.0), phrases=PHRASES)
    (req,) = requests(utter(d))
    assert not of(d.at(4.9, Tick()), ErrorNotice)
    effects = d.at(0.2, Tick())
    assert CancelTranscriptOrScore(req) in effects
    assert ErrorNotice("asr_timeout", "no transcript within 5 s", 1) in events(effects)
    assert apology(1) in effects
    assert d.at(0.1, TranscriptReady(req, "too late", language="en")) == []  # a late answer changes nothing


def test_first_text_deadline_stops_the_reply_and_apologises() -> None:
    d = Driver(deadlines=Deadlines(first_text_s=3.0), phrases=PHRASES)
    turn = transcribed(d)
    assert d.at(2.9, Tick()) == []
    effects = d.at(0.2, Tick())
    assert effects[0] == CancelReply(turn)
    assert ErrorNotice("llm_timeout", "no reply text within 3 s", turn) in events(effects)
    assert apology(turn) in effects and FinishSynthesis(turn) in effects
    assert d.at(0.1, ReplyDelta(turn, "Late words.")) == []


def test_first_audio_deadline_ends_the_turn_and_apologises_in_a_turn_of_its_own() -> None:
    d = Driver(deadlines=Deadlines(first_audio_s=4.0), phrases=PHRASES)
    turn = transcribed(d)
    d.at(0.01, ReplyDelta(turn, "Hello there my friend. "))
    d.at(0.01, ReplyEnded(turn))
    effects = d.at(4.1, Tick())
    assert CancelTurn(turn) in effects
    assert ErrorNotice("tts_timeout", "speech did not start in time", turn) in events(effects)
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.turn == turn
    assert apology(turn + 1) in effects and FinishSynthesis(turn + 1) in effects
    assert d.session.active_turn == turn + 1
    # the apology turn is stuck too: it ends, and nobody apologises for the apology
    effects = d.at(4.1, Tick())
    assert CancelTurn(turn + 1) in effects and of(effects, TurnMetrics)
    assert not of(effects, Synthesize) and d.session.active_turn is None


def test_reply_deadline_cuts_a_reply_that_stalls_half_way() -> None:
    d = Driver(deadlines=Deadlines(reply_s=10.0), phrases=PHRASES)
    turn = transcribed(d)
    d.at(0.01, ReplyDelta(turn, "Hello there my friend. How are you"))
    d.at(0.01, SpeechAudio(turn, AUDIO_100MS, 0))
    d.at(0.01, PlaybackMark(turn, 100))
    effects = d.at(10.0, Tick())
    assert CancelTurn(turn) in effects and AudioEnd(turn) in events(effects)
    assert ErrorNotice("reply_timeout", "the reply took too long", turn) in events(effects)
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.interrupted
    assert apology(turn + 1) in effects


def test_no_deadline_fires_while_a_slow_caller_hears_a_finished_reply() -> None:
    d = Driver(deadlines=Deadlines(asr_s=1.0, first_text_s=1.0, first_audio_s=1.0, reply_s=2.0), phrases=PHRASES)
    turn = transcribed(d)
    d.at(0.01, ReplyDelta(turn, "Hello."))
    d.at(0.01, ReplyEnded(turn))
    for _ in range(40):  # 4 s of reply audio, all synthesized at once
        d.at(0.001, SpeechAudio(turn, AUDIO_100MS, 0))
    d.at(0.001, SpeechEnded(turn))
    effects = d.at(3.0, Tick())  # still playing at the caller, past every deadline
    assert not of(effects, ErrorNotice) and d.session.active_turn == turn


# ------------------------------------------------------------------------------------------ hold phrase


def test_hold_phrase_when_the_reply_is_late_then_the_reply_follows() -> None:
    d = Driver(phrases=HOLD)  # hold 2 s after the caller stopped
    turn = transcribed(d)  # the caller stopped ~0.5 s ago
    assert d.at(1.3, Tick()) == []
    effects = d.at(0.3, Tick())
    assert effects == [Synthesize(turn, "One moment.", -2, phrase="hold", language="en")]
    assert d.at(1.0, Tick()) == []  # once per turn
    effects = d.at(0.1, ReplyDelta(turn, "Here it is. "))
    assert Synthesize(turn, "Here it is.", 0, language="en") in effects  # queued after the hold phrase


def test_no_hold_at_the_moment_a_slow_transcript_arrives_nor_once_the_reply_is_queued() -> None:
    d = Driver(phrases=HOLD)
    (req,) = requests(utter(d))
    effects = d.at(3.0, TranscriptReady(req, "hello", language="en"))  # 3 s late: the reply gets the first chance
    assert of(effects, GenerateReply) and not of(effects, Synthesize)
    turn = d.session.active_turn
    assert turn is not None
    d.at(0.01, ReplyDelta(turn, "Right away. "))
    assert d.at(0.5, Tick()) == []


def test_hold_audio_is_not_counted_as_heard_reply_text() -> None:
    d = Driver(phrases=HOLD)
    turn = transcribed(d)
    d.at(2.0, Tick())  # the hold phrase is queued
    for _ in range(10):  # 1 s of "one moment"
        d.at(0.001, SpeechAudio(turn, AUDIO_100MS, -2))
    d.at(0.01, ReplyDelta(turn, "Hello there my friend. "))
    for _ in range(10):  # 1 s of the reply's first sentence
        d.at(0.001, SpeechAudio(turn, AUDIO_100MS, 0))
    d.at(0.01, PlaybackMark(turn, 1000))  # the hold phrase was played; ~0.6 s of the sentence by the barge-in
    d.audio("S" * 32)  # barge-in
    assert d.session.history.snapshot()[-1].text == "Hello there…"


# ------------------------------------------------------------------------------------------ greeting


def test_greeting_is_a_turn_of_its_own_at_the_start() -> None:
    d = Driver(phrases=Phrases(greeting="Hi, how can I help?"))
    effects = d.session.open(d.now)
    assert effects == [
        effects[0],
        Synthesize(1, "Hi, how can I help?", 0, phrase="greeting", language="en"),
        FinishSynthesis(1),
    ]
    assert events(effects) == [ReplyText(1, "Hi, how can I help?", done=True)]
    assert Driver().session.open(0.0) == []  # off by default


# ------------------------------------------------------------------------------ superseded transcripts


def test_a_newer_speculation_cancels_the_one_it_supersedes() -> None:
    d = Driver(speculative_ms=100)
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    d.audio("SSSS")  # the caller goes on
    effects = d.audio("." * 5)
    (spec2,) = requests(effects)
    assert CancelTranscriptOrScore(spec) in effects and spec2 != spec


def test_the_quick_look_of_an_ended_utterance_is_cancelled() -> None:
    d = Driver()
    answered_turn(d)
    effects = d.audio("S" * 11 + "." * 20)  # a short utterance while the agent talks; it ends before the look
    probe, final = requests(effects)
    assert CancelTranscriptOrScore(probe) in effects and CancelTranscriptOrScore(final) not in effects


def test_a_pending_turn_replaced_by_a_newer_one_has_its_transcription_cancelled() -> None:
    d = Driver(barge_in=False)
    (req,) = requests(utter(d))
    effects = utter(d)  # a second utterance ends before the first one's transcript came back
    assert CancelTranscriptOrScore(req) in effects
