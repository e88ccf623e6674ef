"""``bench/end_of_turn.py --live --human``: the human turn sets (docs/turn-sets.md) played through a real server
over a socket, in real time, one call per row. It changes when how a live human run is driven or printed changes.

    python bench/end_of_turn.py --live --human --split dev --condition clean --limit 6     # a quick look
    python bench/end_of_turn.py --live --human --split dev                                  # clean and telephone+noise
    python bench/end_of_turn.py --live --human --split dev --load 4 --list-cutoffs         # 4 other callers talking
    python bench/end_of_turn.py --live --human --split test                                 # sealed: committed, logged
    python bench/end_of_turn.py --live --human --split test --pipecat                       # and Pipecat, side by side

**The rows**: ``human_sets.human_turns`` per split and condition (``--condition``, default ``clean,telephone+noise``;
``--languages`` for the Debian prompts; ``--limit N``: the first N rows, the same rows in every condition), all
built before the first call. The test split needs the seal (``human_split.unseal_test``: one committed policy)
and each of its scorings is appended to docs/eot-test-log.md, one line per condition; dev is not logged.

**The calls** (``live.call``, the server of ``server``: ``python -m agent`` per policy, or ``--url``; ``--load N``
other callers): one call per row, one at a time, the conditions of a row one after another (so each condition
meets the same load over the run); the row's audio from its start in 20 ms frames paced by the wall clock, then
silence, until the reply has begun after the audible end and its ``turn.metrics`` came (or ``--reply-timeout``).
Scored by ``live_human``; tables per split and condition, then each condition minus clean.

**Side by side** (``--pipecat``): our servers and then a Pipecat 1.14 bot with its default turn strategy
(``pipecat_human``) get the same rows, all of them on the same language-model emulator; the tables gain the bot's,
and a line per split and condition says whether ours has fewer cut-offs and a lower p50, both (the issue's target).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

from bench.progress import progress
from bench.turns import live_human, seal
from bench.turns.delays import Delays
from bench.turns.human_conditions import CONDITIONS
from bench.turns.human_sources import CACHE
from bench.turns.human_split import Unsealed
from bench.turns.human_turn import LabelledTurn
from bench.turns.live import call
from bench.turns.live_human import HumanCall
from bench.turns.live_score import CallLog
from bench.turns.policies import Policy
from bench.turns.sentences import Split
from bench.turns.server import ChildServer, RunningServer, load_speech, other_caller

Rows = dict[Split, dict[str, list[LabelledTurn]]]
"""Split -> condition -> rows (the same rows, in the same order, in every condition)."""
Calls = dict[Split, dict[str, list[HumanCall]]]

SYNTHETIC_ONLY = ("engine", "save_wav", "plot")
PIPECAT_PYTHON = Path(__file__).resolve().parents[2] / ".venv-pipecat" / "bin" / "python"
PIPECAT = "pipecat"
"""The name of the Pipecat bot's results, beside the policies'."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    human = parser.add_argument_group("human rows, live (--live --human; docs/turn-sets.md)")
    human.add_argument(
        "--human",
        action="store_true",
        help="with --live: play the recorded human turn sets instead of the synthetic ones, one call per row; "
        "scored: cut-offs among turns with a pause >= 300 ms, all cut-offs, latency at the true ends",
    )
    human.add_argument(
        "--condition",
        default="clean,telephone+noise",
        metavar="NAME[,NAME...]",
        help=f"--human: the rows under these conditions, of {', '.join(CONDITIONS)} (default clean,telephone+noise)",
    )
    human.add_argument(
        "--pipecat",
        action="store_true",
        help="--human: also play the rows to a Pipecat 1.14 bot with its default turn strategy (Silero and Smart "
        "Turn v3 alone; bench/pipecat/bot.py in .venv-pipecat, made by `python bench/pipecat_side_by_side.py "
        "--setup`), same caller, models and language-model emulator (given to our server too), after our runs",
    )
    human.add_argument(
        "--human-cache", type=Path, default=CACHE, metavar="DIR", help=f"--human: the sets' downloads (default {CACHE})"
    )


def conditions(args: argparse.Namespace) -> list[str]:
    return [c.strip() for c in args.condition.split(",") if c.strip()]


def check_arguments(args: argparse.Namespace, error: Callable[[str], Any]) -> None:
    """Refuse what a human run cannot do (``error``: ``parser.error``)."""
    if not args.human:
        return
    if not args.live:
        error(
            "--human is a live run (--live --human); the field's offline method on these rows: "
            "python -m bench.turns.field_run"
        )
    named = conditions(args)
    unknown = [c for c in named if c not in CONDITIONS]
    if unknown or not named:
        error(f"--condition: unknown {', '.join(unknown) or '(none given)'}; the conditions: {', '.join(CONDITIONS)}")
    if args.pipecat and args.url:
        error("--pipecat starts both servers itself; not with --url")
    if args.pipecat and not PIPECAT_PYTHON.exists():
        error(f"--pipecat: {PIPECAT_PYTHON} not found: run `python bench/pipecat_side_by_side.py --setup` first")
    used = [f"--{name.replace('_', '-')}" for name in SYNTHETIC_ONLY if getattr(args, name)]
    if used:
        error(f"{', '.join(used)}: for the synthetic sets only, not with --human")


