"""Drain in the session core (``Drain(deadline)``): the turn in progress is heard to its end (or cut at the
deadline), then the goodbye phrase, then close 1001; no new turn starts. Synchronous, simulated clock."""

from __future__ import annotations

from agent.core.events import (
    SHUTTING_DOWN,
    CancelTranscriptOrScore,
    CancelTurn,
    CloseSession,
    Drain,
    Effect,
    GenerateReply,
    PlaybackClear,
    ReplyDelta,
    ReplyEnded,
    SessionEnded,
    SpeechAudio,
    SpeechEnded,
    Synthesize,
    Tick,
    TranscriptReady,
    TurnMetrics,
)
from agent.core.policies import Phrases
from tests.session_driver import AUDIO_100MS, Driver, answered_turn, of, requests, utter

GOODBYE = "Sorry, I have to end the call now. Goodbye."
CLOSE = CloseSession(1001, SHUTTING_DOWN)


def driver(goodbye: str = GOODBYE) -> Driver:
    return Driver(phrases=Phrases(goodbye=goodbye))


def goodbye_of(effects: list[Effect]) -> Synthesize:
    (said,) = [e for e in effects if isinstance(e, Synthesize) and e.phrase == "goodbye"]
    assert said.text == GOODBYE
    return said


def hear(d: Driver, turn: int, tenths: int = 10) -> list[Effect]:
    """``tenths`` × 100 ms of the turn's audio, its end, then a tick once all of it has played."""
    for _ in range(tenths):
        d.at(0.001, SpeechAudio(turn, AUDIO_100MS, -1))
    d.at(0.001, SpeechEnded(turn))
    return d.at(tenths / 10 + 0.5, Tick())


def test_a_reply_playing_is_heard_to_its_end_then_the_goodbye_then_close_1001() -> None:
    d = driver()
    turn = answered_turn(d)  # 2 s of reply audio sent, still playing
    assert d.at(0.1, Drain(deadline=d.now + 30)) == []
    assert not of(d.at(1.0, Tick()), CancelTurn)  # still playing: nothing is cut
    effects = d.at(1.5, Tick())
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.turn == turn and not metrics.interrupted
    said = goodbye_of(effects)
    assert said.turn == turn + 1
    assert d.session.history.snapshot()[-1].text == "Hello there my friend. How are you today?"
    assert not of(effects, CloseSession)
    effects = hear(d, said.turn)
    assert of(effects, TurnMetrics) and effects[-1] == CLOSE
    assert SessionEnded(SHUTTING_DOWN) in of(effects, SessionEnded)
    assert d.at(1.0, Tick()) == []  # closed


def test_an_idle_session_says_goodbye_at_once_and_closes_once_it_is_heard() -> None:
    d = driver()
    d.at(0.0, Tick())
    said = goodbye_of(d.at(1.0, Drain(deadline=d.now + 30)))
    assert not of(d.at(0.2, Tick()), CloseSession)
    assert hear(d, said.turn, 5)[-1] == CLOSE


def test_without_a_goodbye_text_the_session_closes_when_the_reply_has_been_heard() -> None:
    d = driver(goodbye="")
    answered_turn(d)
    assert not of(d.at(0.1, Drain(deadline=d.now + 30)), CloseSession)
    effects = d.at(2.5, Tick())
    assert of(effects, TurnMetrics) and effects[-1] == CLOSE


def test_a_reply_still_being_written_is_finished_and_spoken_before_the_goodbye() -> None:
    d = driver()
    (req,) = requests(utter(d))
    d.at(0.1, TranscriptReady(req, "tell me something", language="en"))
    turn = d.session.active_turn
    assert turn is not None
    d.at(0.1, Drain(deadline=d.now + 30))
    effects = d.at(0.1, ReplyDelta(turn, "Here is the whole answer.")) + d.at(0.01, ReplyEnded(turn))
    assert [s.text for s in of(effects, Synthesize)] == ["Here is the whole answer."]
    effects = hear(d, turn)
    assert not of(effects, TurnMetrics)[0].interrupted
    goodbye_of(effects)


def test_an_utterance_waiting_for_its_transcript_is_still_answered() -> None:
    d = driver()
    (req,) = requests(utter(d))
    assert not of(d.at(0.05, Drain(deadline=d.now + 30)), Synthesize)  # no goodbye over a pending turn
    effects = d.at(0.1, TranscriptReady(req, "hello", language="en"))
    assert of(effects, GenerateReply)


def test_the_deadline_cuts_the_reply_and_the_goodbye_follows_at_once() -> None:
    d = driver()
    turn = answered_turn(d)
    d.at(0.1, Drain(deadline=d.now + 0.5))
    effects = d.at(0.6, Tick())
    assert CancelTurn(turn) in effects
    assert PlaybackClear(turn) in of(effects, PlaybackClear)
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.interrupted and metrics.heard_ms is not None and metrics.heard_ms < 2000
    said = goodbye_of(effects)
    assert not of(d.at(5.0, Tick()), CancelTurn)  # the goodbye itself is never cut
    assert hear(d, said.turn, 3)[-1] == CLOSE


def test_no_new_turn_starts_while_draining_and_a_caller_talking_over_the_reply_gets_the_goodbye() -> None:
    d = driver()
    turn = answered_turn(d)
    d.at(0.1, Drain(deadline=d.now + 30))
    effects = utter(d, voiced=40, silent=30)  # long enough to barge in, then the end of it
    assert CancelTurn(turn) in effects
    assert not of(effects, GenerateReply)
    asked = requests(effects)
    assert asked and CancelTranscriptOrScore(asked[-1]) in effects  # its transcript is not wanted
    said = goodbye_of(effects + d.at(0.1, Tick()))
    assert said.turn == turn + 1
