"""The session core, driven synchronously with explicit times (no event loop, no sleeps)."""

from __future__ import annotations

from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioStart,
    CancelTurn,
    ClientEnded,
    CloseSession,
    ErrorNotice,
    FinishSynthesis,
    GenerateReply,
    PlaybackClear,
    PlaybackMark,
    ReplyDelta,
    ReplyEnded,
    ReplyText,
    SessionEnded,
    SpeechAudio,
    SpeechEnded,
    SpeechStarted,
    SpeechStopped,
    StageFailed,
    Synthesize,
    Tick,
    TranscriptFailed,
    TranscriptReady,
    TranscriptText,
    TurnMetrics,
)
from agent.core.policies import IdlePolicy
from tests.session_driver import AUDIO_100MS, Driver, answered_turn, events, of, requests, utter

# ----------------------------------------------------------------------------------------- basic flow


def test_utterance_becomes_turn_with_transcription() -> None:
    d = Driver()
    effects = utter(d)
    assert isinstance(events(effects)[0], SpeechStarted)
    assert [e for e in events(effects) if isinstance(e, SpeechStopped)] == [SpeechStopped(turn=1, audio_ms=600)]
    assert len(requests(effects)) == 1
    assert d.session.active_turn is None  # numbered, but waiting for its transcript


def test_full_turn_flow_and_metrics() -> None:
    d = Driver()
    (req,) = requests(utter(d))
    effects = d.at(0.3, TranscriptReady(req, " What time is it? ", language="en"))
    assert events(effects) == [TranscriptText(1, "What time is it?", language="en")]
    (gen,) = of(effects, GenerateReply)
    assert [m.role for m in gen.history] == ["system", "user"]

    effects = d.at(0.05, ReplyDelta(1, "It is three. "))
    assert ReplyText(1, "It is three. ", done=False) in events(effects)
    assert Synthesize(1, "It is three.", 0, language="en") in effects
    d.at(0.01, ReplyDelta(1, "Bye"))
    effects = d.at(0.01, ReplyEnded(1))
    assert Synthesize(1, "Bye", 1, language="en") in effects
    assert effects[-1] == FinishSynthesis(1)
    assert ReplyText(1, "It is three. Bye", done=True) in events(effects)

    effects = d.at(0.1, SpeechAudio(1, AUDIO_100MS, 0))
    assert events(effects) == [AudioStart(1, 24000), AudioChunk(1, AUDIO_100MS)]
    d.at(0.01, SpeechAudio(1, AUDIO_100MS, 1))
    effects = d.at(0.01, SpeechEnded(1))
    assert events(effects) == [AudioEnd(1)]
    assert d.session.active_turn == 1  # still playing at the caller
    (metrics,) = of(d.at(0.5, Tick()), TurnMetrics)  # 200 ms of audio + 300 ms margin have passed
    assert metrics.turn == 1
    assert metrics.endpoint_ms == 400.0  # last voiced frame -> hangover complete
    assert metrics.asr_ms == 300.0
    assert metrics.llm_first_text_ms == 50.0
    assert metrics.tts_first_audio_ms == 120.0  # first sentence queued -> first audio
    assert metrics.voice_to_voice_ms == 870.0  # 400 + 300 + 50 + 10 + 10 + 100
    assert metrics.reply_audio_ms == 200
    assert metrics.interrupted is False and metrics.speculative_asr is False
    assert d.session.active_turn is None
    assert [m.text for m in d.session.history.snapshot()] == ["sys", "What time is it?", "It is three. Bye"]


def test_playback_marks_end_the_turn_when_everything_was_played() -> None:
    d = Driver()
    turn = answered_turn(d)
    assert d.session.active_turn == turn
    assert of(d.at(0.01, PlaybackMark(turn, 1000)), TurnMetrics) == []
    (metrics,) = of(d.at(0.01, PlaybackMark(turn, 2000)), TurnMetrics)
    assert metrics.interrupted is False


def test_empty_transcript_ends_turn_without_reply() -> None:
    d = Driver()
    (req,) = requests(utter(d))
    evs = events(d.at(0.3, TranscriptReady(req, "  ", language="en")))
    assert evs[0] == TranscriptText(1, "", language="en")
    assert isinstance(evs[1], TurnMetrics)
    assert d.session.active_turn is None


def test_short_click_is_not_a_turn() -> None:
    d = Driver(onset_ms=20, min_utterance_ms=100)
    effects = d.audio("SS" + "." * 25)
    assert requests(effects) == []
    assert d.session.active_turn is None


# ---------------------------------------------------------------------- speculative ASR, adaptive hangover


