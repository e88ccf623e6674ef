"""The offline end-of-turn run (``bench/end_of_turn.py`` without ``--live``): every policy over the sets in audio
time, one utterance at a time through ``pipeline``, while ``sets`` makes the rest in the background; then the
tables or JSON, the plot, and the test log's line. It changes only with how the offline run goes and what it prints.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from agent.wiring import build_detector_factory
from bench.progress import progress
from bench.turns.corpus import Utterance
from bench.turns.delays import Delays
from bench.turns.models import Transcriber, TurnScorer
from bench.turns.pipeline import run_utterance
from bench.turns.policies import Policy, acoustic_on
from bench.turns.report import (
    PolicyResult,
    SetResult,
    format_cutoffs,
    format_groups,
    format_summary,
    format_table,
    result_json,
    stats,
    summary_rows,
)
from bench.turns.seal import LOG, append, run_note, test_log_lines
from bench.turns.sentences import Split
from bench.turns.sets import make_sets, save_wav


async def run_policies(
    policies: Sequence[Policy], sets: dict[Split, list[Future[Utterance]]], latency: int | Delays
) -> tuple[list[PolicyResult], Transcriber, TurnScorer]:
    transcriber, scorer = Transcriber(), TurnScorer()
    results: list[PolicyResult] = []
    try:
        for policy in policies:
            if acoustic_on(policy.settings):
                scorer.load(policy.settings)  # a missing model fails here, before anything is run
            new_detector = build_detector_factory(policy.settings)
            result = PolicyResult(policy, {})
            for split, made in sets.items():
                began = time.perf_counter()
                outcomes = []
                for n, future in enumerate(made, 1):
                    u = future.result()
                    delay = latency.for_utterance(u.id) if isinstance(latency, Delays) else latency
                    outcome = await run_utterance(u, policy.settings, new_detector, transcriber, scorer, delay)
                    outcomes.append(outcome)
                    verdict = "CUT OFF" if outcome.cut_off else "no end" if outcome.end_ms is None else "ok"
                    verdict += ", split" if outcome.split else ""
                    progress(f"policy {policy.name} {split}: utterance {n}/{len(made)} {u.category}: {verdict}")
                result.sets[split] = SetResult(split, outcomes, time.perf_counter() - began)
            results.append(result)
    finally:
        transcriber.close()
    return results, transcriber, scorer


async def run_offline(args: argparse.Namespace, policies: list[Policy]) -> int:
    """Run ``policies`` on the sets ``args`` chooses and print what they did (the exit status: 0)."""
    started = time.perf_counter()
    with ThreadPoolExecutor(1, thread_name_prefix="eot-corpus") as pool:
        made = make_sets(args, pool)
        if args.save_wav is not None:
            save_wav(args.save_wav, {s: [f.result() for f in fs] for s, fs in made.items()})
        latency = Delays.load(args.asr_latency) if args.asr_latency is not None else args.asr_latency_ms
        asr = latency.describe() if isinstance(latency, Delays) else f"ASR latency {args.asr_latency_ms} ms"
        results, transcriber, scorer = await run_policies(policies, made, latency)
    sets = {s: [f.result() for f in fs] for s, fs in made.items()}
    seconds = sum(u.duration_ms for us in sets.values() for u in us) / 1000
    sizes = ", ".join(f"{s} {len(us)}" for s, us in sets.items())
    progress(
        f"{sizes} utterances ({seconds:.0f} s of audio); ASR: {transcriber.runs} transcriptions in "
        f"{transcriber.seconds:.1f} s, {transcriber.reused} reused; total {time.perf_counter() - started:.1f} s"
    )
    if scorer.runs:
        cost = stats([1000 * x for x in scorer.seconds])
        progress(
            f"acoustic turn model: {scorer.runs} calls, {scorer.reused} reused; per call p50 {cost['p50']} ms, "
            f"p95 {cost['p95']} ms, max {cost['max']} ms (wall clock, this machine)"
        )
    noise = args.noise_dbfs if args.noise_dbfs < 0 else None
    if args.plot is not None:
        from bench.turns.plot import plot  # matplotlib only when asked

        title = f"end of turn: {sizes} utterances, {asr}"
        plot(summary_rows(results), args.plot, title)
        progress(f"wrote {args.plot}")
    if args.json:
        document = {
            "utterances": {s: len(us) for s, us in sets.items()},
            "asr_latency_ms": args.asr_latency_ms,
            "asr_latency_file": None if args.asr_latency is None else str(args.asr_latency),
            "dev_noise_dbfs": noise,
            "policies": {r.policy.name: result_json(r) for r in results},
        }
        print(json.dumps(document, indent=2))
    else:
        blocks = [
            format_table(r) + "\n" + format_groups(r) + ("\n" + format_cutoffs(r) if args.list_cutoffs else "")
            for r in results
        ]
        print(
            f"end of turn: {sizes} utterances; thresholds are chosen on dev, test is only scored; {asr} "
            f"(audio time); dev noise {'none' if noise is None else f'white {noise:g} dBFS'}"
            ", test room noise 20-35 dB SNR\n"
        )
        print("\n\n".join([*blocks, format_summary(results)]))
    asr_cell = f"{args.asr_latency.name}" if args.asr_latency is not None else f"{args.asr_latency_ms} ms"
    log = test_log_lines(results, mode="offline", asr=asr_cell, load=0, note=run_note(args))
    append(log)
    if log:
        progress(f"appended {len(log)} line(s) to {LOG}")
    return 0
