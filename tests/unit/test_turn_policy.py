"""End-of-turn rules, in audio time, with no event loop and no clock."""

from __future__ import annotations

from agent.core.turn_detector import Discarded, EndOfTurn, Onset, Piece, TurnDetector, TurnPolicy, TurnSignal

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


def test_the_longest_turn_cuts_a_turn() -> None:
    d = TurnDetector(policy(max_utterance_ms=1000, max_turn_ms=1000, preroll_ms=0), hangover_ms=200)
    signals = feed(d, "S" * 100)
    kinds = [type(s) for _, s in signals]
    assert kinds == [Onset, EndOfTurn, Onset, EndOfTurn]
    first = signals[1][1]
    assert isinstance(first, EndOfTurn)
    assert first.reason == "max_length"
    assert first.utterance_ms == 1000


def test_a_caller_talking_on_past_the_longest_utterance_is_handed_on_in_pieces_until_the_longest_turn() -> None:
    d = TurnDetector(policy(max_utterance_ms=1000, max_turn_ms=3000, preroll_ms=0), hangover_ms=200)
    signals = feed(d, "S" * 153)
    assert [type(s) for _, s in signals] == [Onset, Piece, Piece, Piece, EndOfTurn, Onset]
    # no pause to cut at: all but the frame just heard (so the rest holds voice), the frames in order, none twice
    cuts = [(0, 49), (49, 98), (98, 147)]
    pieces = [s.audio for _, s in signals[1:4] if isinstance(s, Piece)]
    assert pieces == [b"".join(frame(i) for i in range(*cut)) for cut in cuts]
    end = signals[4][1]
    assert isinstance(end, EndOfTurn) and end.reason == "max_length" and end.utterance_ms == 3000
    assert end.audio == b"".join(frame(i) for i in range(147, 150))
    assert end.speech_ms == 3000  # the whole turn's voice


def test_a_piece_ends_in_the_middle_of_the_last_pause_of_its_final_third() -> None:
    d = TurnDetector(policy(max_utterance_ms=1000, preroll_ms=0), hangover_ms=200)
    signals = feed(d, "S" * 20 + "...." + "S" * 10 + "....." + "S" * 11)  # 50 frames: 1000 ms on the last
    ((_, onset), (at, piece)) = signals
    assert isinstance(onset, Onset) and isinstance(piece, Piece) and at == 49
    assert piece.audio == b"".join(frame(i) for i in range(36))  # the pause at frames 34-38: cut at 36, not at 22
    assert d.speaking and d.speech_ms == 41 * FRAME_MS
    (_, end), *_ = feed(d, "." * 10)
    assert isinstance(end, EndOfTurn) and end.reason == "silence"
    assert end.audio.startswith(b"".join(frame(i) for i in range(36, 50)))  # the rest, from where the piece ended
    assert end.utterance_ms == 50 * FRAME_MS + 200  # the whole turn, and the 200 ms of silence kept


def test_a_caller_silent_at_the_longest_utterance_is_not_cut_there() -> None:
    # the pause may be the end of the turn: the end of turn decides, as for any pause
    d = TurnDetector(policy(max_utterance_ms=1000, preroll_ms=0), hangover_ms=400)
    signals = feed(d, "S" * 45 + "." * 25)
    assert [type(s) for _, s in signals] == [Onset, EndOfTurn]
    assert signals[1][1].reason == "silence"  # type: ignore[union-attr]


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


def test_a_blip_in_the_pause_does_not_restart_its_silence() -> None:
    """A click the detector calls voice (two frames) is part of the pause: the silence counts through it, and the
    utterance ends where it would have without the click (``resume_ms``)."""
    d = TurnDetector(policy(resume_ms=60), hangover_ms=200)
    signals = feed(d, "SSSSSS" + "...." + "SS" + "...")
    assert [type(s) for _, s in signals] == [Onset]
    ((at, end),) = feed(d, ".")
    assert isinstance(end, EndOfTurn)
    assert at == 0 and end.audio_ms == 16 * FRAME_MS  # 6 voiced + 10 of silence, the click's two among them
    assert end.speech_ms == 6 * FRAME_MS
    assert end.voiced_until_ms == 6 * FRAME_MS


