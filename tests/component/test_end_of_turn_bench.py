"""The end-of-turn bench's arithmetic and its effect loop (bench/turns/), without any model.

The effect loop runs the real VAD front end and session core on made-up audio (a tone for speech), with a loud-
frame detector, and fakes of the transcriber and the acoustic turn model that answer fixed values.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.audio.pcm import float_to_pcm16
from agent.config import Settings
from bench.turns.command import build_parser
from bench.turns.corpus import Utterance
from bench.turns.models import Transcriber, TurnScorer
from bench.turns.pipeline import Outcome, run_utterance
from bench.turns.policies import DEFAULT_POLICIES, Policy, parse_policy, select_policies, with_overrides
from bench.turns.report import (
    PolicyResult,
    SetResult,
    format_summary,
    format_table,
    summarize,
    summary,
    summary_rows,
    word_errors,
)
from bench.turns.sentences import CATEGORIES, Category, Split
from bench.turns.voices import RATE


def utterance(
    category: Category = "long", audible_end_ms: float = 1000.0, text: str = "one two three four", split: Split = "dev"
) -> Utterance:
    return Utterance("u1", split, category, text, "voice", "none", b"", 300.0, audible_end_ms, ())


def test_an_end_before_the_audible_end_is_a_false_cut_off_and_a_second_end_a_split() -> None:
    cut = Outcome(utterance(), ends=[800, 1500])
    assert cut.cut_off and cut.split and cut.latency_ms is None and cut.end_ms == 800
    ok = Outcome(utterance(), ends=[1320])
    assert not ok.cut_off and not ok.split and ok.latency_ms == pytest.approx(320)
    never = Outcome(utterance())
    assert not never.cut_off and never.end_ms is None and never.latency_ms is None and never.where == "no end"
    at_once = Outcome(utterance(), ends=[1000])
    assert not at_once.cut_off and at_once.latency_ms == 0


def test_summary_counts_rates_latency_and_the_wer_of_the_answered_transcript() -> None:
    outcomes = [
        Outcome(utterance(), ends=[1300], answered="One, two, three, four."),
        Outcome(utterance(), ends=[1500], answered="one two tree"),  # 1 substitution + 1 deletion
        Outcome(utterance(), ends=[900, 1800], answered="one two"),  # cut off: no latency, no WER
        Outcome(utterance()),  # no end
    ]
    s = summary(outcomes)
    assert s["utterances"] == 4
    assert s["cut_offs"] == 1 and s["cut_off_rate"] == 0.25
    assert s["splits"] == 1 and s["no_end"] == 1
    assert s["latency_ms"]["n"] == 2
    assert s["latency_ms"]["p50"] == pytest.approx(400)
    assert s["latency_ms"]["max"] == pytest.approx(500)
    assert s["word_error_rate"] == pytest.approx(2 / 8)
    empty = summary([])
    assert empty["cut_off_rate"] is None and empty["latency_ms"]["p50"] is None and empty["word_error_rate"] is None


def test_word_errors_leave_fillers_and_punctuation_out() -> None:
    assert word_errors("I was thinking um maybe", "I was, uh, thinking maybe.") == (0, 4)
    assert word_errors("It's four hundred", "It's 400.") == (2, 3)
    assert word_errors("a b c", "") == (3, 3)
    assert word_errors("", "extra words") == (2, 0)


def test_summarize_groups_by_category_and_counts_splits_over_the_paused_ones() -> None:
    outcomes = [
        Outcome(utterance("breath"), ends=[800, 1400]),
        Outcome(utterance("thinking"), ends=[700, 1500]),
        Outcome(utterance("short"), ends=[900, 1300]),  # cut off and split, but not a paused category
        Outcome(utterance("question"), ends=[1300]),
    ]
    s = summarize(outcomes)
    assert s["all"]["splits"] == 3
    assert s["paused"]["splits"] == 2 and s["paused"]["utterances"] == 2
    assert set(s["categories"]) == {"breath", "thinking", "short", "question"}
    assert s["categories"]["question"]["cut_offs"] == 0


def result(name: str = "current") -> PolicyResult:
    policy = Policy(name, {}, Settings())
    dev = [Outcome(utterance(c), ends=[1300], answered="one two three four") for c in CATEGORIES]
    test = [Outcome(utterance(c, split="test"), ends=[700, 1400], answered="x") for c in CATEGORIES]
    return PolicyResult(policy, {"dev": SetResult("dev", dev, 1.0), "test": SetResult("test", test, 1.0)})


def test_tables_put_dev_and_test_side_by_side_and_summarise_each_policy_on_each_set() -> None:
    table = format_table(result())
    assert " dev " in table and " test " in table
    row = next(line for line in table.splitlines() if line.strip().startswith("thinking"))
    assert "0 (0.0%)" in row and "1 (100.0%)" in row  # dev clean, test cut off, on one line
    results = [result("current"), result("text_only")]
    rows = summary_rows(results)
    assert [(r["policy"], r["split"]) for r in rows] == [
        ("current", "dev"),
        ("current", "test"),
        ("text_only", "dev"),
        ("text_only", "test"),
    ]
    assert rows[1]["cut_off_rate"] == 1.0 and rows[1]["splits"] == 2 and rows[1]["paused"] == 2
    lines = format_summary(results).splitlines()
    assert len([line for line in lines if line.strip().startswith(("current", "text_only"))]) == 4


def test_the_plot_is_a_png() -> None:
    pytest.importorskip("matplotlib")
    from bench.turns.plot import plot

    path = Path(__import__("tempfile").mkdtemp()) / "eot.png"
    plot(summary_rows([result("current"), result("text_only")]), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_default_policies_are_valid_settings_and_names_are_checked() -> None:
    args = build_parser().parse_args([])
    assert args.split == "both"
    errors: list[str] = []
    policies = select_policies(args, Settings(), errors.append)
    assert not errors and [p.name for p in policies] == list(DEFAULT_POLICIES)
    assert all(p.describe() for p in policies)
    args = build_parser().parse_args(["--only", "current,nope"])
    with pytest.raises(SystemExit):
        select_policies(args, Settings(), build_parser().error)
    with pytest.raises(ValueError, match="unknown field"):
        with_overrides(Settings(), {"turn": {"acustic": "off"}})
    with pytest.raises(argparse.ArgumentTypeError):
        parse_policy("nojson")
    assert parse_policy('x={"turn":{"acoustic":"off"}}') == ("x", {"turn": {"acoustic": "off"}})


def test_help_says_dev_is_tuned_on_and_test_only_scored() -> None:
    import bench.turns as bench

    text = " ".join(build_parser().format_help().split())
    assert "Thresholds and rules are chosen on dev; test is only scored" in text
    assert "a change that moves a threshold reports dev and test side by side" in text
    doc = " ".join((bench.__doc__ or "").split())
    assert "Thresholds and rules are chosen on the ``dev`` set" in doc and "only ever scored" in doc
    assert "A change that moves a threshold or a rule reports dev and test side by side" in doc


# --- the effect loop, with fakes of the models ---------------------------------------------------------


class LoudFrames:
    """A speech detector that hears any frame louder than -40 dBFS."""

    frame_samples = 320

    def speech_probability(self, frame: bytes) -> float:
        x = np.frombuffer(frame, np.int16).astype(np.float64) / 32768
        return 1.0 if np.sqrt(np.mean(x * x)) > 0.01 else 0.0

    def reset(self) -> None:
        pass


class FixedTranscriber(Transcriber):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.answer = text
        self.asked: list[int] = []

    async def text(self, settings: Settings, pcm: bytes, over_agent: bool = False) -> str:
        self.asked.append(len(pcm))
        return self.answer


class FixedScorer(TurnScorer):
    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p
        self.asked = 0

    def probability(self, settings: Settings, pcm: bytes) -> float:
        self.asked += 1
        return self.p


def spoken(parts_ms: list[int], pause_ms: int) -> Utterance:
    """Tone "speech" parts joined by ``pause_ms`` of silence, 300 ms before and 2 s after."""
    ms = RATE // 1000

    def tone(n: int) -> np.ndarray:
        return 0.3 * np.sin(2 * np.pi * 220 * np.arange(n * ms) / RATE)

    pieces, spans, at = [np.zeros(300 * ms)], [], 300
    for i, n in enumerate(parts_ms):
        if i:
            pieces.append(np.zeros(pause_ms * ms))
            at += pause_ms
        pieces.append(tone(n))
        spans.append((at, at + n))
        at += n
    pieces.append(np.zeros(2000 * ms))
    pcm = float_to_pcm16(np.concatenate(pieces).astype(np.float32))
    pauses = tuple((a[1], b[0]) for a, b in itertools.pairwise(spans))
    return Utterance("u", "dev", "thinking", "one two three four", "tone", "none", pcm, 300, spans[-1][1], pauses)


def settings(**turn: Any) -> Settings:
    base = {"fragment_words": 3, "fragment_numbers": True, "fragment_ms": 700, "hangover_min_ms": 320}
    return with_overrides(
        Settings(),
        # tones, not speech: no second detector (Silero would hear no speech in them, and each pause go on)
        {
            "turn": {"speculative_ms": 120, **base, **turn},
            "vad": {"backend": "webrtc", "hangover_ms": 420, "confirm": "off"},
        },
    )


async def test_a_finished_sounding_transcript_ends_the_turn_in_a_long_pause_and_the_rest_is_a_second_turn() -> None:
    u = spoken([1000, 1000], pause_ms=800)
    s = settings(acoustic="off")
    outcome = await run_utterance(u, s, LoudFrames, FixedTranscriber("I'd like the pasta please."), FixedScorer(0.9))
    assert outcome.cut_off and outcome.where == "pause 1"
    assert outcome.split and outcome.ends[-1] >= u.audible_end_ms
    assert outcome.answered == "I'd like the pasta please."
    assert outcome.scores == []  # acoustic off: the core asks for no sound score


async def test_an_unsure_sound_score_holds_the_turn_over_the_pause() -> None:
    u = spoken([1000, 1000], pause_ms=600)
    scorer = FixedScorer(0.1)
    s = settings(acoustic="smart-turn", acoustic_sure=0.8, acoustic_unsure=0.3)
    outcome = await run_utterance(u, s, LoudFrames, FixedTranscriber("I'd like the pasta please."), scorer)
    assert not outcome.cut_off and not outcome.split
    assert scorer.asked >= 2 and all(p == 0.1 for _, p in outcome.scores)
    assert outcome.latency_ms is not None and outcome.latency_ms >= 700


async def test_answers_arrive_late_by_the_latency_asked_for() -> None:
    u = spoken([1000], pause_ms=0)
    s = settings(acoustic="smart-turn", acoustic_sure=0.8)
    text = FixedTranscriber("Please cancel my order.")
    at_once = await run_utterance(u, s, LoudFrames, text, FixedScorer(0.95))
    late = await run_utterance(u, s, LoudFrames, text, FixedScorer(0.95), latency_ms=300)
    assert at_once.latency_ms is not None and late.latency_ms is not None
    assert late.latency_ms > at_once.latency_ms
