"""End-of-turn rules, in audio time, with no event loop and no clock."""

from __future__ import annotations

from agent.core.turn_detector import Discarded, EndOfTurn, Onset, TurnDetector, TurnPolicy, TurnSignal

FRAME_MS = 20


def frame(tag: int) -> bytes:
    return bytes([tag % 256]) * 640


def feed(detector: TurnDetector, pattern: str) -> list[tuple[int, TurnSignal]]:
    """``pattern``: one char per 20 ms frame, 'S' voiced, '.' unvoiced. Returns (frame index, signal)."""
    out = []
    for i, ch in enumerate(pattern):
        signal = detector.push(frame(i), ch == "S", FRAME_MS)
        if signal is not None:
            out.append((i, signal))
    return out


def policy(**kw: int) -> TurnPolicy:
    base = {"onset_ms": 60, "min_utterance_ms": 100, "max_utterance_ms": 2000, "preroll_ms": 100}
    base.update(kw)
    return TurnPolicy(**base)


def test_onset_needs_consecutive_voiced_audio() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    assert feed(d, ".....SS.SS.") == []
    assert not d.speaking
    signals = feed(d, "SSS")
    assert len(signals) == 1
    assert isinstance(signals[0][1], Onset)
    assert d.speaking


def test_onset_reports_position_of_first_voiced_frame() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    signals = feed(d, "....." + "SSS")
    ((_, onset),) = signals
    assert isinstance(onset, Onset)
    assert onset.audio_ms == 5 * FRAME_MS


def test_hangover_ends_turn_after_exact_silence() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    pattern = "SSSSSSSSSS" + "." * 9
    assert [type(s) for _, s in feed(d, pattern)] == [Onset]
    ((_, end),) = feed(d, ".")
    assert isinstance(end, EndOfTurn)
    assert end.reason == "silence"
    assert end.speech_ms == 10 * FRAME_MS
    assert not d.speaking


def test_short_pause_inside_sentence_does_not_end_turn() -> None:
    d = TurnDetector(policy(), hangover_ms=300)
    signals = feed(d, "SSSSSS" + "." * 14 + "SSSSSS" + "." * 15)
    kinds = [type(s) for _, s in signals]
    assert kinds == [Onset, EndOfTurn]
    end = signals[-1][1]
    assert isinstance(end, EndOfTurn)
    assert end.speech_ms == 12 * FRAME_MS


def test_preroll_keeps_audio_before_onset() -> None:
    d = TurnDetector(policy(preroll_ms=100), hangover_ms=100)
    signals = feed(d, "........" + "SSSSSS" + ".....")
    end = signals[-1][1]
    assert isinstance(end, EndOfTurn)
    # 5 pre-roll frames + 6 voiced + the 5 silent frames of the 100 ms hangover (under the 200 ms kept)
    assert end.audio.startswith(frame(3))
    assert len(end.audio) == (5 + 6 + 5) * 640


def test_trailing_silence_is_trimmed_to_200_ms() -> None:
    d = TurnDetector(policy(preroll_ms=0), hangover_ms=600)
    signals = feed(d, "SSSSS" + "." * 30)
    end = signals[-1][1]
    assert isinstance(end, EndOfTurn)
    assert len(end.audio) == (5 + 10) * 640
    assert end.utterance_ms == 15 * FRAME_MS


def test_too_short_utterance_is_discarded() -> None:
    d = TurnDetector(policy(onset_ms=40, min_utterance_ms=100), hangover_ms=200)
    signals = feed(d, "SSS" + "." * 10)
    assert [type(s) for _, s in signals] == [Onset, Discarded]
    assert not d.speaking


def test_max_length_cuts_a_turn() -> None:
    d = TurnDetector(policy(max_utterance_ms=1000, preroll_ms=0), hangover_ms=200)
    signals = feed(d, "S" * 100)
    kinds = [type(s) for _, s in signals]
    assert kinds == [Onset, EndOfTurn, Onset, EndOfTurn]
    first = signals[1][1]
    assert isinstance(first, EndOfTurn)
    assert first.reason == "max_length"
    assert first.utterance_ms == 1000


def test_position_counts_all_audio() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    feed(d, "..SS..SSSS....")
    assert d.position_ms == 14 * FRAME_MS


def test_zero_onset_starts_on_first_voiced_frame() -> None:
    d = TurnDetector(policy(onset_ms=0), hangover_ms=200)
    ((_, onset),) = feed(d, "..S")
    assert isinstance(onset, Onset)
    assert onset.audio_ms == 40


def test_the_tail_is_the_voice_after_the_last_audible_frame() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    out = []
    for i, ch in enumerate("..SSSSSSSStt.........."):  # 't': voiced by the detector, below the words' level
        signal = d.push(frame(i), ch in "St", FRAME_MS, audible=ch == "S")
        if signal is not None:
            out.append(signal)
    end = out[-1]
    assert isinstance(end, EndOfTurn)
    assert end.voiced_until_ms == 12 * FRAME_MS and end.audible_until_ms == 10 * FRAME_MS
    assert end.tail_ms == 2 * FRAME_MS


def test_no_tail_when_every_voiced_frame_is_audible_or_nothing_says() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    (_, _), (_, end) = feed(d, "..SSSSSS" + "." * 12)
    assert isinstance(end, EndOfTurn) and end.tail_ms == 0
    assert EndOfTurn(b"", 0, 0, 0, "silence", voiced_until_ms=400).tail_ms == 0
