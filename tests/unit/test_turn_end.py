"""The end of turn is never judged blind: evidence on its way holds the pause (simulated clock, no threads).

The session is driven as the server drives it, 20 ms frames with the speculative transcript, the sound's score
(``ScoreTurn``) and the words' score (``ScoreWords``) answered at chosen moments, late ones included: on a busy
2-core server the transcript of a pause often arrives after the default hangover has passed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agent.config import Settings
from agent.config.policy_fields import build
from agent.core.endpointing import EndpointPolicy
from agent.core.events import (
    AudioFrame,
    GenerateReply,
    ReplyDelta,
    ReplyEnded,
    ScoreTurn,
    ScoreWords,
    SpeechAudio,
    SpeechEnded,
    SpeechStopped,
    Tick,
    TranscriptFailed,
    TranscriptReady,
    TurnMetrics,
    TurnScored,
)
from agent.core.turn_end import Evidence, hangover, reads_words
from tests.session_driver import AUDIO_100MS, FRAME, Driver, events, of, requests

# Driver: hangover_min 200, hangover (default) 400, hangover_max 800 ms; the pause is looked at after 100 ms.


def driver(**endpointing: Any) -> Driver:
    settings: dict[str, Any] = {"fragment_words": 3, "fragment_ms": 600}
    settings.update(endpointing)
    return Driver(speculative_ms=100, preemption="llm+tts", endpointing=settings)


def silence_until_stopped(d: Driver, limit_frames: int = 100) -> int:
    """Frames of silence fed until the turn ends."""
    for frame in range(1, limit_frames + 1):
        if of(d.audio("."), SpeechStopped):
            return frame
    raise AssertionError(f"the turn did not end within {limit_frames} frames of silence")


def pause(d: Driver) -> list[Any]:
    """200 ms of speech, then 100 ms of silence: the effects of that (the speculative transcript is asked)."""
    return d.audio("S" * 10 + "." * 5)


# --- the transcript ---------------------------------------------------------------------------------------


def test_a_transcript_in_flight_holds_the_turn_past_the_default_hangover_up_to_the_maximum() -> None:
    d = driver()
    (spec,) = requests(pause(d))
    assert not of(d.audio("." * 30), SpeechStopped)  # 700 ms of silence: the old rule ended it at 400 ms
    frames = silence_until_stopped(d)
    assert 100 + 20 * (30 + frames) == 800  # only the longest wait overrides evidence still on its way
    # ... and the transcript still on its way (it covers every voiced frame) is the turn's: when it comes, late as
    # it is, the turn is answered with its words
    effects = d.at(0.0, TranscriptReady(spec, "I would like to book a table", language="en"))
    replies = of(effects, GenerateReply)
    assert [(r.turn, r.history[-1].text) for r in replies] == [(1, "I would like to book a table")]


def test_a_late_transcript_that_trails_off_keeps_the_turn() -> None:
    d = driver()
    (spec,) = requests(pause(d))
    d.audio("." * 25)  # 600 ms: past the default hangover, the transcript is not back
    effects = d.at(0.0, TranscriptReady(spec, "I would like to book a table for, um,", language="en"))
    assert not of(effects, SpeechStopped)
    assert not of(d.audio("." * 9), SpeechStopped)  # 780 ms
    effects = d.audio("S" * 10)  # the caller goes on after thinking: still the same turn
    assert not of(effects, SpeechStopped)
    (spec2,) = requests(d.audio("." * 5))
    d.at(
        0.0, TranscriptReady(spec2, "I would like to book a table for, um, four people tomorrow night.", language="en")
    )
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 200  # a sentence that reads finished: the minimum
    assert d.session.active_turn == 1  # one turn of both parts, not two


def test_a_late_transcript_that_reads_finished_ends_the_turn_at_once() -> None:
    d = driver()
    (spec,) = requests(pause(d))
    d.audio("." * 25)  # 600 ms
    effects = d.at(0.0, TranscriptReady(spec, "What time is it?", language="en"))
    assert of(effects, SpeechStopped)


def test_a_transcript_that_failed_is_decided_without_at_the_default_hangover() -> None:
    d = driver()
    (spec,) = requests(pause(d))
    d.audio("." * 5)  # 200 ms
    d.at(0.0, TranscriptFailed(spec, "transcription skipped: busy"))
    frames = silence_until_stopped(d)
    assert 200 + 20 * frames == 400


# --- the sound's and the words' scores --------------------------------------------------------------------


def scored_pause(d: Driver, text: str) -> tuple[int, int | None]:
    """The pause's transcript comes back at 100 ms; returns the sound's and the words' score requests."""
    effects = pause(d)
    (spec,) = requests(effects)
    sound = of(effects, ScoreTurn)
    asked = of(d.at(0.0, TranscriptReady(spec, text, language="en")), ScoreWords)
    assert len(asked) <= 1
    if asked:
        assert asked[0].text == text and asked[0].language == "en"
    return sound[0].request, asked[0].request if asked else None


