"""The human sets' labels (bench/turns/human_labels.py) on RTTM text and speech runs written by hand: eot-bench's
rule (every silence of 100 ms or more inside a turn is a hold, the one after it the end), who holds the floor from
speaker turns, open turns, overlap, and derived labels from gaps alone."""

from __future__ import annotations

import pytest

from bench.turns.human_labels import (
    OPEN_AT_EDGE,
    OPEN_OVERLAPPED,
    OPEN_UNANSWERED,
    Segment,
    TurnSpan,
    floor_turns,
    gap_turns,
    one_turn,
    parse_rttm,
    plain_name,
    speech_runs,
)

RTTM = """\
SPEAKER trn00 1 3.168 0.800 <NA> <NA> MÉO069 <NA> <NA>
SPEAKER trn00 1 5.463 0.640 <NA> <NA> MEE068 <NA> <NA>
SPEAKER dev00 1 1.440 11.872 <NA> <NA> MEE009 <NA> <NA>
"""


def labels(span: TurnSpan) -> list[tuple[float, float, str]]:
    return [(s.start_ms, s.end_ms, s.label) for s in span.silences]


def test_rttm_lines_become_segments_by_file_with_plain_names() -> None:
    files = parse_rttm(RTTM)
    assert sorted(files) == ["dev00", "trn00"]
    first = files["trn00"][0]
    assert (first.speaker, first.start_ms, round(first.end_ms, 6)) == ("MEO069", 3168.0, 3968.0)
    [dev] = files["dev00"]
    assert (dev.speaker, dev.start_ms, round(dev.end_ms, 6)) == ("MEE009", 1440.0, 13312.0)
    assert plain_name("trñ00") == "trn00"


def test_a_malformed_rttm_line_is_refused_with_its_number() -> None:
    with pytest.raises(ValueError, match="RTTM line 2"):
        parse_rttm("SPEAKER a 1 0.0 1.0 <NA> <NA> X <NA> <NA>\nSPEAKER a 1 zero 1.0 <NA> <NA> X\n")
    with pytest.raises(ValueError, match="negative"):
        parse_rttm("SPEAKER a 1 -1.0 1.0 <NA> <NA> X <NA> <NA>\n")


def test_speech_runs_use_hysteresis_join_short_gaps_and_drop_blips() -> None:
    # 32 ms frames: speech from frame 2 (0.6 >= 0.5) while >= 0.35; frame 5 (0.3) ends it.
    assert speech_runs([0.1, 0.4, 0.6, 0.4, 0.36, 0.3, 0.1]) == [(64.0, 160.0)]
    # A gap of two frames (64 ms < 100 ms) is part of the speech; of four (128 ms) it is a silence.
    assert speech_runs([0.9] * 4 + [0.0] * 2 + [0.9] * 4) == [(0.0, 320.0)]
    assert speech_runs([0.9] * 4 + [0.0] * 4 + [0.9] * 4) == [(0.0, 128.0), (256.0, 384.0)]
    # One loud frame (32 ms < 64 ms) alone between silences is not speech.
    assert speech_runs([0.0] * 5 + [0.9] + [0.0] * 5) == []


def test_pauses_inside_one_speakers_segment_are_holds_and_its_end_before_the_next_speaker_is_the_end() -> None:
    segments = [Segment("A", 1000, 5000), Segment("B", 5600, 7000)]
    runs = [(1000.0, 2000.0), (2050.0, 3000.0), (3400.0, 4900.0), (5600.0, 7000.0)]
    [a, b] = floor_turns(segments, runs, 10000)
    assert a.speaker == "A" and a.ended
    # 50 ms is not a silence; 400 ms is a hold; the end runs from the last speech to B's first.
    assert labels(a) == [(3000.0, 3400.0, "hold"), (4900.0, 5600.0, "end")]
    assert not any(s.derived for s in a.silences)
    assert b.speaker == "B" and not b.ended and b.open_because == OPEN_UNANSWERED