def load_rows(args: argparse.Namespace, error: Callable[[str], Any]) -> tuple[Rows, Unsealed | None]:
    """Every row of the run, built before any call; the test split through the seal."""
    from bench.turns.human_sets import human_turns  # the sets' build (numpy, soundfile, the VAD) only when asked
    from bench.turns.human_split import unseal_test

    splits: list[Split] = ["dev", "test"] if args.split == "both" else [args.split]
    unsealed = unseal_test(args, error) if "test" in splits else None
    languages = [c.strip() for c in args.languages.split(",") if c.strip()]
    rows: Rows = {}
    for split in splits:
        rows[split] = {}
        for condition in conditions(args):
            got = human_turns(split, condition, unsealed=unsealed, cache_dir=args.human_cache, languages=languages)
            rows[split][condition] = got[: args.limit]
    return rows, unsealed


async def run_policy(policy: Policy, rows: Rows, speech: list[bytes], args: argparse.Namespace) -> Calls:
    calls: Calls = {split: {c: [] for c in by} for split, by in rows.items()}
    server = RunningServer(args.url) if args.url else ChildServer(policy)
    async with server:
        counts = {"turns": 0, "answered": 0, "failed": 0}
        others = [asyncio.create_task(other_caller(server.url, i, speech, counts)) for i in range(args.load)]
        if others:
            progress(f"policy {policy.name}: {args.load} other callers talking; first scored call in 5 s")
            await asyncio.sleep(5.0)
        try:
            for split, by in rows.items():
                total = len(next(iter(by.values())))
                for n in range(total):
                    for condition, turns in by.items():
                        turn = turns[n]
                        played = live_human.as_call(turn)
                        scored = HumanCall.of(turn, await call(server.url, played, args.reply_timeout), played)
                        errors = scored.outcome.log.errors
                        if errors and errors[0].startswith("session.start"):
                            progress(
                                f"policy {policy.name} {split}: {turn.id} ({turn.language}) refused, not scored: "
                                f"{errors[0]}"
                            )
                            continue
                        calls[split][condition].append(scored)
                        progress(
                            f"policy {policy.name} {split} {condition}: row {n + 1}/{total} {turn.id}: "
                            f"{scored.verdict()}"
                        )
        finally:
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
        if args.load:
            progress(f"policy {policy.name}: other callers {counts}")
    return calls


async def run_side_by_side(
    policies: Sequence[Policy], rows: Rows, speech: list[bytes], args: argparse.Namespace
) -> dict[str, Calls]:
    """Our policies, then the Pipecat bot, on the same rows, every server on the same language-model emulator."""
    from bench.pipecat_side_by_side import ReplyEmulator
    from bench.remote_backends import LLM_MODEL

    async with ReplyEmulator() as llm:
        ours = {"AGENT_LLM__BACKEND": "openai", "AGENT_LLM__BASE_URL": llm.base_url, "AGENT_LLM__MODEL": LLM_MODEL}
        with mock.patch.dict(os.environ, ours):  # the child servers' environment
            results = {policy.name: await run_policy(policy, rows, speech, args) for policy in policies}
        results[PIPECAT] = await run_pipecat(rows, llm.base_url, args)
    return results


async def run_pipecat(rows: Rows, llm_url: str, args: argparse.Namespace) -> Calls:
    """Every row to the Pipecat bot in one session, in the order ours were called."""
    from bench.turns.pipecat_human import play_to_bot

    order = [
        (split, condition, turns[n])
        for split, by in rows.items()
        for n in range(len(next(iter(by.values()))))
        for condition, turns in by.items()
    ]
    played = [live_human.as_call(turn) for _, _, turn in order]
    calls: Calls = {split: {c: [] for c in by} for split, by in rows.items()}

    def scored(i: int, log: CallLog) -> None:
        split, condition, turn = order[i]
        call = HumanCall.of(turn, log, played[i])
        calls[split][condition].append(call)
        progress(f"{PIPECAT} {split} {condition}: row {i + 1}/{len(order)} {turn.id}: {call.verdict()}")

    progress(f"{PIPECAT}: starting the bot ({PIPECAT_PYTHON})")
    await play_to_bot(played, llm_url, str(PIPECAT_PYTHON), args.reply_timeout, scored)
    return calls


