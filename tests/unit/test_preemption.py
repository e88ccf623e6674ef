"""Preemptive replies in the session core: started from the speculative transcript before the end of turn,
held, released at the end of turn, discarded when the caller goes on (simulated clock, no event loop)."""

from __future__ import annotations

from agent.core.events import (
    AudioChunk,
    AudioStart,
    CancelTurn,
    Drain,
    FinishSynthesis,
    GenerateReply,
    Notify,
    PlaybackMark,
    PreemptionOutcome,
    ReplyDelta,
    ReplyEnded,
    ReplyText,
    ResendSpeech,
    SpeechAudio,
    SpeechEnded,
    SpeechStopped,
    StageFailed,
    Synthesize,
    TranscriptReady,
    TranscriptText,
    TurnMetrics,
)
from agent.core.policies import Preemption
from tests.session_driver import AUDIO_100MS, Driver, events, of, requests


def guessing(mode: Preemption = "llm+tts", text: str = "What time is it?") -> tuple[Driver, int]:
    """A caller says ten frames, falls silent; the speculative transcript comes back 100 ms into the silence
    (200 ms are needed to end a finished sentence). Returns the driver and the prepared reply's turn number."""
    d = Driver(speculative_ms=100, preemption=mode)
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    effects = d.at(0.0, TranscriptReady(spec, text, language="en"))
    (gen,) = of(effects, GenerateReply)
    assert [m.text for m in gen.history] == ["sys", text]  # the reply is asked for now ...
    assert events(effects) == []  # ... and nothing is said to the caller
    assert [m.text for m in d.session.history.snapshot()] == ["sys"]  # nor remembered
    assert d.session.active_turn is None
    return d, gen.turn


def prepare_reply(d: Driver, turn: int) -> list[object]:
    """The reply text and its first sentence's audio arrive before the end of turn."""
    out: list[object] = []
    out += d.at(0.01, ReplyDelta(turn, "It is three. "))
    out += d.at(0.01, ReplyDelta(turn, "Anything else?"))
    out += d.at(0.01, ReplyEnded(turn))
    out += d.at(0.01, SpeechAudio(turn, AUDIO_100MS, 0))
    return out


def test_hit_releases_the_prepared_reply_at_the_end_of_turn_in_order() -> None:
    d, turn = guessing()
    ahead = prepare_reply(d, turn)
    assert [e for e in ahead if isinstance(e, Notify)] == []  # nothing reaches the caller before the end
    assert [e for e in ahead if isinstance(e, Synthesize)] == [Synthesize(turn, "It is three.", 0, language="en")]
    assert not [e for e in ahead if isinstance(e, FinishSynthesis)]  # sentence 1 waits, so does the finish

    effects = d.audio(".....")  # 200 ms of silence: the turn ends, transcript as guessed
    assert effects[0] == Notify(SpeechStopped(turn=1, audio_ms=effects[0].event.audio_ms))  # type: ignore[union-attr]
    assert PreemptionOutcome(1, hit=True, synthesized_ms=100.0) in effects
    assert events(effects)[1:] == [
        TranscriptText(1, "What time is it?", language="en"),
        ReplyText(1, "It is three. ", done=False),
        ReplyText(1, "Anything else?", done=False),
        ReplyText(1, "It is three. Anything else?", done=True),
    ]
    assert [e for e in effects if isinstance(e, Synthesize | FinishSynthesis | ResendSpeech)] == [
        Synthesize(1, "Anything else?", 1, language="en"),
        FinishSynthesis(1),
        ResendSpeech(1, 0, keep=False),  # the audio made ahead, from its start, as the client takes it
    ]
    effects = d.at(0.0, SpeechAudio(1, AUDIO_100MS, 0, 0))  # the runtime's copy of it
    assert events(effects) == [AudioStart(1, 24000), AudioChunk(1, AUDIO_100MS)]
    assert d.session.active_turn == 1
    assert [m.text for m in d.session.history.snapshot()] == ["sys", "What time is it?"]

    d.at(0.01, SpeechAudio(1, AUDIO_100MS, 1))  # from here on the turn runs as any other
    assert of(d.at(0.01, SpeechEnded(1)), TurnMetrics) == []
    (metrics,) = of(d.at(0.01, PlaybackMark(1, 200)), TurnMetrics)
    assert metrics.preemptive and metrics.speculative_asr and not metrics.interrupted
    assert metrics.endpoint_ms is not None and metrics.endpoint_ms >= 200.0
    assert metrics.voice_to_voice_ms == metrics.endpoint_ms  # the audio was ready: heard at the end of turn
    assert metrics.asr_ms == 0.0 and metrics.llm_first_text_ms == 0.0 and metrics.tts_first_audio_ms == 0.0
    assert [m.text for m in d.session.history.snapshot()][-1] == "It is three. Anything else?"