def test_one_speakers_segments_are_one_turn_while_nobody_else_speaks_between_them() -> None:
    segments = [Segment("A", 0, 2000), Segment("A", 3500, 5000), Segment("B", 6000, 8000), Segment("A", 9000, 9500)]
    runs = [(0.0, 2000.0), (3500.0, 5000.0), (6000.0, 8000.0), (9000.0, 9500.0)]
    turns = floor_turns(segments, runs, 20000)
    first = turns[0]
    assert (first.speaker, first.start_ms, first.speech_end_ms) == ("A", 0.0, 5000.0)
    assert labels(first) == [(2000.0, 3500.0, "hold"), (5000.0, 6000.0, "end")]
    assert [t.speaker for t in turns] == ["A", "B", "A"]
    assert labels(turns[1]) == [(8000.0, 9000.0, "end")]


def test_the_end_silence_stops_at_the_next_sound_even_before_the_next_speaker() -> None:
    segments = [Segment("A", 0, 2000), Segment("B", 4000, 5000)]
    runs = [(0.0, 2000.0), (3000.0, 3200.0), (4000.0, 5000.0)]  # an unannotated sound at 3 s
    turn = floor_turns(segments, runs, 9000)[0]
    assert labels(turn) == [(2000.0, 3000.0, "end")]


def test_a_turn_another_speaker_talks_over_at_its_end_is_open_and_keeps_its_holds() -> None:
    segments = [Segment("A", 0, 4000), Segment("B", 3800, 6000)]
    runs = [(0.0, 1500.0), (2000.0, 6000.0)]
    a = next(t for t in floor_turns(segments, runs, 9000) if t.speaker == "A")
    assert not a.ended and a.open_because == OPEN_OVERLAPPED
    assert labels(a) == [(1500.0, 2000.0, "hold")]
    assert a.speech_end_ms == 4000.0  # cut where its segment ends, not where the other voice stops


def test_a_turn_that_runs_to_the_recordings_end_is_open() -> None:
    segments = [Segment("A", 500, 30000)]
    turn = floor_turns(segments, [(500.0, 1000.0), (1300.0, 29990.0)], 30000)[0]
    assert turn.open_because == OPEN_AT_EDGE
    assert labels(turn) == [(1000.0, 1300.0, "hold")]


def test_a_silence_another_speaker_talks_in_is_not_labelled_and_overlap_is_counted_once() -> None:
    segments = [Segment("A", 0, 5000), Segment("B", 1100, 1300), Segment("C", 1150, 1400), Segment("D", 6000, 7000)]
    runs = [(0.0, 1000.0), (1500.0, 2500.0), (3000.0, 5000.0), (6000.0, 7000.0)]
    a = floor_turns(segments, runs, 9000)[0]
    assert a.unlabelled == 1  # 1000-1500 is B's and C's
    assert labels(a) == [(2500.0, 3000.0, "hold"), (5000.0, 6000.0, "end")]
    assert a.overlap_ms == pytest.approx(300.0)  # B and C together: 1100-1400


def test_detected_speech_may_run_a_little_past_a_segment_but_never_into_the_next_speakers() -> None:
    segments = [Segment("A", 1000, 3000), Segment("B", 3300, 5000)]
    runs = [(900.0, 3150.0), (3300.0, 5000.0)]
    a = floor_turns(segments, runs, 9000)[0]
    assert (a.start_ms, a.speech_end_ms) == (900.0, 3150.0)
    assert labels(a) == [(3150.0, 3300.0, "end")]


def test_gaps_alone_make_derived_turns_and_the_last_words_of_the_recording_are_dropped() -> None:
    runs = [(0.0, 1000.0), (1300.0, 2000.0), (3500.0, 4000.0), (4200.0, 5000.0), (9500.0, 9800.0)]
    turns = gap_turns(runs, 10000, turn_gap_ms=1000)
    assert [labels(t) for t in turns] == [
        [(1000.0, 1300.0, "hold"), (2000.0, 3500.0, "end")],
        [(4000.0, 4200.0, "hold"), (5000.0, 9500.0, "end")],
    ]
    assert all(s.derived for t in turns for s in t.silences)


def test_a_whole_recording_is_one_turn_with_every_pause_a_hold() -> None:
    runs = [(320.0, 2240.0), (3328.0, 3744.0), (4032.0, 4352.0), (5440.0, 7616.0), (8224.0, 10496.0)]
    turn = one_turn(runs, 11000, "JFK")
    assert [s.label for s in turn.silences] == ["hold"] * 4 + ["end"]
    assert [round(s.duration_ms) for s in turn.silences] == [1088, 288, 1088, 608, 504]
    with pytest.raises(ValueError, match="no speech"):
        one_turn([], 1000, "nobody")
