"""The field's method on the human turn sets: ``python -m bench.turns.field_run``. Changes only with what a run
scores and prints (the sets, the systems, the output).

    python -m bench.turns.field_run --split dev                       # four systems, clean and telephone+noise
    python -m bench.turns.field_run --split dev --condition band8k --systems smart-turn,current --plot out.png
    python -m bench.turns.field_run --split test                      # sealed: committed code only, logged

Each row of ``human_sets`` is scored by each system at every labelled silence (``field_scores``); each system's
settings are swept (``field.sweep``; silence alone on its own finer grid) and the four figures and the frontier
printed beside the published ones (``field_report``), per condition. The test split goes through the seal of
``seal`` (the current policy only; every scoring appended to docs/eot-test-log.md). Progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.config import Settings
from agent.wiring import build_detector_factory
from bench.progress import progress
from bench.turns import field, field_report, field_scores
from bench.turns.field_scores import SYSTEMS, Scored
from bench.turns.human_conditions import CONDITIONS
from bench.turns.human_sources import CACHE
from bench.turns.human_turn import LabelledTurn
from bench.turns.models import Transcriber, TurnScorer
from bench.turns.sentences import Split


def _list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--split", choices=("dev", "test", "both"), default="dev", help="test is sealed (see seal.py)")
    p.add_argument(
        "--condition",
        default="clean,telephone+noise",
        help=f"comma-separated, of {', '.join(CONDITIONS)} (default clean,telephone+noise)",
    )
    p.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}")
    p.add_argument("--languages", default="en", help="the Debian prompts' languages (en,es,fr,it,ru); default en")
    p.add_argument(
        "--latency-ms", type=int, default=0, help="the current policy's models answer this late (audio ms; default 0)"
    )
    p.add_argument("--cache", type=Path, default=CACHE, help=f"the human sets' download folder (default {CACHE})")
    p.add_argument("--plot", type=Path, help="write the Pareto picture of the first split and condition here (PNG)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead of tables")
    return p


async def score(
    rows: Sequence[LabelledTurn], systems: Sequence[str], settings: Settings, latency_ms: int
) -> tuple[Scored, dict[str, float]]:
    """Every row scored by each system (``silence`` needs no scores: the labelled silences alone)."""
    transcriber, scorer = Transcriber(), TurnScorer()
    detector = build_detector_factory(settings) if "current" in systems else None
    scored = Scored.empty(systems)
    seconds = dict.fromkeys(systems, 0.0)
    for i, row in enumerate(rows, 1):
        progress(f"field: row {i}/{len(rows)} ({row.id}, {row.condition})")
        for system in systems:
            started = time.perf_counter()
            if system == "silence":
                silences = [field.ScoredSilence(field_scores.silence_of(row, s)) for s in row.silences]
            elif system == "smart-turn":
                silences = await asyncio.to_thread(field_scores.acoustic, row, settings, scorer)
            elif system == "text":
                silences = await field_scores.textual(row, settings, transcriber, scorer)
            else:
                assert detector is not None
                silences = await field_scores.current(row, settings, detector, transcriber, scorer, latency_ms)
            scored.add(system, silences)
            seconds[system] += time.perf_counter() - started
    transcriber.close()
    return scored, seconds


AS_CONFIGURED = field.Setting(0.5, 0.0, field_scores.HORIZON_MS + 1000.0)
"""The current policy with nothing added: it acts when it fires (an end it never fires waits out the row)."""


def as_configured(scored: Scored) -> field.Figures | None:
    """What the server's own end of turn does at each silence, as configured (no delay or wait of the sweep's)."""
    silences = scored.by_system.get("current")
    return field.figures(AS_CONFIGURED, silences) if silences else None


def configured_line(f: field.Figures) -> str:
    return (
        f"current, as configured: false cut-offs {f.cut_off_rate:.1%} ({f.cut_offs}/{f.holds} holds of 200 ms-5 s); "
        f"latency at the true end mean {f.mean_latency_ms:.0f} / p50 {f.p50_latency_ms:.0f} / p95 "
        f"{f.p95_latency_ms:.0f} ms ({f.ends} ends)"
    )


def figures(scored: Scored) -> tuple[dict[str, field.FourFigures], dict[str, list[field.Figures]]]:
    """The four figures and the frontier of each system."""
    fours: dict[str, field.FourFigures] = {}
    fronts: dict[str, list[field.Figures]] = {}
    for system, silences in scored.by_system.items():
        swept = field.silence_alone([s.silence for s in silences]) if system == "silence" else field.sweep(silences)
        fours[system] = field.four_figures(swept)
        fronts[system] = field.frontier(swept)
    return fours, fronts


def _rows(split: Split, condition: str, args: argparse.Namespace, unsealed: Any) -> list[LabelledTurn]:
    from bench.turns.human_sets import human_turns

    return human_turns(split, condition, unsealed=unsealed, cache_dir=args.cache, languages=_list(args.languages))


def _log_test(
    fours: dict[str, field.FourFigures],
    condition: str,
    holds: int,
    ends: int,
    commit: str,
    configured: field.Figures | None,
) -> None:
    """One line per system in docs/eot-test-log.md for a scoring of the human test split (the seal's rule)."""
    import datetime

    from bench.turns import seal

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
    lines = []
    for system, four in fours.items():
        cells = field_report.cells(four.values())
        extra = f"; {configured_line(configured)}" if system == "current" and configured is not None else ""
        lines.append(
            f"| {when} | {commit} | field ({condition}) | {system} | as configured | 0 | {holds} holds, {ends} ends | "
            f"{cells[0]} @ 300 ms, {cells[1]} @ 600 ms | – | – | {cells[2]} @ 5 % | {cells[3]} @ 10 % | – | "
            "eot-bench method on the human test rows: cut-offs at a latency budget, mean latency at a cut-off "
            f"budget{extra} |"
        )
    seal.append(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    systems = _list(args.systems)
    conditions = _list(args.condition)
    for name in systems:
        if name not in SYSTEMS:
            p.error(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
    for name in conditions:
        if name not in CONDITIONS:
            p.error(f"unknown condition {name!r}; choose from {', '.join(CONDITIONS)}")
    splits: list[Split] = ["dev", "test"] if args.split == "both" else [args.split]
    unsealed = None
    if "test" in splits:
        from bench.turns.human_split import unseal_test

        args.policy, args.only = [], None  # the seal's fields: one policy, the one in the code
        unsealed = unseal_test(args, p.error)
    settings = Settings()
    out: dict[str, Any] = {}
    plotted = False
    for split in splits:
        for condition in conditions:
            rows = _rows(split, condition, args, unsealed)
            scored, seconds = asyncio.run(score(rows, systems, settings, args.latency_ms))
            fours, fronts = figures(scored)
            holds = sum(len(r.holds) for r in rows)
            ends = sum(1 for r in rows if r.ended)
            data = f"human {split}, {condition} ({len(rows)} turns, {holds} holds, {ends} ends)"
            configured = as_configured(scored)
            out[f"{split}/{condition}"] = {
                "data": data,
                "figures": {s: list(f.values()) for s, f in fours.items()},
                "as_configured": None if configured is None else configured_line(configured),
                "scoring_s": {s: round(v, 1) for s, v in seconds.items()},
            }
            if not args.json:
                print(f"\n## {data}\n")
                print(field_report.table(fours, f"{split}, {condition}"))
                print()
                print(field_report.settings_table(fours))
                if configured is not None:
                    print(f"\n{configured_line(configured)}")
            if args.plot is not None and not plotted:
                silence = fronts.pop("silence", [])
                field_report.plot(fronts, args.plot, title=f"end of turn on {data}", silence=silence)
                plotted = True
            if split == "test" and unsealed is not None:
                _log_test(fours, condition, holds, ends, unsealed.commit, configured)
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