def test_speculative_transcript_is_reused_and_a_finished_sentence_ends_early() -> None:
    d = Driver(speculative_ms=100)
    effects = d.audio("S" * 10 + "." * 5)
    (spec,) = requests(effects)  # asked for after 100 ms of silence
    assert of(effects, SpeechStopped) == []
    effects = d.at(0.05, TranscriptReady(spec, "What time is it?", language="en"))
    assert effects == []  # finished sentence: 200 ms hangover, only 100 ms so far
    effects = d.audio("....")
    assert of(effects, SpeechStopped) == []
    effects = d.audio(".")
    assert [e.turn for e in of(effects, SpeechStopped)] == [1]
    assert requests(effects) == []  # no second transcription
    assert of(effects, GenerateReply)
    assert events(effects)[1] == TranscriptText(1, "What time is it?", language="en")


def test_speculative_transcript_arriving_late_ends_the_turn_at_once() -> None:
    d = Driver(speculative_ms=100)
    (spec,) = requests(d.audio("S" * 10 + "." * 12))  # 240 ms of silence, above the 200 ms minimum
    effects = d.at(0.01, TranscriptReady(spec, "Book a table for two.", language="en"))
    assert [e.turn for e in of(effects, SpeechStopped)] == [1]
    assert of(effects, GenerateReply)


def test_trailing_off_waits_for_the_long_hangover() -> None:
    d = Driver(speculative_ms=100)
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    d.at(0.01, TranscriptReady(spec, "I would like to book a table and", language="en"))
    effects = d.audio("." * 30)  # 700 ms: past the default 400 ms, short of 800 ms
    assert of(effects, SpeechStopped) == []
    effects = d.audio("." * 6)
    assert [e.turn for e in of(effects, SpeechStopped)] == [1]
    assert requests(effects) == []  # the speculative transcript still covers everything


def test_unclear_ending_uses_the_default_hangover() -> None:
    d = Driver(speculative_ms=100)
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    d.at(0.01, TranscriptReady(spec, "hello there", language="en"))
    assert of(d.audio("." * 14), SpeechStopped) == []  # 380 ms
    assert of(d.audio("."), SpeechStopped)


def test_speculative_transcript_is_discarded_when_the_caller_goes_on() -> None:
    d = Driver(speculative_ms=100)
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    d.audio("SSSS")  # the caller resumes
    effects = d.at(0.01, TranscriptReady(spec, "I would like.", language="en"))
    assert effects == []
    effects = d.audio("." * 5)
    (spec2,) = requests(effects)  # a fresh speculation for the longer utterance
    assert spec2 != spec
    assert not of(d.audio("." * 15), SpeechStopped)  # 400 ms of silence, transcript not back yet: it waits
    effects = d.at(0.01, TranscriptReady(spec2, "I would like a table for two.", language="en"))
    assert [type(e) for e in events(effects)][:2] == [SpeechStopped, TranscriptText]  # then ends at once
    assert of(effects, TranscriptText)[0] == TranscriptText(1, "I would like a table for two.", language="en")


def test_turn_ending_while_speculation_is_in_flight_waits_for_it_instead_of_asking_again() -> None:
    d = Driver(speculative_ms=100)  # hangover_max_ms 800
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    effects = d.audio("." * 35)  # the longest wait (800 ms) ends the turn, the transcript still on its way
    assert of(effects, SpeechStopped) and requests(effects) == []
    effects = d.at(0.2, TranscriptReady(spec, "Hello.", language="en"))
    assert events(effects)[0] == TranscriptText(1, "Hello.", language="en")


# --------------------------------------------------------------------------------------------- barge-in


def test_barge_in_cancels_clears_and_keeps_only_the_heard_part() -> None:
    d = Driver()
    turn = answered_turn(d)
    d.at(0.3, Tick())
    effects = d.audio("S" * 32)  # 600 ms of speech (backchannel_max_ms) interrupts: ~0.92 s played by then
    assert CancelTurn(turn) in effects
    assert PlaybackClear(turn) in events(effects)
    assert AudioEnd(turn) not in events(effects)  # audio.end was already sent when synthesis finished
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.interrupted is True
    assert metrics.heard_ms is not None and 900 <= metrics.heard_ms <= 950
    assistant = d.session.history.snapshot()[-1]
    assert assistant.role == "assistant"
    assert assistant.text == "Hello there my…"  # 92 % of the 1 s first sentence; nothing of the second
    assert d.session.active_turn is None


def test_barge_in_cut_mid_sentence_uses_the_client_mark() -> None:
    d = Driver()
    turn = answered_turn(d)
    d.at(0.01, PlaybackMark(turn, 1500))  # half of sentence 1 played
    effects = d.audio("S" * 32)
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.heard_ms is not None and metrics.heard_ms >= 1500
    assert d.session.history.snapshot()[-1].text.startswith("Hello there my friend. How are")