def test_a_sure_finished_turn_answers_at_the_minimum() -> None:
    d = driver(acoustic=True, words=True)
    sound, words = scored_pause(d, "What time do you open tomorrow?")
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))
    d.at(0.0, TurnScored(words, 0.6))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 200  # hangover_min_ms


def server_default() -> Driver:
    """The session with the server's own end-of-turn policy (its settings' defaults), pause looked at after 100 ms."""
    policy = dataclasses.asdict(build(EndpointPolicy, Settings(), speculative_ms=100))
    return Driver(speculative_ms=100, preemption="llm+tts", endpointing=policy)


def test_by_default_even_a_sure_finished_sentence_waits_the_fields_shortest_wait() -> None:
    # 500 ms, as OpenAI's server VAD and LiveKit wait: at 320 ms the recorded people of the human dev rows were cut
    # off in pauses of 448 ms after sentences finished in words and sound ("Press 1 to record your temporary
    # greeting." 0.98, then "or press 2"; docs/benchmarks.md, "The shortest wait").
    d = server_default()
    sound, words = scored_pause(d, "Press 1 to record your temporary greeting.")
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.98))
    d.at(0.0, TurnScored(words, 0.9))
    assert not of(d.audio("." * 17), SpeechStopped)  # 440 ms of silence: the caller may still go on
    sound, words = scored_pause(d, "Press 1 to record your temporary greeting, or press 2.")  # ... and does
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.98))
    d.at(0.0, TurnScored(words, 0.9))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 500
    assert d.session.active_turn == 1  # one turn of both parts


def test_the_words_score_on_its_way_holds_the_turn_then_ends_it_at_once() -> None:
    d = driver(acoustic=True, words=True)
    sound, words = scored_pause(d, "Please cancel my order.")
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))
    assert not of(d.audio("." * 20), SpeechStopped)  # 500 ms: the words' score is not back
    assert of(d.at(0.0, TurnScored(words, 0.5)), SpeechStopped)


def test_words_the_model_reads_unfinished_wait_longest_whatever_the_sound() -> None:
    d = driver(acoustic=True, words=True)
    sound, words = scored_pause(d, "The quick brown fox.")  # four words: no fragment by the rules
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))  # its falling pitch sounds finished
    d.at(0.0, TurnScored(words, 0.01))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 800  # as long as for words that trail off


def test_a_word_or_two_the_model_reads_unfinished_are_left_to_the_rules_and_the_sound() -> None:
    d = driver(acoustic=True, words=True)
    sound, words = scored_pause(d, "Transfer.")  # out of context the model scores it like a fragment
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))
    d.at(0.0, TurnScored(words, 0.01))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 400  # one word: the rules' default with a sure sound, not the longest wait


def test_the_words_and_the_sound_both_sure_may_end_sooner_than_the_minimum() -> None:
    d = driver(acoustic=True, words=True, words_sure_ms=140)
    sound, words = scored_pause(d, "What time do you open tomorrow?")
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))
    d.at(0.0, TurnScored(words, 0.6))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 140  # not the minimum (200 ms)


def test_words_the_model_reads_finished_are_no_fragment() -> None:
    d = driver(acoustic=True, words=True, sure_fragments=False)
    sound, words = scored_pause(d, "Hello world.")  # two words: a fragment by the word count
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))
    d.at(0.0, TurnScored(words, 0.6))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 200


def test_words_that_trail_off_are_not_sent_to_the_model_and_wait_longest() -> None:
    d = driver(acoustic=True, words=True)
    sound, words = scored_pause(d, "I need it by the, uh,")
    assert words is None
    d.at(0.0, TurnScored(sound, 0.99))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 800


def test_a_failed_words_score_leaves_the_rules_and_the_sound_to_decide() -> None:
    d = driver(acoustic=True, words=True)
    sound, words = scored_pause(d, "Please cancel my order.")
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))
    d.at(0.0, TurnScored(words, None))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 200


