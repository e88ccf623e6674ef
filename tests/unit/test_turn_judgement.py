"""The end of turn judged from the words and the sound together (simulated clock, no threads, no models).

``EndpointPolicy.hangover_for(text, probability)`` is the rule; the session tests drive it as the server does:
20 ms frames, the speculative transcript and the acoustic score (``ScoreTurn`` → ``TurnScored``) answered at
chosen moments, and the prepared reply held until the turn is judged over.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from agent.core.endpointing import EndpointPolicy
from agent.core.events import (
    AudioChunk,
    CancelTranscriptOrScore,
    CancelTurn,
    GenerateReply,
    PreemptionOutcome,
    ReplyDelta,
    ReplyEnded,
    ResendSpeech,
    ScoreTurn,
    SpeechAudio,
    SpeechStopped,
    TranscriptReady,
    TurnScored,
)
from tests.session_driver import AUDIO_100MS, Driver, events, of, requests

POLICY = EndpointPolicy(
    hangover_min_ms=200,
    hangover_ms=420,
    hangover_max_ms=1500,
    fragment_words=3,
    fragment_numbers=True,
    fragment_ms=700,
    acoustic=True,
    sure=0.8,
    unsure=0.3,
    unsure_ms=1200,
)


@pytest.mark.parametrize(
    ("text", "probability", "hangover"),
    [
        ("Please cancel my order.", 0.95, 200),  # reads finished, sounds sure: the minimum
        ("What time is it?", 0.85, 200),
        ("Hi there.", 0.9, 200),  # a greeting is no fragment
        ("Where to?", 0.9, 200),  # nor is a short question
        ("I'd like to book a table for, um,", 0.99, 1500),  # the words trail off: the sound cannot overrule
        ("I need to go to", 0.9, 1500),
        ("Could you repeat that?", 0.9, 200),  # "that" ends a question here, not a clause
        ("Please cancel my order.", 0.1, 1200),  # reads finished, sounds unfinished: waits
        ("Please cancel my order.", 0.55, 700),  # in proportion between the two: 200 + 1000 x 0.5
        ("Hello world.", 0.95, 420),  # a fragment, however sure the sound: the default
        ("If it rains tomorrow.", 0.95, 420),  # a clause waiting for its main clause is a fragment too
        ("If it rains, we stay home.", 0.95, 200),
        ("It's four.", 0.1, 1500),  # a fragment that sounds unfinished waits longest
        ("It's four.", 0.55, 960),  # 420 + 1080 x 0.5
        ("Please cancel my order.", None, 200),  # no score: the text rules alone, as before
        ("Hello world.", None, 700),  # ... which charge a fragment
        (None, 0.99, 420),  # no words yet: the default
    ],
)
def test_the_hangover_combines_words_and_sound(text: str | None, probability: float | None, hangover: int) -> None:
    assert POLICY.hangover_for(text, probability, language="en") == hangover


def test_a_sure_fragment_may_end_at_the_minimum() -> None:
    eager = replace(POLICY, sure_fragments=True)
    assert eager.hangover_for("Hello world.", 0.95, language="en") == 200
    assert eager.hangover_for("Hello world.", 0.1, language="en") == 1500


def test_without_the_acoustic_model_the_text_rules_are_unchanged() -> None:
    text_only = replace(POLICY, acoustic=False)
    for text in ("Hello world.", "Please cancel my order.", "I need eggs, and", "Okay"):
        assert POLICY.hangover_for(text, None, language="en") == text_only.hangover_for(text, language="en")


# --- the session: 20 ms frames; "S" voiced, "." silent -----------------------------------------------------


def judged(**endpointing: Any) -> Driver:
    settings: dict[str, Any] = {"acoustic": True, "sure": 0.8, "unsure": 0.3, "fragment_words": 3}
    settings.update(endpointing)
    settings.setdefault("fragment_ms", 600)
    return Driver(speculative_ms=100, preemption="llm+tts", endpointing=settings)


def pause(d: Driver) -> tuple[int, int]:
    """The caller speaks 200 ms and falls silent for 100 ms: the transcript and the score are asked for."""
    effects = d.audio("S" * 10 + "." * 5)
    (spec,) = requests(effects)
    (score,) = of(effects, ScoreTurn)
    assert score.pcm  # the same snapshot as the transcript's
    return spec, score.request


def silence_until_stopped(d: Driver, limit_frames: int = 100) -> tuple[int, list[Any]]:
    """Frames of silence fed (after the first 100 ms) until the turn ends, and the effects of the last one."""
    for frame in range(1, limit_frames + 1):
        effects = d.audio(".")
        if of(effects, SpeechStopped):
            return frame, effects
    raise AssertionError(f"the turn did not end within {limit_frames} frames of silence")


def test_a_confident_complete_turn_answers_at_the_minimum() -> None:
    d = judged(sure_fragments=True)
    spec, score = pause(d)
    d.at(0.0, TranscriptReady(spec, "Hello world.", language="en"))  # a fragment by the word count alone (600 ms)
    d.at(0.0, TurnScored(score, 0.93))
    frames, _ = silence_until_stopped(d)
    assert 100 + 20 * frames == 200  # hangover_min_ms: from the last voiced frame


def test_an_unsure_turn_waits_longer_and_ends_if_the_caller_stays_silent() -> None:
    d = judged()
    spec, score = pause(d)
    d.at(0.0, TranscriptReady(spec, "The quick brown fox.", language="en"))
    d.at(0.0, TurnScored(score, 0.12))
    frames, _ = silence_until_stopped(d)
    assert 100 + 20 * frames == 600  # fragment_ms: the words read finished, the sound does not


def test_the_score_arriving_after_the_minimum_ends_a_sure_turn_at_once() -> None:
    d = judged(sure_fragments=True)
    spec, score = pause(d)
    d.at(0.0, TranscriptReady(spec, "Hello world.", language="en"))
    assert not of(d.audio("." * 10), SpeechStopped)  # 300 ms: the words alone call it a fragment (600 ms)
    assert of(d.at(0.0, TurnScored(score, 0.9)), SpeechStopped)


def test_no_score_falls_back_to_the_words() -> None:
    d = judged()
    spec, score = pause(d)
    d.at(0.0, TranscriptReady(spec, "Please cancel my order.", language="en"))
    d.at(0.0, TurnScored(score, None))  # the model was busy or failed
    frames, _ = silence_until_stopped(d)
    assert 100 + 20 * frames == 200


def test_prepared_audio_is_held_while_unsure_then_released() -> None:
    d = judged()
    spec, score = pause(d)
    effects = d.at(0.0, TranscriptReady(spec, "It's four.", language="en"))
    (gen,) = of(effects, GenerateReply)  # prepared during the silence ...
    d.at(0.0, TurnScored(score, 0.1))
    held = d.at(0.01, ReplyDelta(gen.turn, "Four it is."))
    held += d.at(0.01, ReplyEnded(gen.turn))
    held += d.at(0.01, SpeechAudio(gen.turn, AUDIO_100MS, 0))
    assert events(held) == []  # ... and nothing of it reaches the caller
    assert not of(d.audio("." * 20), SpeechStopped)  # 500 ms of silence: still unsure
    frames, effects = silence_until_stopped(d)
    assert 100 + 20 * (20 + frames) == 800  # hangover_max_ms: a fragment that sounds unfinished
    assert ResendSpeech(gen.turn, 0, keep=False) in effects  # released at the end of turn, from its start
    assert PreemptionOutcome(gen.turn, hit=True, synthesized_ms=100.0) in effects
    assert AudioChunk(gen.turn, AUDIO_100MS) in events(d.at(0.0, SpeechAudio(gen.turn, AUDIO_100MS, 0, 0)))


def test_prepared_audio_is_discarded_when_the_caller_goes_on_after_a_thinking_pause() -> None:
    d = judged()
    spec, score = pause(d)
    (gen,) = of(d.at(0.0, TranscriptReady(spec, "I'd like a table for, um,", language="en")), GenerateReply)
    d.at(0.0, TurnScored(score, 0.6))
    d.at(0.01, SpeechAudio(gen.turn, AUDIO_100MS, 0))
    assert not of(d.audio("." * 30), SpeechStopped)  # 700 ms of thinking: the words trail off (800 ms)
    effects = d.audio("SS")  # the caller goes on
    assert CancelTurn(gen.turn) in effects
    assert events(effects) == []  # nothing of the prepared reply was ever heard


def test_going_on_cancels_the_pending_score_and_asks_again_at_the_next_pause() -> None:
    d = judged()
    spec, score = pause(d)
    effects = d.audio("SSSSS.....")
    assert CancelTranscriptOrScore(score) in effects and CancelTranscriptOrScore(spec) in effects
    assert len(of(effects, ScoreTurn)) == 1
    assert d.at(0.0, TurnScored(score, 0.99)) == []  # a stale score is ignored


def test_no_score_is_asked_for_a_sound_over_the_agent() -> None:
    d = judged()
    spec, score = pause(d)
    d.at(0.0, TranscriptReady(spec, "Hello world.", language="en"))
    d.at(0.0, TurnScored(score, 0.95))
    silence_until_stopped(d)
    effects = d.audio("SSSS" + "." * 5)  # a short sound while the reply is being prepared
    assert of(effects, ScoreTurn) == []