def test_new_utterance_after_barge_in_is_answered_and_stale_results_are_dropped() -> None:
    d = Driver()
    old = answered_turn(d)
    effects = d.audio("S" * 32 + "." * 20)
    assert CancelTurn(old) in effects
    (stopped,) = of(effects, SpeechStopped)
    new = stopped.turn
    assert new == old + 1
    _probe, req = requests(effects)  # a quick look at 200 ms, then the whole utterance
    # late results of the cancelled turn change nothing
    assert d.at(0.01, ReplyDelta(old, "More. ")) == []
    assert d.at(0.01, SpeechAudio(old, AUDIO_100MS, 0)) == []
    assert d.at(0.01, SpeechEnded(old)) == []
    assert d.at(0.01, PlaybackMark(old, 50)) == []
    effects = d.at(0.1, TranscriptReady(req, "Stop, tell me the time.", language="en"))
    assert of(effects, GenerateReply)[0].history[-1].text == "Stop, tell me the time."
    assert d.session.active_turn == new


def test_cough_during_reply_does_not_interrupt() -> None:
    d = Driver()
    turn = answered_turn(d)
    effects = d.audio("SSSS" + "." * 25)  # 80 ms of "speech": under min_speech_ms
    assert not of(effects, CancelTurn) and not of(effects, PlaybackClear)
    for request in requests(effects):  # a quick look may have been asked for; its answer changes nothing
        assert d.at(0.05, TranscriptReady(request, "Hm.", language="en")) == []
    assert d.session.active_turn == turn


def test_backchannel_does_not_interrupt() -> None:
    d = Driver()
    turn = answered_turn(d)
    effects = d.audio("S" * 12)  # 240 ms: over the minimum, so a quick transcript is taken
    (probe,) = requests(effects)
    assert not of(effects, CancelTurn)
    assert d.at(0.05, TranscriptReady(probe, "Uh-huh.", language="en")) == []
    effects = d.audio("." * 25)
    assert not of(effects, CancelTurn) and not of(effects, SpeechStopped) and requests(effects) == []
    assert d.session.active_turn == turn
    (metrics,) = of(d.at(3.0, Tick()), TurnMetrics)
    assert metrics.interrupted is False


def test_real_words_interrupt_as_soon_as_they_are_recognised() -> None:
    d = Driver()
    turn = answered_turn(d)
    (probe,) = requests(d.audio("S" * 12))
    effects = d.at(0.05, TranscriptReady(probe, "Wait, no", language="en"))
    assert CancelTurn(turn) in effects and PlaybackClear(turn) in events(effects)


def test_quick_transcript_is_asked_for_before_the_minimum_and_applied_when_it_is_reached() -> None:
    d = Driver()  # min_speech_ms 200, probe_lead_ms 120: the quick look comes at 80 ms of speech
    turn = answered_turn(d)
    effects = d.audio("SSSS")
    (probe,) = requests(effects)
    assert d.at(0.01, TranscriptReady(probe, "Wait", language="en")) == []  # real words, but only 80 ms so far
    effects = d.audio("S" * 5)
    assert not of(effects, CancelTurn)
    effects = d.audio("S")  # 200 ms: interrupts at once, no waiting for another transcript
    assert CancelTurn(turn) in effects and requests(effects) == []


def test_acknowledgement_that_goes_on_is_looked_at_again() -> None:
    d = Driver()
    turn = answered_turn(d)
    (probe,) = requests(d.audio("S" * 5))
    d.at(0.01, TranscriptReady(probe, "Yeah", language="en"))
    effects = d.audio("S" * 10)  # 300 ms: still "yeah" as far as we know; a second look at 280 ms
    assert not of(effects, CancelTurn)
    (probe2,) = requests(effects)
    effects = d.at(0.01, TranscriptReady(probe2, "Yeah, but what about Tuesday", language="en"))
    assert CancelTurn(turn) in effects


def test_long_speech_interrupts_even_before_its_transcript() -> None:
    d = Driver()
    turn = answered_turn(d)
    requests(d.audio("S" * 12))
    effects = d.audio("S" * 20)  # passes backchannel_max_ms (600 ms)
    assert CancelTurn(turn) in effects