def test_the_prepared_reply_is_held_while_the_transcript_is_late() -> None:
    d = driver(acoustic=True, words=True)
    effects = pause(d)
    (spec,) = requests(effects)
    (sound,) = of(effects, ScoreTurn)
    d.at(0.0, TurnScored(sound.request, 0.9))
    d.audio("." * 20)  # 500 ms
    effects = d.at(0.0, TranscriptReady(spec, "I want the red one and", language="en"))
    (gen,) = of(effects, GenerateReply)  # prepared from the late transcript ...
    held = d.at(0.01, ReplyDelta(gen.turn, "The red one."))
    held += d.at(0.01, SpeechAudio(gen.turn, AUDIO_100MS, 0))
    held += d.audio("." * 5)
    assert events(held) == []  # ... and nothing of it reaches the caller, who is thinking


# --- the rule itself ----------------------------------------------------------------------------------------


POLICY = EndpointPolicy(hangover_min_ms=200, hangover_ms=400, hangover_max_ms=1500, acoustic=True, words=True)


def test_pending_evidence_waits_the_maximum_unless_the_words_already_trail_off() -> None:
    assert hangover(POLICY, Evidence(), language="en") == 400  # nothing asked, nothing coming: the default
    assert hangover(POLICY, Evidence(text_pending=True), language="en") == 1500
    assert hangover(POLICY, Evidence("Please cancel my order.", sound_pending=True), language="en") == 1500
    assert hangover(POLICY, Evidence("Please cancel my order.", 0.9, words_pending=True), language="en") == 1500
    assert hangover(POLICY, Evidence("Please cancel my order.", 0.9, 0.5), language="en") == 200
    assert hangover(POLICY, Evidence("for, um,", sound_pending=True), language="en") == 1500


def test_the_words_are_worth_reading_only_when_they_can_change_the_wait() -> None:
    assert reads_words(POLICY, "Hello world.", "en")
    assert not reads_words(POLICY, "I was going to, um,", "en")
    assert not reads_words(POLICY, "...", "en")
    off = EndpointPolicy(words=False)
    assert not reads_words(off, "Hello world.", "en")


def test_the_metrics_count_the_tail_the_caller_did_not_hear() -> None:
    d = Driver()
    for _ in range(10):
        d.at(0.02, AudioFrame(FRAME, True, 20))
    for _ in range(3):  # the fading end of the last word: voice to the detector, not to the caller
        d.at(0.02, AudioFrame(FRAME, True, 20, audible=False))
    (request,) = requests(d.audio("." * 20))
    d.at(0.1, TranscriptReady(request, "Hello.", language="en"))
    turn = d.session.active_turn
    assert turn is not None
    d.at(0.01, ReplyDelta(turn, "Hi."))
    d.at(0.01, ReplyEnded(turn))
    effects = d.at(0.05, SpeechAudio(turn, AUDIO_100MS, 0))
    effects += d.at(0.01, SpeechEnded(turn))
    effects += d.at(0.2, Tick()) + d.at(2.0, Tick())
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.tail_ms == 60
    assert metrics.voice_to_voice_ms is not None and metrics.caller_voice_to_voice_ms is not None
    assert metrics.caller_voice_to_voice_ms == metrics.voice_to_voice_ms + 60


def test_the_metrics_say_how_long_the_evidence_took_to_come_back() -> None:
    d = driver(acoustic=True, words=True)
    effects = pause(d)
    (spec,) = requests(effects)
    (sound,) = of(effects, ScoreTurn)
    d.at(0.05, TurnScored(sound.request, 0.95))
    effects = d.at(0.2, TranscriptReady(spec, "Please cancel my order.", language="en"))
    (words,) = of(effects, ScoreWords)
    (prepared,) = of(effects, GenerateReply)
    d.at(0.03, TurnScored(words.request, 0.5))
    silence_until_stopped(d)
    turn = prepared.turn
    d.at(0.01, ReplyDelta(turn, "Done."))
    d.at(0.01, ReplyEnded(turn))
    effects = d.at(0.05, SpeechAudio(turn, AUDIO_100MS, 0)) + d.at(0.01, SpeechEnded(turn)) + d.at(2.0, Tick())
    (metrics,) = of(effects, TurnMetrics)
    assert (metrics.spec_asr_ms, metrics.score_ms, metrics.words_ms) == (250.0, 50.0, 30.0)


