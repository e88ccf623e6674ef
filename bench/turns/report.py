"""The end-of-turn bench's results (per set, per policy, per category), their figures (false cut-offs, splits, latency,
WER) and their tables and JSON: changes only with what a run reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bench.stats import summarize as figures
from bench.turns.corpus import Utterance
from bench.turns.policies import Policy
from bench.turns.sentences import CATEGORIES, PAUSED, Split

# --- results ------------------------------------------------------------------------------------------


class Scored(Protocol):
    """What the tables read of one utterance's result: ``pipeline.Outcome`` offline,
    ``live_score.LiveOutcome`` live."""

    @property
    def utterance(self) -> Utterance: ...
    @property
    def ends(self) -> Sequence[float]: ...
    @property
    def end_ms(self) -> float | None: ...
    @property
    def cut_off(self) -> bool: ...
    @property
    def split(self) -> bool: ...
    @property
    def latency_ms(self) -> float | None: ...
    @property
    def answered(self) -> str | None: ...
    @property
    def transcripts(self) -> list[str]: ...
    @property
    def scores(self) -> list[tuple[int, float]]: ...
    @property
    def where(self) -> str: ...
    def as_json(self) -> dict[str, Any]: ...


@dataclass(slots=True)
class SetResult:
    split: Split
    outcomes: Sequence[Scored]
    elapsed_s: float


@dataclass(slots=True)
class PolicyResult:
    policy: Policy
    sets: dict[Split, SetResult]


def stats(values: Sequence[float]) -> dict[str, float | int | None]:
    """``n``, ``p50``, ``p95`` and ``max`` of ``values`` (``bench.stats.summarize`` without the mean)."""
    return figures(values, mean=False)


FILLERS = frozenset(["um", "uh", "umm", "uhm", "hmm", "er", "erm"])


def _words(text: str) -> list[str]:
    return [w for w in re.sub(r"[^\w' ]+|_", " ", text.lower()).split() if w not in FILLERS]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(substitutions + deletions + insertions, reference words), fillers left out of both sides."""
    ref, hyp = _words(reference), _words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (word != other))
    return row[-1], len(ref)


def summary(outcomes: Sequence[Scored]) -> dict[str, Any]:
    """The metrics of a group of utterances (see the module doc)."""
    cut = sum(o.cut_off for o in outcomes)
    errors = [
        word_errors(o.utterance.text, o.answered)
        for o in outcomes
        if not o.cut_off and o.answered is not None and o.utterance.text.strip()  # recordings with no transcript
    ]
    words = sum(n for _, n in errors)
    return {
        "utterances": len(outcomes),
        "cut_offs": cut,
        "cut_off_rate": round(cut / len(outcomes), 4) if outcomes else None,
        "splits": sum(o.split for o in outcomes),
        "no_end": sum(o.end_ms is None for o in outcomes),
        "latency_ms": stats([lat for o in outcomes if (lat := o.latency_ms) is not None]),
        "word_error_rate": round(sum(e for e, _ in errors) / words, 4) if words else None,
    }


def summarize(outcomes: Sequence[Scored]) -> dict[str, Any]:
    """``summary`` of all the utterances, of each category, and of the paused ones (breath and thinking, where
    splits count)."""
    by_category = {c: [o for o in outcomes if o.utterance.category == c] for c in CATEGORIES}
    return {
        "all": summary(outcomes),
        "paused": summary([o for o in outcomes if o.utterance.category in PAUSED]),
        "categories": {c: summary(group) for c, group in by_category.items() if group},
    }


def _pct(count: int, total: int) -> str:
    return f"{count} ({100 * count / total:.1f}%)" if total else "-"


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _ms(value: float | int | None, width: int = 6) -> str:
    return f"{'-' if value is None else f'{value:.0f}':>{width}}"


_CELL = f"{'n':>4} {'false cut-offs':<15}{'splits':>7}{'p50':>6}{'p95':>6}{'WER':>7}"
_CELL_WIDTH = len(_CELL)


def _cell(s: dict[str, Any] | None) -> str:
    if s is None:
        return " " * _CELL_WIDTH
    lat = s["latency_ms"]
    return (
        f"{s['utterances']:>4} {_pct(s['cut_offs'], s['utterances']):<15}{s['splits']:>7}"
        f"{_ms(lat['p50'])}{_ms(lat['p95'])}{_rate(s['word_error_rate']):>7}"
    )


def format_table(result: PolicyResult) -> str:
    """One policy: a row per category (and all), one block of columns per set, side by side."""
    overrides = json.dumps(result.policy.overrides) if result.policy.overrides else "(none)"
    splits = list(result.sets)
    sums = {s: summarize(result.sets[s].outcomes) for s in splits}
    elapsed = ", ".join(f"{s} {result.sets[s].elapsed_s:.1f} s" for s in splits)
    lines = [
        f"policy {result.policy.name}: {result.policy.describe()}",
        f"  overrides: {overrides}   run: {elapsed}",
        f"  {'':<10}" + "   ".join(f"{f' {s} ':-^{_CELL_WIDTH}}" for s in splits),
        f"  {'category':<10}" + "   ".join(_CELL for _ in splits),
    ]
    for name in [*CATEGORIES, "all"]:
        cells = [sums[s]["all"] if name == "all" else sums[s]["categories"].get(name) for s in splits]
        if any(cells):
            lines.append(f"  {name:<10}" + "   ".join(_cell(c) for c in cells))
    lines.append("  latency ms: audible end -> end of turn, over utterances not cut off; splits: > 1 turn")
    return "\n".join(lines)


