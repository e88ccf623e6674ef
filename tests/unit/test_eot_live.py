"""The live end-of-turn bench's scoring (bench/turns/live_score.py), the test set's seal and log line
(bench/turns/seal.py) and the latency distribution (bench/turns/delays.py): pure, no server, no model, no event
loop."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path
from typing import Any

import pytest

from agent.config import Settings
from bench.turns.command import build_parser
from bench.turns.corpus import Utterance
from bench.turns.delays import Delays
from bench.turns.live_score import CallLog, LiveOutcome, frame_of
from bench.turns.policies import Policy
from bench.turns.report import PolicyResult, SetResult, format_groups, groups_json, summary, summary_rows
from bench.turns.seal import HEADER, append, log_line, seal
from bench.turns.sentences import Category, Source
from bench.turns.server import policy_env


def utterance(
    category: Category = "thinking",
    audible_end_ms: float = 2000.0,
    pauses: tuple[tuple[float, float], ...] = ((900.0, 1700.0),),
    source: Source = "synthetic",
    language: str = "en",
) -> Utterance:
    text = "I need eggs milk bread and some butter"
    return Utterance(
        "d001",
        "dev",
        category,
        text,
        "v",
        "none",
        b"",
        300.0,
        audible_end_ms,
        pauses,
        source,
        language,
    )


def sealed(*argv: str) -> argparse.Namespace:
    args = build_parser().parse_args(list(argv))

    def error(message: str) -> None:
        raise SystemExit(message)

    seal(args, error, lambda: [])  # a clean tree (the seal's check of the tree: tests/unit/test_eot_seal.py)
    return args


# --- a call's timeline -----------------------------------------------------------------------------------


def test_a_reply_after_the_audible_end_is_its_latency_and_one_turn_is_no_split() -> None:
    log = CallLog(audible_end_sent_ms=1990.0, stopped=[(2400.0, 1)], first_audio={1: 2450.0})
    log.transcripts[1] = "I need eggs, milk, bread and some butter."
    o = LiveOutcome(utterance(), log)
    assert not o.cut_off and not o.split and o.turns == 1
    assert o.latency_ms == pytest.approx(460.0)
    assert o.end_ms == pytest.approx(2460.0)  # the reply placed on the utterance's own timeline
    assert o.where == "after speech"
    assert o.answered == "I need eggs, milk, bread and some butter."


def test_reply_audio_in_a_pause_is_a_false_cut_off_and_the_rest_a_second_turn() -> None:
    log = CallLog(audible_end_sent_ms=2000.0, stopped=[(1300.0, 1), (2500.0, 2)], first_audio={1: 1350.0, 2: 2600.0})
    log.transcripts.update({1: "I need eggs, milk,", 2: "I need eggs, milk, bread and some butter."})
    o = LiveOutcome(utterance(), log)
    assert o.cut_off and o.split and o.turns == 2
    assert o.latency_ms is None  # over calls not cut off, as offline
    assert o.where == "pause 1"
    assert o.answered == "I need eggs, milk,"  # the words the agent spoke over the caller to
    assert o.ends == [1300.0, 2500.0]


def test_a_split_whose_first_turn_was_never_answered_is_no_cut_off() -> None:
    # turn 1 ended in the pause but its reply never reached the caller (the caller went on); turn 2 answered both
    log = CallLog(audible_end_sent_ms=2000.0, stopped=[(1300.0, 1), (2500.0, 2)], first_audio={2: 2700.0})
    log.transcripts.update({1: "I need eggs, milk,", 2: "I need eggs, milk, bread and some butter."})
    log.continues[2] = 1
    o = LiveOutcome(utterance(), log)
    assert not o.cut_off and o.split and o.latency_ms == pytest.approx(700.0)
    assert o.answered == "I need eggs, milk, bread and some butter."


def test_no_reply_is_no_end_and_a_call_that_ended_early_is_no_latency() -> None:
    silent = LiveOutcome(utterance(), CallLog(audible_end_sent_ms=2000.0, timed_out=True))
    assert silent.end_ms is None and not silent.cut_off and silent.latency_ms is None and silent.where == "no reply"
    early = LiveOutcome(utterance(), CallLog(first_audio={1: 500.0}, stopped=[(450.0, 1)]))
    assert early.cut_off and early.latency_ms is None  # audio came and the audible end was never sent


def test_the_audible_end_is_in_the_frame_that_holds_its_last_sample() -> None:
    assert frame_of(0.0) == 0 and frame_of(20.0) == 0 and frame_of(20.1) == 1 and frame_of(1999.9) == 99


def test_live_outcomes_fill_the_offline_tables_and_the_groups_by_source_and_language() -> None:
    ok = LiveOutcome(
        utterance(), CallLog(2000.0, [(2300.0, 1)], {1: 2400.0}, {1: "I need eggs milk bread and some butter"})
    )
    cut = LiveOutcome(utterance(source="human", language="de"), CallLog(2000.0, [(1200.0, 1)], {1: 1300.0}))
    s = summary([ok, cut])
    assert s["utterances"] == 2 and s["cut_offs"] == 1 and s["latency_ms"]["p50"] == pytest.approx(400.0)
    assert s["word_error_rate"] == 0.0
    result = PolicyResult(
        Policy("current", {}, Settings()),
        {"dev": SetResult("dev", [ok, cut], 1.0)},
    )
    table = format_groups(result)
    assert [line.split()[0] for line in table.splitlines()[2:]] == ["human", "synthetic", "de", "en"]
    groups = groups_json([ok, cut])
    assert groups["source"]["human"]["cut_offs"] == 1 and groups["language"]["en"]["cut_offs"] == 0
    assert summary_rows([result])[0]["thinking_cut_offs"] == 1


def test_a_policy_becomes_the_servers_environment() -> None:
    env = policy_env({"turn": {"acoustic": "off", "hangover_max_ms": 1200, "fragment_numbers": False}})
    assert env == {
        "AGENT_TURN__ACOUSTIC": "off",
        "AGENT_TURN__HANGOVER_MAX_MS": "1200",
        "AGENT_TURN__FRAGMENT_NUMBERS": "false",
    }


# --- the test set's seal ---------------------------------------------------------------------------------


@pytest.mark.parametrize("split", ["test", "both"])
def test_the_test_set_refuses_a_grid_and_ad_hoc_policies(split: str) -> None:
    with pytest.raises(SystemExit, match="one chosen policy"):
        sealed("--split", split, "--only", "current,max1200")
    with pytest.raises(SystemExit, match="--policy"):
        sealed("--split", split, "--policy", 'x={"turn":{"acoustic":"off"}}', "--only", "x")
    with pytest.raises(SystemExit, match="one chosen policy"):
        sealed("--live", "--split", split, "--only", "current,text_only")


def test_the_test_set_runs_the_chosen_policy_or_current_and_dev_runs_a_grid() -> None:
    assert sealed("--split", "test").only == "current"
    assert sealed().only == "current"  # the default, both sets
    assert sealed("--split", "test", "--only", "max1200").only == "max1200"
    grid = sealed("--split", "dev", "--only", "current,max1200", "--policy", 'x={"turn":{"acoustic":"off"}}')
    assert grid.only == "current,max1200"
    assert sealed("--split", "dev").only is None


# --- the log ---------------------------------------------------------------------------------------------


def row(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "policy": "current",
        "split": "test",
        "utterances": 110,
        "cut_offs": 4,
        "thinking": 26,
        "thinking_cut_offs": 3,
        "latency_ms": {"n": 106, "p50": 512.4, "p95": 1490.0, "max": 1600.0},
        "word_error_rate": 0.1234,
    }
    return {**base, **over}


def test_a_log_line_says_when_what_code_how_and_the_numbers() -> None:
    when = datetime.datetime(2026, 12, 5, 8, 30, tzinfo=datetime.UTC)
    line = log_line(
        row(),
        mode="live",
        commit="03eda78-dirty",
        asr="real",
        load=4,
        breath={"splits": 2, "utterances": 20},
        note="smoke",
        when=when,
    )
    assert line == (
        "| 2026-12-05 08:30 | 03eda78-dirty | live | current | real | 4 | 110 | 3.6% (4/110) | 11.5% (3/26) "
        "| 2/20 | 512 | 1490 | 12.3% | smoke |"
    )
    cells = [c.strip() for c in line.strip("|").split("|")]
    header = next(h for h in HEADER.splitlines() if h.startswith("| date"))
    assert len(cells) == len(header.strip("|").split("|"))
    empty = log_line(
        row(thinking=0, thinking_cut_offs=None, word_error_rate=None, latency_ms={"p50": None, "p95": None}),
        mode="offline",
        commit="abc",
        asr="0 ms",
        load=0,
        breath=None,
        when=when,
    )
    assert "| - | - | - | - | - |" in empty


def test_the_log_is_made_with_its_header_and_only_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "log.md"
    append(["| a |"], path)
    append(["| b |", "| c |"], path)
    append([], path)
    assert path.read_text(encoding="utf-8") == HEADER + "| a |\n| b |\n| c |\n"


# --- the latency distribution ------------------------------------------------------------------------------


def test_the_distribution_takes_spec_asr_when_reported_else_awaited_final_transcripts(tmp_path: Path) -> None:
    old: list[dict[str, Any]] = [
        {"asr_ms": 0.0, "speculative_asr": True},
        {"asr_ms": 180.5, "speculative_asr": False},
        {"asr_ms": None, "speculative_asr": False},
    ]
    d = Delays.from_metrics(old)
    assert d.asr_ms == (180.5,) and d.score_ms == () and d.asr_from.startswith("asr_ms")
    new = Delays.from_metrics([*old, {"spec_asr_ms": 90, "score_ms": 25, "tail_ms": 400}])
    assert new.asr_ms == (90.0,) and new.score_ms == (25.0,) and new.asr_from == "spec_asr_ms"
    path = tmp_path / "lat.json"
    d.save(path)
    assert Delays.load(path).asr_ms == (180.5,)
    Delays.from_metrics([{"asr_ms": 0.0, "speculative_asr": True}]).save(path)
    with pytest.raises(ValueError, match="no transcript latency"):
        Delays.load(path)


def test_draws_are_seeded_per_utterance_and_a_score_without_samples_comes_with_its_transcript() -> None:
    d = Delays((100.0, 200.0, 300.0, 400.0))
    a, b = d.for_utterance("d001"), d.for_utterance("d001")
    first = [a("asr") for _ in range(8)]
    assert first == [b("asr") for _ in range(8)]
    assert set(first) <= {100, 200, 300, 400}
    c = d.for_utterance("d002")
    transcript = c("asr")
    assert c("score") == transcript
    with_scores = Delays((100.0,), (7.0,)).for_utterance("x")
    assert with_scores("asr") == 100 and with_scores("score") == 7