def test_words_read_unfinished_that_sound_sure_may_wait_less_than_the_longest() -> None:
    d = driver(acoustic=True, words=True, words_unsure_ms=500)
    sound, words = scored_pause(d, "The quick brown fox.")
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.95))
    d.at(0.0, TurnScored(words, 0.01))
    frames = silence_until_stopped(d)
    assert 100 + 20 * frames == 500


def waited_ms(text: str, sound: float, words: float, **endpointing: Any) -> int:
    """How long the pause after ``text`` lasts before the turn ends, given the two scores."""
    d = driver(acoustic=True, words=True, hangover_max_ms=1200, **endpointing)
    sound_request, words_request = scored_pause(d, text)
    assert words_request is not None
    d.at(0.0, TurnScored(sound_request, sound))
    d.at(0.0, TurnScored(words_request, words))
    return 100 + 20 * silence_until_stopped(d)


def test_words_the_model_doubts_that_do_not_sound_finished_either_wait_the_longest() -> None:
    """``words_doubt``: JFK's "And so my fellow Americans." (words 0.07, sound 0.61), before a 1.1 s pause, was
    ended after ~340 ms by the rules, which read it finished; with the doubt it waits as unfinished words do."""
    hesitation = ("And so my fellow Americans.", 0.61, 0.07)
    assert waited_ms(*hesitation) < 600
    assert waited_ms(*hesitation, words_doubt=0.1) == 1200


def test_the_doubt_leaves_a_sure_sound_and_a_question_to_the_rules() -> None:
    """Finished sentences the model also scores low: a sure sound, or a question, end as they did without it."""
    for case in (("I would like a coffee.", 0.95, 0.07), ("Where's the station?", 0.61, 0.07)):
        assert waited_ms(*case, words_doubt=0.1) == waited_ms(*case) < 600, case
    above = ("And so my fellow Americans.", 0.61, 0.12)  # a score above the doubt: the rules read it
    assert waited_ms(*above, words_doubt=0.1) == waited_ms(*above) < 600


# --- the sound, scored again through the pause ------------------------------------------------------------


def test_the_sound_is_scored_again_through_the_pause_with_all_of_its_silence() -> None:
    """``rescore_ms``: every 100 ms more of silence after the first score is back, the sound of the whole pause so
    far is scored again, up to ``rescores`` times; the first snapshot holds the silence the detector keeps, each
    later one more of it."""
    d = driver(acoustic=True, words=True, rescore_ms=100, rescores=2)
    sound, words = scored_pause(d, "Message deleted.")
    assert words is not None
    d.at(0.0, TurnScored(sound, 0.05))  # unsure: a sentence that reads finished waits 600 ms
    d.at(0.0, TurnScored(words, 0.5))
    effects = d.audio("." * 4)  # 180 ms of silence: not yet 100 ms after the first look
    assert of(effects, ScoreTurn) == []
    (again,) = of(d.audio("."), ScoreTurn)  # 200 ms
    assert len(again.pcm) == (200 + 200) * 32  # the speech and the whole 200 ms of silence
    assert of(d.audio("." * 4), ScoreTurn) == []  # the re-score is on its way: no other is asked
    (stopped,) = of(d.at(0.0, TurnScored(again.request, 0.95)), SpeechStopped)  # now sure, 280 ms in: over
    assert stopped is not None


def test_a_later_score_that_stays_unsure_keeps_the_wait_and_the_count_is_bounded() -> None:
    d = driver(acoustic=True, words=True, rescore_ms=100, rescores=2)
    sound, words = scored_pause(d, "Message deleted.")
    d.at(0.0, TurnScored(sound, 0.05))
    if words is not None:
        d.at(0.0, TurnScored(words, 0.5))
    rescored = []
    for _ in range(30):  # 600 ms more of silence: the turn ends at 600 ms whatever comes
        effects = d.audio(".")
        for score in of(effects, ScoreTurn):
            rescored.append(score.request)
            effects += d.at(0.0, TurnScored(score.request, 0.1))
        if of(effects, SpeechStopped):
            break
    else:
        raise AssertionError("the turn did not end")
    assert len(rescored) == 2  # rescores


def test_no_rescore_without_the_setting() -> None:
    d = driver(acoustic=True, words=True)
    sound, words = scored_pause(d, "Message deleted.")
    d.at(0.0, TurnScored(sound, 0.05))
    if words is not None:
        d.at(0.0, TurnScored(words, 0.5))
    assert of(d.audio("." * 20), ScoreTurn) == []
