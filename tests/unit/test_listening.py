"""The listening side on its own: what it hears, and what it asks for, frame by frame."""

from __future__ import annotations

from agent.core.call_language import CallLanguage
from agent.core.endpointing import EndpointPolicy
from agent.core.events import AudioFrame, Transcribe
from agent.core.listening import Began, Ended, Guessed, Interrupt, SpeechJudge, SpeechJudgement
from agent.core.policies import BargeInPolicy
from agent.core.turn_detector import TurnPolicy

FRAME = b"\x01\x00" * 320


def listener(speculative_ms: int = 100) -> SpeechJudge:
    return SpeechJudge(
        TurnPolicy(onset_ms=40, min_utterance_ms=60, max_utterance_ms=5000, preroll_ms=0),
        EndpointPolicy(speculative_ms=speculative_ms, hangover_min_ms=200, hangover_ms=400, hangover_max_ms=800),
        BargeInPolicy(min_speech_ms=200, backchannel_max_ms=600, probe_lead_ms=120),
        language=CallLanguage("en", detect=False),
    )


def push(lis: SpeechJudge, pattern: str, busy: bool = False) -> list[SpeechJudgement]:
    heard: list[SpeechJudgement] = []
    for i, ch in enumerate(pattern):
        heard += lis.push(AudioFrame(FRAME, ch == "S", 20), i * 0.02, busy)
    return heard


def test_a_covered_speculative_transcript_ends_the_utterance_with_its_text() -> None:
    lis = listener()
    heard = push(lis, "S" * 10 + "." * 5)
    assert isinstance(heard[0], Began)
    (spec,) = [h for h in heard if isinstance(h, Transcribe)]
    # 100 ms < 200 ms for a finished sentence: not over yet, but everything said so far is known
    assert lis.answer(spec.request, "Hello there.", busy=False) == [Guessed("Hello there.", 200)]
    heard = push(lis, "." * 5)
    (ended,) = [h for h in heard if isinstance(h, Ended)]
    assert ended.text == "Hello there." and not ended.interrupted
    assert not [h for h in heard if isinstance(h, Transcribe)]


def test_no_guess_from_a_stale_or_empty_speculative_transcript() -> None:
    lis = listener()
    (spec,) = [h for h in push(lis, "S" * 10 + "." * 5) if isinstance(h, Transcribe)]
    assert lis.answer(spec.request, "  ", busy=False) == []  # nothing understood: nothing to answer yet
    lis = listener()
    (spec,) = [h for h in push(lis, "S" * 10 + "." * 5) if isinstance(h, Transcribe)]
    push(lis, "SS")  # the caller went on before the transcript came back
    assert lis.answer(spec.request, "Hello there.", busy=False) == []


def test_without_speculation_the_end_asks_for_the_final_transcript() -> None:
    lis = listener(speculative_ms=0)
    heard = push(lis, "S" * 10 + "." * 20)
    (final,) = [h for h in heard if isinstance(h, Transcribe)]
    (ended,) = [h for h in heard if isinstance(h, Ended)]
    assert ended.text is None and ended.request == final.request


def test_noise_while_the_agent_talks_ends_silently() -> None:
    lis = listener(speculative_ms=0)
    heard = push(lis, "SSS" + "." * 25, busy=True)  # 60 ms: under the 200 ms minimum
    assert not [h for h in heard if isinstance(h, Ended | Interrupt)]
    assert not [h for h in heard if isinstance(h, Transcribe)] or all(
        lis.answer(h.request, "Hm", busy=True) == [] for h in heard if isinstance(h, Transcribe)
    )


def test_real_words_while_the_agent_talks_interrupt_once() -> None:
    lis = listener(speculative_ms=0)
    (probe,) = [h for h in push(lis, "SSSS", busy=True) if isinstance(h, Transcribe)]
    assert lis.answer(probe.request, "Stop", busy=True) == []  # only 80 ms so far
    heard = push(lis, "S" * 10, busy=True)
    assert [h for h in heard if isinstance(h, Interrupt)] == [Interrupt()]
    assert not [h for h in push(lis, "S" * 10, busy=True) if isinstance(h, Interrupt)]


def test_what_is_said_over_the_agent_is_transcribed_plain_and_the_callers_own_turn_is_not() -> None:
    """``over_agent``: the recogniser runs without its prompt of fillers, which would make a short "stop"
    into "Uh," (an acknowledgement); the caller's own turn keeps it, so that "um" stays in the transcript."""
    lis = listener()
    own = [h for h in push(lis, "S" * 10 + "." * 30) if isinstance(h, Transcribe)]
    assert own and not any(t.over_agent for t in own)
    lis = listener()
    heard = push(lis, "S" * 8 + "." * 5, busy=True)  # a probe at 80 ms, then a speculative look at the pause
    over = [h for h in heard if isinstance(h, Transcribe)]
    assert {t.purpose for t in over} == {"quick", "speculative"}
    assert all(t.over_agent for t in over)
    lis = listener(speculative_ms=0)
    heard = push(lis, "S" * 8, busy=True) + push(lis, "." * 30)  # the agent stopped: it still began over it
    (final,) = [h for h in heard if isinstance(h, Transcribe) and h.purpose == "final"]
    assert final.over_agent
