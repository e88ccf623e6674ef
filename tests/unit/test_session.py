"""The session core, driven synchronously with explicit times (no event loop, no sleeps)."""

from __future__ import annotations

from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioFrame,
    AudioStart,
    CancelTurn,
    ClientEnded,
    CloseSession,
    Effect,
    ErrorNotice,
    FinishSynthesis,
    GenerateReply,
    Notify,
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
    Transcribe,
    TranscriptReady,
    TranscriptText,
    TurnMetrics,
)
from agent.core.session import Session, SessionConfig
from agent.core.turn_policy import TurnPolicy

FRAME = b"\x01\x00" * 320


class Driver:
    """Feeds a session 20 ms frames with a simulated clock."""

    def __init__(self, **policy: int) -> None:
        cfg = {"onset_ms": 40, "hangover_ms": 200, "min_utterance_ms": 60, "max_utterance_ms": 5000, "preroll_ms": 60}
        cfg.update(policy)
        self.session = Session(SessionConfig(output_sample_rate=24000, policy=TurnPolicy(**cfg), system_prompt="sys"))
        self.now = 0.0

    def audio(self, pattern: str) -> list[Effect]:
        out: list[Effect] = []
        for ch in pattern:
            self.now += 0.02
            out += self.session.handle(AudioFrame(FRAME, ch == "S", 20), self.now)
        return out

    def at(self, dt: float, event: object) -> list[Effect]:
        self.now += dt
        return self.session.handle(event, self.now)  # type: ignore[arg-type]


def events(effects: list[Effect]) -> list[object]:
    return [e.event for e in effects if isinstance(e, Notify)]


def utter(d: Driver) -> list[Effect]:
    return d.audio("SSSSSSSSSS" + "." * 10)


def test_utterance_becomes_turn_with_transcription() -> None:
    d = Driver()
    effects = utter(d)
    assert isinstance(events(effects)[0], SpeechStarted)
    stopped = [e for e in events(effects) if isinstance(e, SpeechStopped)]
    assert stopped == [SpeechStopped(turn=1, audio_ms=400)]
    transcribe = [e for e in effects if isinstance(e, Transcribe)]
    assert len(transcribe) == 1 and transcribe[0].turn == 1
    assert d.session.active_turn == 1


def test_full_turn_flow_and_metrics() -> None:
    d = Driver()
    utter(d)
    effects = d.at(0.3, TranscriptReady(1, " What time is it? "))
    assert events(effects) == [TranscriptText(1, "What time is it?")]
    (gen,) = [e for e in effects if isinstance(e, GenerateReply)]
    assert [m.role for m in gen.history] == ["system", "user"]
    assert gen.history[-1].text == "What time is it?"

    effects = d.at(0.05, ReplyDelta(1, "It is three. "))
    assert ReplyText(1, "It is three. ", done=False) in events(effects)
    assert Synthesize(1, "It is three.") in effects
    effects = d.at(0.01, ReplyDelta(1, "Bye"))
    assert not any(isinstance(e, Synthesize) for e in effects)
    effects = d.at(0.01, ReplyEnded(1))
    assert Synthesize(1, "Bye") in effects
    assert effects[-1] == FinishSynthesis(1)
    assert ReplyText(1, "It is three. Bye", done=True) in events(effects)

    effects = d.at(0.1, SpeechAudio(1, b"\x00\x00" * 960))
    assert events(effects) == [AudioStart(1, 24000), AudioChunk(1, b"\x00\x00" * 960)]
    effects = d.at(0.01, SpeechAudio(1, b"\x00\x00" * 960))
    assert events(effects) == [AudioChunk(1, b"\x00\x00" * 960)]
    effects = d.at(0.2, SpeechEnded(1))
    end, metrics = events(effects)
    assert end == AudioEnd(1)
    assert isinstance(metrics, TurnMetrics)
    assert metrics.turn == 1
    assert metrics.endpoint_ms == 200.0  # last voiced frame -> hangover complete
    assert metrics.asr_ms == 300.0
    assert metrics.llm_first_text_ms == 50.0
    assert metrics.tts_first_audio_ms == 120.0  # first sentence queued -> first audio
    assert metrics.voice_to_voice_ms == 670.0  # 200 + 300 + 50 + 10 + 10 + 100
    assert metrics.reply_audio_ms == 80
    assert metrics.interrupted is False
    assert d.session.active_turn is None
    assert [m.role for m in d.session.history.snapshot()] == ["system", "user", "assistant"]


