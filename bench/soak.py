"""Soak: a server under steady load for a long time; does its memory, file descriptors and tasks stay put?

    python bench/soak.py --callers 4 --minutes 30                  # the local models, `python -m agent`
    python bench/soak.py --callers 2 --minutes 1 --sample-s 10     # a short look

Starts ``python -m agent`` (the default settings, as ``make run`` does, on a free loopback port) in a child
process and keeps ``--callers`` callers in call for ``--minutes``: each caller opens a call, says
``--turns`` short sentences (bench/load.py's held-out set, made with Piper), listening to each whole reply,
hangs up, and calls again at once, so sessions open and close all the time. Every ``--sample-s`` seconds it
reads the server's ``/metrics``: resident memory, open file descriptors, asyncio tasks, threads, live
sessions. At the end (after the callers have left and the server has seen them go) it prints:

- the samples (a table), the RSS slope in MB/hour by least squares over the samples after ``--warmup-min``
  (the first minutes include the models' first inferences and the allocators reaching their working size),
- the baseline (before the first call) and the final file descriptors, tasks and threads,
- calls made, turns answered/spoken, refusals, and caller-side voice-to-voice p50/p95.

Progress goes to stderr, the report to stdout (or ``--json``). Exit status 1 if a turn went unanswered or
a call failed, if the handles did not come back to the baseline, or if the slope is 1 MB/h or more.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.latency_sets import RATE, caller_speech
from bench.load import SENTENCES
from bench.stats import percentiles
from clients.protocol_client import ConnectFailed, SessionFailed, converse_utterances
from testing.sockets import free_port

ROOT = Path(__file__).resolve().parents[1]
FIGURES = {
    "rss_mb": "process_resident_memory_bytes",
    "fds": "process_open_fds",
    "tasks": "voice_agent_asyncio_tasks",
    "threads": "voice_agent_threads",
    "sessions": "voice_agent_active_sessions",
}
SLOPE_LIMIT_MB_H = 1.0


def read_figures(base: str) -> dict[str, float]:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        text = response.read().decode()
    values: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        for key, metric in FIGURES.items():
            if name == metric:
                values[key] = float(value) / (1 << 20) if key == "rss_mb" else float(value)
    return values


def slope_mb_per_hour(times_s: list[float], rss_mb: list[float]) -> float | None:
    """Least-squares slope of RSS over time, MB per hour (``None`` with fewer than 3 samples)."""
    if len(times_s) < 3:
        return None
    slope_per_s = float(np.polyfit(np.asarray(times_s), np.asarray(rss_mb), 1)[0])
    return slope_per_s * 3600.0


@dataclass
class Tally:
    calls: int = 0
    refused: int = 0
    failed: int = 0
    spoken: int = 0
    answered: int = 0
    v2v_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


async def caller(
    index: int, url: str, speech: list[bytes], args: argparse.Namespace, until: float, tally: Tally
) -> None:
    await asyncio.sleep(index * 0.7)  # arrivals spread a little, as real calls are
    k = index
    while time.monotonic() < until:
        utterances = [speech[(k + j) % len(speech)] for j in range(args.turns)]
        k += args.turns
        try:
            conversation = await converse_utterances(
                url, utterances, RATE, gap_s=1.0, wait_for_playback=True, turn_timeout_s=30.0
            )
        except ConnectFailed as exc:
            status = getattr(getattr(exc.__cause__, "response", None), "status_code", None)
            if status == 503:
                tally.refused += 1
                await asyncio.sleep(1.0)
            else:
                tally.failed += 1
                tally.failures.append(str(exc))
            continue
        except SessionFailed as exc:
            tally.failed += 1
            tally.failures.append(str(exc))
            continue
        tally.calls += 1
        tally.spoken += len(utterances)
        tally.answered += min(len(utterances), sum(1 for t in conversation.turns if t.first_audio_at is not None))
        tally.v2v_ms += [v for t in conversation.turns if (v := t.client_voice_to_voice_ms) is not None]


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode})")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the server did not become ready")


def start_server() -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = dict(os.environ, HF_HUB_OFFLINE="1", AGENT_LOG_LEVEL="WARNING")
    cmd = [sys.executable, "-m", "agent", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sys.stderr), port


async def soak(args: argparse.Namespace, proc: subprocess.Popen[bytes], port: int) -> dict[str, Any]:
    speech = [caller_speech(text) for text in SENTENCES]
    base, url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    samples: list[dict[str, float]] = []
    await asyncio.to_thread(wait_ready, base, proc)
    baseline = await asyncio.to_thread(read_figures, base)
    print(f"server ready (pid {proc.pid}); baseline {json.dumps(baseline)}", file=sys.stderr)
    started = time.monotonic()
    until = started + args.minutes * 60
    tally = Tally()
    callers = [asyncio.create_task(caller(i, url, speech, args, until, tally)) for i in range(args.callers)]
    while time.monotonic() < until:
        await asyncio.sleep(min(args.sample_s, max(0.0, until - time.monotonic())))
        sample = {"t_s": round(time.monotonic() - started, 1), **await asyncio.to_thread(read_figures, base)}
        samples.append(sample)
        print(
            f"{sample['t_s']:7.0f} s: RSS {sample.get('rss_mb', 0):.1f} MB, fds {sample.get('fds', 0):.0f}, "
            f"tasks {sample.get('tasks', 0):.0f}, sessions {sample.get('sessions', 0):.0f}; calls {tally.calls}, "
            f"turns {tally.answered}/{tally.spoken}, refused {tally.refused}, failed {tally.failed}",
            file=sys.stderr,
        )
    await asyncio.gather(*callers)  # each finishes the call it is in
    final: dict[str, float] = {}
    for _ in range(50):  # let the server see the last closes
        final = await asyncio.to_thread(read_figures, base)
        if final.get("sessions") == 0 and final.get("tasks") == baseline.get("tasks"):
            break
        await asyncio.sleep(0.2)
    steady = [s for s in samples if s["t_s"] >= args.warmup_min * 60]
    slope = slope_mb_per_hour([s["t_s"] for s in steady], [s["rss_mb"] for s in steady])
    return {
        "callers": args.callers,
        "minutes": args.minutes,
        "turns_per_call": args.turns,
        "calls": tally.calls,
        "turns_spoken": tally.spoken,
        "turns_answered": tally.answered,
        "refused_503": tally.refused,
        "failed": tally.failed,
        "failures": tally.failures[:5],
        "client_voice_to_voice_ms": percentiles(tally.v2v_ms, (50, 95)),
        "rss_slope_mb_per_h_after_warmup": None if slope is None else round(slope, 2),
        "warmup_min": args.warmup_min,
        "baseline": baseline,
        "final": final,
        "samples": samples,
    }


def report(result: dict[str, Any]) -> str:
    lines = [f"{'t s':>7}{'RSS MB':>9}{'fds':>6}{'tasks':>7}{'threads':>9}{'sessions':>10}"]
    for s in result["samples"]:
        lines.append(
            f"{s['t_s']:>7.0f}{s.get('rss_mb', 0):>9.1f}{s.get('fds', 0):>6.0f}{s.get('tasks', 0):>7.0f}"
            f"{s.get('threads', 0):>9.0f}{s.get('sessions', 0):>10.0f}"
        )
    b, f, v2v = result["baseline"], result["final"], result["client_voice_to_voice_ms"]
    lines += [
        f"callers {result['callers']} for {result['minutes']} min: {result['calls']} calls, turns answered "
        f"{result['turns_answered']}/{result['turns_spoken']}, refused {result['refused_503']}, failed "
        f"{result['failed']}; caller-side voice-to-voice p50 {v2v['p50']} ms, p95 {v2v['p95']} ms",
        f"RSS slope after the first {result['warmup_min']:g} min: {result['rss_slope_mb_per_h_after_warmup']} MB/h "
        f"(limit < {SLOPE_LIMIT_MB_H:g})",
        "baseline -> after the callers left: "
        + ", ".join(f"{k} {b.get(k, 0):.0f} -> {f.get(k, 0):.0f}" for k in ("fds", "tasks", "threads", "sessions"))
        + f", RSS {b.get('rss_mb', 0):.1f} -> {f.get('rss_mb', 0):.1f} MB",
    ]
    return "\n".join(lines)


def verdict(result: dict[str, Any]) -> bool:
    b, f = result["baseline"], result["final"]
    handles = all(f.get(k) == b.get(k) for k in ("fds", "tasks", "threads")) and f.get("sessions") == 0
    slope = result["rss_slope_mb_per_h_after_warmup"]
    answered = result["turns_answered"] == result["turns_spoken"] and not result["failed"]
    return handles and answered and slope is not None and slope < SLOPE_LIMIT_MB_H


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/soak.py",
        description="Soak: callers calling a `python -m agent` server (local models) again and again for a "
        "long time; reports its memory slope and whether file descriptors, tasks and threads come back to "
        "their baseline after the callers leave.",
    )
    parser.add_argument("--callers", type=int, default=4, help="callers in call at once (default 4)")
    parser.add_argument("--minutes", type=float, default=30.0, help="how long (default 30)")
    parser.add_argument("--turns", type=int, default=4, help="sentences per call before hanging up (default 4)")
    parser.add_argument("--sample-s", type=float, default=30.0, help="seconds between /metrics samples")
    parser.add_argument("--warmup-min", type=float, default=5.0, help="minutes left out of the RSS slope (default 5)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.callers < 1 or args.turns < 1 or args.minutes <= 0:
        parser.error("--callers, --turns and --minutes must be positive")
    proc, port = start_server()
    try:
        result = asyncio.run(soak(args, proc, port))
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0 if verdict(result) else 1


if __name__ == "__main__":
    sys.exit(main())