def test_short_utterance_during_reply_is_judged_by_its_transcript() -> None:
    d = Driver()
    turn = answered_turn(d)
    effects = d.audio("S" * 11 + "." * 20)  # ends before the probe result is back
    probe, final = requests(effects)
    assert not of(effects, SpeechStopped)
    assert (
        d.at(0.05, TranscriptReady(probe, "Yeah", language="en")) == []
    )  # the utterance is over: the final one decides
    effects = d.at(0.05, TranscriptReady(final, "Yeah.", language="en"))
    assert effects == [] and d.session.active_turn == turn
    # the same, but not an acknowledgement: it interrupts and becomes the next turn
    _, final2 = requests(d.audio("S" * 11 + "." * 20))
    effects = d.at(0.05, TranscriptReady(final2, "Cancel that.", language="en"))
    assert CancelTurn(turn) in effects
    assert [e.turn for e in of(effects, SpeechStopped)] == [turn + 1]
    assert of(effects, GenerateReply)


def test_without_barge_in_a_new_turn_supersedes_the_old_one() -> None:
    d = Driver(barge_in=False)
    old = answered_turn(d)
    effects = d.audio("S" * 32 + "." * 20)
    assert CancelTurn(old) in effects
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.turn == old and metrics.interrupted


# ---------------------------------------------------------------------------------------- failures


def test_asr_failure_reports_error_and_ends_turn() -> None:
    d = Driver()
    (req,) = requests(utter(d))
    evs = events(d.at(0.1, TranscriptFailed(req, "boom")))
    assert evs[0] == ErrorNotice("asr_failed", "boom", 1)
    assert isinstance(evs[-1], TurnMetrics)
    assert d.session.active_turn is None


def test_llm_failure_speaks_what_was_generated() -> None:
    d = Driver()
    (req,) = requests(utter(d))
    d.at(0.1, TranscriptReady(req, "hello", language="en"))
    d.at(0.01, ReplyDelta(1, "Partial answer here"))
    effects = d.at(0.01, StageFailed(1, "llm", "llm_failed", "stream broke"))
    assert ErrorNotice("llm_failed", "stream broke", 1) in events(effects)
    assert Synthesize(1, "Partial answer here", 0, language="en") in effects
    assert FinishSynthesis(1) in effects
    assert d.session.active_turn == 1  # ends when the audio is done


def test_tts_failure_reports_and_turn_ends_when_pipeline_ends() -> None:
    d = Driver()
    (req,) = requests(utter(d))
    d.at(0.1, TranscriptReady(req, "hello", language="en"))
    d.at(0.01, ReplyDelta(1, "Hello there my friend. "))
    d.at(0.01, SpeechAudio(1, b"\x00\x00", 0))
    effects = d.at(0.01, StageFailed(1, "tts", "tts_failed", "engine died"))
    assert events(effects) == [ErrorNotice("tts_failed", "engine died", 1)]
    d.at(0.01, ReplyEnded(1))
    d.at(0.01, SpeechAudio(1, AUDIO_100MS, -1))  # the apology
    assert events(d.at(0.01, SpeechEnded(1))) == [AudioEnd(1)]
    (metrics,) = of(d.at(1.0, Tick()), TurnMetrics)
    assert not metrics.interrupted


# ------------------------------------------------------------------------------------------ the session


def test_client_end_closes_once() -> None:
    d = Driver()
    turn = answered_turn(d)
    effects = d.at(0.01, ClientEnded())
    assert CancelTurn(turn) in effects
    assert SessionEnded("client ended the session") in events(effects)
    assert effects[-1] == CloseSession(1000, "session ended")
    assert d.at(0.01, ClientEnded()) == []
    assert d.audio("SSSS") == []


def test_idle_prompt_once_then_end() -> None:
    d = Driver(idle=IdlePolicy(prompt_after_s=5.0, prompt_text="Still there?", end_after_s=12.0))
    d.at(0.0, Tick())
    assert d.at(4.9, Tick()) == []
    effects = d.at(0.2, Tick())
    assert ReplyText(1, "Still there?", done=True) in events(effects)
    assert (
        Synthesize(1, "Still there?", 0, phrase="idle_prompt", language="en") in effects
        and FinishSynthesis(1) in effects
    )
    d.at(0.01, SpeechAudio(1, AUDIO_100MS, 0))
    d.at(0.01, SpeechEnded(1))
    assert of(d.at(0.5, Tick()), TurnMetrics)
    assert not of(d.at(3.0, Tick()), ReplyText)  # prompts only once
    effects = d.at(9.0, Tick())
    assert effects[-1] == CloseSession(1000, "idle timeout")


def test_caller_speech_resets_idle() -> None:
    d = Driver(idle=IdlePolicy(prompt_after_s=5.0, end_after_s=6.0))
    d.at(0.0, Tick())
    d.at(4.0, Tick())
    d.audio("S" * 10 + "." * 25)  # the caller talks (a turn waits for its transcript)
    assert d.at(4.0, Tick()) == []