def test_empty_transcript_ends_turn_without_reply() -> None:
    d = Driver()
    utter(d)
    effects = d.at(0.3, TranscriptReady(1, "  "))
    evs = events(effects)
    assert evs[0] == TranscriptText(1, "")
    assert isinstance(evs[1], TurnMetrics)
    assert not any(isinstance(e, GenerateReply) for e in effects)
    assert d.session.active_turn is None


def test_new_utterance_supersedes_active_turn_and_stale_results_are_dropped() -> None:
    d = Driver()
    utter(d)
    d.at(0.1, TranscriptReady(1, "tell me a story"))
    d.at(0.01, ReplyDelta(1, "Once upon a time there was a fox. "))
    d.at(0.01, SpeechAudio(1, b"\x00\x00" * 10))
    effects = utter(d)
    assert CancelTurn(1) in effects
    evs = events(effects)
    assert AudioEnd(1) in evs
    (m1,) = [e for e in evs if isinstance(e, TurnMetrics)]
    assert m1.turn == 1 and m1.interrupted is True
    assert SpeechStopped(turn=2, audio_ms=d.session._detector.position_ms) in evs
    # late results of turn 1 are ignored
    assert d.at(0.01, ReplyDelta(1, "More story. ")) == []
    assert d.at(0.01, SpeechAudio(1, b"\x00\x00" * 10)) == []
    assert d.at(0.01, SpeechEnded(1)) == []
    assert d.at(0.01, TranscriptReady(1, "late")) == []
    assert d.session.active_turn == 2


def test_speech_ended_before_reply_finished_is_ignored() -> None:
    d = Driver()
    utter(d)
    d.at(0.1, TranscriptReady(1, "hello"))
    assert d.at(0.1, SpeechEnded(1)) == []
    assert d.session.active_turn == 1


def test_asr_failure_reports_error_and_ends_turn() -> None:
    d = Driver()
    utter(d)
    effects = d.at(0.1, StageFailed(1, "asr", "asr_failed", "boom"))
    evs = events(effects)
    assert evs[0] == ErrorNotice("asr_failed", "boom", 1)
    assert isinstance(evs[-1], TurnMetrics)
    assert CancelTurn(1) in effects
    assert d.session.active_turn is None


def test_llm_failure_speaks_what_was_generated() -> None:
    d = Driver()
    utter(d)
    d.at(0.1, TranscriptReady(1, "hello"))
    d.at(0.01, ReplyDelta(1, "Partial answer here"))
    effects = d.at(0.01, StageFailed(1, "llm", "llm_failed", "stream broke"))
    assert ErrorNotice("llm_failed", "stream broke", 1) in events(effects)
    assert Synthesize(1, "Partial answer here") in effects
    assert FinishSynthesis(1) in effects
    assert d.session.active_turn == 1  # ends when the audio is done


def test_tts_failure_closes_audio_and_reports() -> None:
    d = Driver()
    utter(d)
    d.at(0.1, TranscriptReady(1, "hello"))
    d.at(0.01, ReplyDelta(1, "Hello there my friend. "))
    d.at(0.01, SpeechAudio(1, b"\x00\x00"))
    effects = d.at(0.01, StageFailed(1, "tts", "tts_failed", "engine died"))
    evs = events(effects)
    assert evs[0] == ErrorNotice("tts_failed", "engine died", 1)
    assert AudioEnd(1) in evs
    assert CancelTurn(1) in effects
    assert d.session.active_turn is None


def test_client_end_closes_once() -> None:
    d = Driver()
    utter(d)
    effects = d.at(0.01, ClientEnded())
    assert CancelTurn(1) in effects
    assert SessionEnded("client ended the session") in events(effects)
    assert effects[-1] == CloseSession(1000, "session ended")
    assert d.at(0.01, ClientEnded()) == []
    assert d.audio("SSSS") == []


def test_short_click_is_not_a_turn() -> None:
    d = Driver(onset_ms=20, min_utterance_ms=100)
    effects = d.audio("SS" + "." * 15)
    assert not any(isinstance(e, Transcribe) for e in effects)
    assert d.session.active_turn is None