def side_by_side(results: dict[str, Calls]) -> list[str]:
    """Per split and condition, each policy against the Pipecat bot: the issue's target is fewer cut-offs (turns
    with a pause >= 300 ms) and a lower p50, both."""
    if PIPECAT not in results:
        return []
    lines = ["side by side with Pipecat's default turn strategy (target: fewer cut-offs and a lower p50, both):"]
    for name, calls in results.items():
        if name == PIPECAT:
            continue
        for split, by in calls.items():
            for condition, got in by.items():
                ours = live_human.summary(got)
                theirs = live_human.summary(results[PIPECAT][split][condition])
                fewer = (ours["paused_cut_off_rate"] or 0) < (theirs["paused_cut_off_rate"] or 0)
                p50, their_p50 = ours["latency_ms"]["p50"], theirs["latency_ms"]["p50"]
                lower = p50 is not None and their_p50 is not None and p50 < their_p50
                lines.append(
                    f"  {name} vs {PIPECAT}, {split} {condition}: cut off {ours['paused_cut_offs']}/{ours['paused']} "
                    f"vs {theirs['paused_cut_offs']}/{theirs['paused']}, p50 {p50} vs {their_p50} ms: "
                    f"{'met' if fewer and lower else 'NOT met'}"
                )
    return lines


def report(results: dict[str, Calls], args: argparse.Namespace) -> str:
    """The tables: per policy, split and condition; then each condition minus clean."""
    blocks = []
    for name, calls in results.items():
        for split, by in calls.items():
            lines = [
                live_human.format_table(f"policy {name}, human {split}, {condition}, load {args.load}:", got)
                for condition, got in by.items()
            ]
            if "clean" in by:
                clean = live_human.summary(by["clean"])
                lines += [
                    live_human.format_difference(c, live_human.difference(live_human.summary(got), clean))
                    for c, got in by.items()
                    if c != "clean"
                ]
            if args.list_cutoffs:
                lines += ["  cut off or not answered:", *(live_human.format_cutoffs(got) for got in by.values())]
            blocks.append("\n".join(lines))
    return "\n\n".join([*blocks, *(["\n".join(sbs)] if (sbs := side_by_side(results)) else [])])


def as_json(results: dict[str, Calls], args: argparse.Namespace, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": "live human", "server": where, "load": args.load, "policies": {}}
    for name, calls in results.items():
        per: dict[str, Any] = {}
        for split, by in calls.items():
            clean = live_human.summary(by["clean"]) if "clean" in by else None
            for condition, got in by.items():
                s = live_human.summary(got)
                per[f"{split}/{condition}"] = {
                    **s,
                    "minus_clean": None if clean is None or condition == "clean" else live_human.difference(s, clean),
                    "rows": [c.as_json() for c in got],
                }
        out["policies"][name] = per
    return out


def test_log_lines(results: dict[str, Calls], args: argparse.Namespace, commit: str) -> list[str]:
    """One line per policy and condition of the test split, for docs/eot-test-log.md."""
    notes = ["thinking = turns with a pause >= 300 ms", *(["smoke"] if args.limit is not None else [])]
    notes += [f"languages {args.languages}"] if args.languages != "en" else []
    lines = []
    for name, calls in results.items():
        by = calls.get("test", {})
        clean = live_human.summary(by["clean"]) if "clean" in by else None
        for condition, got in by.items():
            s = live_human.summary(got)
            extra = []
            if clean is not None and condition != "clean":
                diff = live_human.difference(s, clean)
                extra = [f"minus clean: {diff['points']} points, p50 {diff['p50_ms']} ms, p95 {diff['p95_ms']} ms"]
            row = live_human.log_row(name, s)
            note = ", ".join([*notes, *extra])
            mode = f"live human ({condition})"
            lines.append(
                seal.log_line(row, mode=mode, commit=commit, asr="real", load=args.load, breath=None, note=note)
            )
    return lines


async def run_human(args: argparse.Namespace, policies: Sequence[Policy], rows: Rows, unsealed: Unsealed | None) -> int:
    started = time.perf_counter()
    speech = load_speech(args.load) if args.load else []
    if args.pipecat:
        results = await run_side_by_side(policies, rows, speech, args)
        where = "python -m agent (one per policy) and a Pipecat 1.14 bot, both on the emulated model"
    else:
        results = {policy.name: await run_policy(policy, rows, speech, args) for policy in policies}
        where = args.url or "python -m agent (one per policy)"
    sizes = ", ".join(f"{split} {len(next(iter(by.values())))} rows x {len(by)}" for split, by in rows.items())
    progress(
        f"human {sizes} calls per policy against {where}, load {args.load}; total {time.perf_counter() - started:.0f} s"
    )
    if args.save_latency is not None:
        metrics = [
            m
            for calls in results.values()
            for by in calls.values()
            for got in by.values()
            for c in got
            for m in c.outcome.log.metrics
        ]
        Delays.from_metrics(metrics).save(args.save_latency)
        progress(f"wrote {args.save_latency}")
    if args.json:
        print(json.dumps(as_json(results, args, where), indent=2))
    else:
        print(
            f"end of turn, live, human rows: {sizes} against {where}, in real time, load {args.load}; a cut-off = "
            "reply audio before the audible end (the start of the end silence); latency = last audible frame sent "
            "-> first reply audio received, over ended rows not cut off\n"
        )
        print(report(results, args))
    if unsealed is not None:
        lines = test_log_lines(results, args, unsealed.commit)
        seal.append(lines)
        progress(f"appended {len(lines)} line(s) to {seal.LOG}")
    return 0