def format_cutoffs(result: PolicyResult) -> str:
    lines = [f"policy {result.policy.name}: false cut-offs, splits and turns with no end"]
    for s in result.sets.values():
        for o in s.outcomes:
            if o.cut_off or o.split or o.end_ms is None:
                u = o.utterance
                heard = " / ".join(repr(t) for t in o.transcripts) or "-"
                if o.scores:
                    heard += "  sound: " + ", ".join(f"{p:.2f}@{at}" for at, p in o.scores)
                words = getattr(o, "words", [])
                if words:
                    heard += "  words: " + ", ".join("-" if p is None else f"{p:.3f}@{at}" for at, p in words)
                lines.append(
                    f"  {u.id} {u.category:<9} {u.voice:<24} ended {o.ends or 'never'} ms ({o.where}; audible end "
                    f"{u.audible_end_ms:.0f} ms; {u.noise})  {u.text!r}  heard: {heard}"
                )
    return "\n".join(lines)


def format_groups(result: PolicyResult) -> str:
    """Rows by ``source`` (human, synthetic) and by ``language``, one block of columns per set, side by side
    (the per-category table's cells)."""
    splits = list(result.sets)
    lines = [f"  {'':<10}" + "   ".join(f"{f' {s} ':-^{_CELL_WIDTH}}" for s in splits)]
    lines.append(f"  {'group':<10}" + "   ".join(_CELL for _ in splits))
    for key in ("source", "language"):
        values = sorted({getattr(o.utterance, key) for s in splits for o in result.sets[s].outcomes})
        for value in values:
            cells = []
            for s in splits:
                group = [o for o in result.sets[s].outcomes if getattr(o.utterance, key) == value]
                cells.append(_cell(summary(group)) if group else " " * _CELL_WIDTH)
            lines.append(f"  {f'{value}':<10}" + "   ".join(cells))
    return "\n".join(lines)


def groups_json(outcomes: Sequence[Scored]) -> dict[str, Any]:
    """``summary`` by source and by language."""
    out: dict[str, Any] = {}
    for key in ("source", "language"):
        values = sorted({getattr(o.utterance, key) for o in outcomes})
        out[key] = {v: summary([o for o in outcomes if getattr(o.utterance, key) == v]) for v in values}
    return out


def summary_rows(results: Sequence[PolicyResult]) -> list[dict[str, Any]]:
    """One row per policy per set: the numbers of the summary table and the plot."""
    rows = []
    for r in results:
        for split, s in r.sets.items():
            sums = summarize(s.outcomes)
            every, paused = sums["all"], sums["paused"]
            thinking = sums["categories"].get("thinking")
            short = sums["categories"].get("short")
            rows.append(
                {
                    "policy": r.policy.name,
                    "split": split,
                    "utterances": every["utterances"],
                    "cut_offs": every["cut_offs"],
                    "cut_off_rate": every["cut_off_rate"],
                    "splits": paused["splits"],
                    "paused": paused["utterances"],
                    "thinking_cut_offs": thinking["cut_offs"] if thinking else None,
                    "thinking": thinking["utterances"] if thinking else 0,
                    "latency_ms": every["latency_ms"],
                    "short_latency_ms": short["latency_ms"] if short else stats([]),
                    "no_end": every["no_end"],
                    "word_error_rate": every["word_error_rate"],
                }
            )
    return rows


def format_summary(results: Sequence[PolicyResult]) -> str:
    lines = [
        "summary: false cut-offs at each policy's latency (audible end -> end of turn, over turns not cut off); "
        "splits over breath + thinking; WER of the transcripts turns were answered with, fillers left out",
        f"  {'policy':<16}{'set':<6}{'false cut-offs':<16}{'splits':>8}{'thinking':>10}"
        f"{'latency p50':>13}{'p95':>6}{'max':>6}{'short p50':>11}{'p95':>6}{'no end':>8}{'WER':>7}",
    ]
    for row in summary_rows(results):
        lat, short = row["latency_ms"], row["short_latency_ms"]
        thinking = f"{row['thinking_cut_offs']}/{row['thinking']}" if row["thinking"] else "-"
        lines.append(
            f"  {row['policy']:<16}{row['split']:<6}{_pct(row['cut_offs'], row['utterances']):<16}"
            f"{row['splits']:>4}/{row['paused']:<3}{thinking:>10}{_ms(lat['p50'], 13)}{_ms(lat['p95'])}"
            f"{_ms(lat['max'])}{_ms(short['p50'], 11)}{_ms(short['p95'])}{row['no_end']:>8}"
            f"{_rate(row['word_error_rate']):>7}"
        )
    return "\n".join(lines)


def result_json(result: PolicyResult) -> dict[str, Any]:
    settings = result.policy.settings
    return {
        "overrides": result.policy.overrides,
        "settings": {"vad": settings.vad.model_dump(), "turn": settings.turn.model_dump(mode="json")},
        "sets": {
            split: {
                "elapsed_s": round(s.elapsed_s, 2),
                **summarize(s.outcomes),
                "utterances": [o.as_json() for o in s.outcomes],
            }
            for split, s in result.sets.items()
        },
    }