def test_without_resume_ms_the_same_blip_restarts_the_silence() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    assert [type(s) for _, s in feed(d, "SSSSSS" + "...." + "SS" + "....")] == [Onset]
    assert d.speaking and d.silence_ms == 4 * FRAME_MS


def test_speech_that_goes_on_for_resume_ms_goes_on_with_the_utterance() -> None:
    d = TurnDetector(policy(resume_ms=60), hangover_ms=200)
    feed(d, "SSSSSS" + "....")
    assert [type(s) for _, s in feed(d, "SS")] == []
    assert d.resuming and d.silence_ms == 6 * FRAME_MS
    assert feed(d, "S") == []
    assert not d.resuming and d.silence_ms == 0 and d.speech_ms == 9 * FRAME_MS
    assert d.voiced_until_ms == 13 * FRAME_MS


def test_no_end_while_the_caller_may_be_going_on() -> None:
    """The hangover falls inside a voiced run not yet ``resume_ms`` long: the utterance waits to see which."""
    d = TurnDetector(policy(resume_ms=80), hangover_ms=200)
    assert [type(s) for _, s in feed(d, "SSSSSS" + "........" + "SSS")] == [Onset]
    assert d.resuming and d.silence_ms == 11 * FRAME_MS
    assert feed(d, "S") == []  # the fourth voiced frame: speech goes on
    assert d.silence_ms == 0
    assert [type(s) for _, s in feed(d, "SS" + "." * 10)] == [EndOfTurn]


def test_a_blip_that_stops_under_the_hangover_ends_the_utterance_at_once() -> None:
    d = TurnDetector(policy(resume_ms=80), hangover_ms=200)
    assert [type(s) for _, s in feed(d, "SSSSSS" + "........" + "SSS")] == [Onset]
    ((_, end),) = feed(d, ".")
    assert isinstance(end, EndOfTurn)
    assert end.voiced_until_ms == 6 * FRAME_MS and end.speech_ms == 6 * FRAME_MS


def feed_heard(detector: TurnDetector, pattern: str) -> list[tuple[int, TurnSignal]]:
    """``pattern`` as in ``feed``, with 'c': voiced by the first detector, not speech to the second (a click)."""
    out = []
    for i, ch in enumerate(pattern):
        signal = detector.push(frame(i), ch in "Sc", FRAME_MS, speech=ch != "c")
        if signal is not None:
            out.append((i, signal))
    return out


def test_a_click_the_second_detector_does_not_hear_as_speech_is_part_of_the_pause() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    signals = feed_heard(d, "SSSSSS" + "..cc..ccc.")
    assert [type(s) for _, s in signals] == [Onset, EndOfTurn]
    at, end = signals[-1]
    assert isinstance(end, EndOfTurn)
    assert at == 15 and end.voiced_until_ms == 6 * FRAME_MS and end.speech_ms == 6 * FRAME_MS


def test_the_second_detector_is_asked_only_in_a_pause() -> None:
    """Inside speech (no silence yet) the first detector alone decides: the second's late or unsure frames at the
    onset of a word do not cut the utterance."""
    d = TurnDetector(policy(), hangover_ms=200)
    assert [type(s) for _, s in feed_heard(d, "cccSSSScc")] == [Onset]
    assert d.speech_ms == 9 * FRAME_MS and d.silence_ms == 0


def test_speech_the_second_detector_hears_goes_on_after_the_pause() -> None:
    d = TurnDetector(policy(), hangover_ms=200)
    feed_heard(d, "SSSSSS" + ".....c")
    assert d.silence_ms == 6 * FRAME_MS
    assert feed_heard(d, "SS") == []
    assert d.silence_ms == 0 and d.speech_ms == 8 * FRAME_MS
