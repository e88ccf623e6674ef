"""The live human bench's scoring of a row from its call log (bench/turns/live_human.py) and its options
(bench/turns/live_human_run.py): pure, no server, no model, no event loop."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from bench.turns.command import build_parser
from bench.turns.human_labels import LabelledSilence
from bench.turns.human_turn import RATE, LabelledTurn
from bench.turns.live_human import HumanCall, as_call, difference, format_table, log_row, summary
from bench.turns.live_human_run import check_arguments
from bench.turns.live_score import CallLog
from bench.turns.seal import log_line


def row(
    holds: tuple[tuple[float, float], ...] = ((1000.0, 1600.0),),
    end: tuple[float, float] | None = (2500.0, 6500.0),
    words: str | None = "ask not what your country can do for you",
    condition: str = "clean",
    source: str = "jfk",
) -> LabelledTurn:
    """A row of 16 kHz silence with these labels (the scoring reads the labels, never the audio)."""
    silences = [LabelledSilence(s, e, "hold", False) for s, e in holds]
    if end is not None:
        silences.append(LabelledSilence(end[0], end[1], "end", False))
    length_ms = end[1] if end is not None else 2500.0
    return LabelledTurn(
        id=f"{source}-1",
        source=source,
        speaker="JFK",
        split="dev",
        audio=np.zeros(round(length_ms * RATE / 1000), dtype=np.float32),
        silences=tuple(silences),
        words=words,
        speech_start_ms=300.0,
        real_until_ms=length_ms,
        condition=condition,
        open_because="" if end is not None else "another speaker talks over its end",
    )


def replied(at_ms: float, sent_ms: float = 2480.0, text: str = "ask not what your country can do for you") -> CallLog:
    log = CallLog(audible_end_sent_ms=sent_ms, stopped=[(at_ms - 50.0, 1)], first_audio={1: at_ms})
    log.transcripts[1] = text
    return log


# --- a row as a call --------------------------------------------------------------------------------------


def test_a_row_is_played_whole_with_its_audible_end_at_its_end_silence() -> None:
    u = as_call(row())
    assert u.audible_end_ms == 2500.0  # the end silence's start, though the audio runs 4 s past it
    assert u.duration_ms == pytest.approx(6500.0)
    assert u.pauses == ((1000.0, 1600.0),)
    assert u.source == "human" and u.text == "ask not what your country can do for you"


def test_an_open_rows_audible_end_is_its_end() -> None:
    assert as_call(row(end=None)).audible_end_ms == pytest.approx(2500.0)


# --- one row scored ---------------------------------------------------------------------------------------


def test_reply_audio_inside_a_hold_is_a_cut_off_of_a_paused_turn_with_no_latency() -> None:
    c = HumanCall.of(row(), replied(1400.0))
    assert c.paused and c.cut_off
    assert c.latency_ms is None and not c.no_reply
    assert c.outcome.where == "pause 1"
    assert c.word_errors is None  # a cut-off's transcript is not the turn's


def test_a_reply_after_the_audible_end_is_the_latency_at_the_true_end() -> None:
    c = HumanCall.of(row(), replied(2800.0))
    assert not c.cut_off
    assert c.latency_ms == pytest.approx(320.0)  # last audible frame sent (2480) -> first reply audio (2800)
    assert c.answered == "ask not what your country can do for you"
    assert c.word_errors == (0, 9)


def test_an_open_row_is_never_scored_for_latency_but_can_be_cut_off() -> None:
    after = HumanCall.of(row(end=None), replied(3300.0, sent_ms=2480.0))
    assert not after.cut_off and after.latency_ms is None and not after.no_reply
    inside = HumanCall.of(row(end=None), replied(1300.0, sent_ms=2480.0))
    assert inside.cut_off and inside.paused


def test_an_ended_row_with_no_reply_is_counted_apart() -> None:
    log = CallLog(audible_end_sent_ms=2480.0, stopped=[(2900.0, 1)], timed_out=True)
    c = HumanCall.of(row(), log)
    assert c.no_reply and not c.cut_off and c.latency_ms is None


def test_a_short_hold_cut_off_counts_among_all_cut_offs_not_the_paused_rate() -> None:
    c = HumanCall.of(row(holds=((1000.0, 1200.0),)), replied(1100.0))
    assert c.cut_off and not c.paused


# --- a set's figures --------------------------------------------------------------------------------------


def calls(condition: str, latencies: list[float], cut: int) -> list[HumanCall]:
    out = [HumanCall.of(row(condition=condition), replied(2480.0 + lat)) for lat in latencies]
    return out + [HumanCall.of(row(condition=condition), replied(1300.0)) for _ in range(cut)]


def test_summary_counts_the_paused_turns_cut_offs_and_latency_over_the_rest() -> None:
    unpaused = HumanCall.of(row(holds=()), replied(2780.0))  # no pause: in the latency, not in the rate
    s = summary([*calls("clean", [200.0, 400.0], cut=1), unpaused])
    assert (s["turns"], s["paused"], s["paused_cut_offs"], s["cut_offs"], s["ended"]) == (4, 3, 1, 1, 4)
    assert s["paused_cut_off_rate"] == pytest.approx(0.3333)
    assert s["latency_ms"]["n"] == 3 and s["latency_ms"]["p50"] == pytest.approx(300.0)
    assert s["latency_ms"]["mean"] == pytest.approx(300.0)
    assert s["no_reply"] == 0 and s["word_error_rate"] == 0.0
    table = format_table("dev, clean", calls("clean", [200.0], cut=1))
    assert "1/2 (50.0%)" in table and table.splitlines()[-1].lstrip().startswith("all")


def test_telephone_minus_clean_in_points_and_ms_against_the_target() -> None:
    clean = summary(calls("clean", [200.0, 300.0, 400.0], cut=1))
    phone = summary(calls("telephone+noise", [260.0, 360.0, 460.0], cut=1))
    diff = difference(phone, clean)
    assert diff["points"] == 0.0 and diff["p50_ms"] == pytest.approx(60.0)
    assert diff["within"] is False  # 60 ms is more than 50
    near = difference(summary(calls("telephone", [230.0, 330.0, 430.0], cut=1)), clean)
    assert near["within"] is True
    assert difference(summary([]), clean)["within"] is None


def test_a_test_scoring_is_a_line_of_the_seals_log() -> None:
    line = log_line(
        log_row("current", summary(calls("clean", [200.0, 300.0], cut=1))),
        mode="live human (clean)",
        commit="abc1234",
        asr="real",
        load=0,
        breath=None,
    )
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1:8] == ["abc1234", "live human (clean)", "current", "real", "0", "3", "33.3% (1/3)"]
    assert cells[8] == "33.3% (1/3)"  # the paused turns in the thinking column


# --- the options ------------------------------------------------------------------------------------------


def checked(*argv: str) -> argparse.Namespace:
    args = build_parser().parse_args(list(argv))

    def error(message: str) -> None:
        raise SystemExit(message)

    check_arguments(args, error)
    return args


def test_human_rows_are_live_only_under_known_conditions() -> None:
    assert checked("--live", "--human", "--split", "dev").condition == "clean,telephone+noise"
    with pytest.raises(SystemExit, match="live run"):
        checked("--human", "--split", "dev")
    with pytest.raises(SystemExit, match="unknown phone"):
        checked("--live", "--human", "--condition", "clean,phone")
    with pytest.raises(SystemExit, match="--plot: for the synthetic sets only"):
        checked("--live", "--human", "--plot", "/tmp/x.png")