def test_audio_arriving_after_the_end_of_turn_goes_out_at_once() -> None:
    d, turn = guessing()
    d.at(0.01, ReplyDelta(turn, "It is three."))
    effects = d.audio(".....")  # ends before any audio
    assert events(effects)[:2] == [
        SpeechStopped(1, events(effects)[0].audio_ms),
        TranscriptText(1, "What time is it?", language="en"),
    ]
    effects = d.at(0.05, SpeechAudio(1, AUDIO_100MS, 0))
    assert events(effects) == [AudioStart(1, 24000), AudioChunk(1, AUDIO_100MS)]


def test_miss_when_the_caller_goes_on_discards_everything_unheard() -> None:
    d, turn = guessing()
    prepare_reply(d, turn)
    effects = d.audio("SS")  # the caller resumes
    assert CancelTurn(turn) in effects
    assert PreemptionOutcome(turn, hit=False, synthesized_ms=100.0) in effects
    assert events(effects) == []
    assert d.at(0.01, SpeechAudio(turn, AUDIO_100MS, 0)) == []  # late work of the dropped reply: ignored
    (spec,) = requests(d.audio("S" * 5 + "." * 5))
    effects = d.at(0.0, TranscriptReady(spec, "What time is it in Paris?", language="en"))
    (gen,) = of(effects, GenerateReply)
    assert gen.turn == turn  # the number was never announced: the next reply takes it
    assert gen.history[-1].text == "What time is it in Paris?"
    effects = d.audio(".....")
    assert [e.turn for e in of(effects, SpeechStopped)] == [1]
    assert TranscriptText(1, "What time is it in Paris?", language="en") in events(effects)
    assert [m.text for m in d.session.history.snapshot()] == ["sys", "What time is it in Paris?"]


def test_a_different_final_transcript_discards_the_guess_and_answers_the_real_one() -> None:
    d, _ = guessing()
    d.audio("S")  # a voiced frame: the utterance goes on, the guess is dropped
    (spec,) = requests(d.audio("." * 5))
    d.audio("." * 15)  # the end comes first (default hangover); its transcript is the one in flight
    effects = d.at(0.01, TranscriptReady(spec, "What time is it now?", language="en"))
    assert TranscriptText(1, "What time is it now?", language="en") in events(effects)
    (gen,) = of(effects, GenerateReply)
    assert gen.history[-1].text == "What time is it now?"


def test_llm_mode_holds_synthesis_until_the_end_of_turn() -> None:
    d, turn = guessing("llm")
    ahead = prepare_reply(d, turn)[:3]  # text only: no audio can exist
    assert [e for e in ahead if isinstance(e, Synthesize | FinishSynthesis)] == []
    effects = d.audio(".....")
    assert [e for e in effects if isinstance(e, Synthesize | FinishSynthesis)] == [
        Synthesize(1, "It is three.", 0, language="en"),
        Synthesize(1, "Anything else?", 1, language="en"),
        FinishSynthesis(1),
    ]


def test_off_starts_nothing_before_the_end_of_turn() -> None:
    d = Driver(speculative_ms=100, preemption="off")
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    assert d.at(0.0, TranscriptReady(spec, "What time is it?", language="en")) == []


def test_a_failed_prepared_reply_is_asked_for_again_at_the_end_of_turn() -> None:
    d, turn = guessing()
    effects = d.at(0.01, StageFailed(turn, "llm", "llm_failed", "boom"))
    assert CancelTurn(turn) in effects and events(effects) == []
    effects = d.audio(".....")
    assert [e.turn for e in of(effects, SpeechStopped)] == [1]
    assert of(effects, GenerateReply)  # asked again, now as an ordinary turn


def test_no_guess_while_the_agent_holds_the_floor_or_drains() -> None:
    d, turn = guessing()
    effects = d.at(0.0, Drain(deadline=d.now + 5))
    assert CancelTurn(turn) in effects
    d = Driver(speculative_ms=100, preemption="llm+tts")
    (spec,) = requests(d.audio("S" * 10 + "." * 20))  # a turn ends normally
    assert d.session.active_turn is None
    d.at(0.01, TranscriptReady(spec, "Hello.", language="en"))
    assert d.session.active_turn == 1
    effects = d.audio("S" * 10 + "." * 5)  # talking over the reply (with barge-in): no preparation
    assert of(effects, GenerateReply) == []
