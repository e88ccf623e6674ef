"""Capacity benchmark: N concurrent callers over real WebSockets, each taking turns with the server.

    python bench/load.py --mode real --callers 1,4,10 --turns 3          # the local models, in-process
    python bench/load.py --mode instant --callers 100,300,500 --server-process --server-cpus 0 --client-cpus 1
    python bench/load.py --mode instant --callers 50 --json > load.json
    python bench/load.py --mode real --callers 10 --stagger-ms 1500 --idle 20   # 20 silent sessions beside
    python bench/load.py --mode real --callers 10 --arrive-within-ms 15000 --seed 1   # arriving at random

Each caller opens its own session and says short sentences (made with the bundled Piper voice at start-up,
not the ones ``bench/latency.py`` tunes against), streamed in 20 ms frames at real-time pace. After each
sentence it keeps sending silence until its reply is done and would have finished playing (a polite caller
who listens to the whole answer), then speaks again. Caller ``i`` starts ``i × --stagger-ms`` after the
first and says the sentences from its own starting point, so the callers do not speak in lockstep; with
``--arrive-within-ms W`` the callers start at random over W ms instead (uniform, seeded by ``--seed``), as
callers do: some nearly together, some alone.

``--idle N`` opens N more sessions before each level that send ``session.start`` and then nothing at all (a
page left open, a socket held by someone who never speaks), keeps them open through the level and reports how
many were refused or closed by the server meanwhile: admission counts work, so they must cost the callers
nothing.

For each number of callers (a "level", run one after the other against one server) it reports, at the
caller: voice-to-voice (last audible frame sent → first reply audio received) p50/p95/max, turns answered
(reply audio heard) out of turns spoken, refusals (HTTP 503 at the upgrade) and other failures; at the
server: RSS at the start and end of the level (``/proc/<pid>/status``) and event-loop lag (a task that
sleeps 10 ms and records how late it wakes: p50/p99/max), and what the turn models cost in compute per 100 ms
of the callers' audio (``bench/load_compute.py``: Smart Turn and the text model from the server's per-model
CPU counts, each second; Silero, which runs inline on every frame, measured apart in this process).

Where the server runs:

- default: in this process (``running_server`` on 127.0.0.1, port 0), sharing the event loop and the CPUs
  with the callers; the RSS and the loop lag include the callers' own work.
- ``--server-process``: in a child process (this script with ``--serve-only``), optionally pinned with
  ``--server-cpus`` while the callers are pinned with ``--client-cpus``, so the server's CPU, RSS and loop
  lag are its own. This is how to measure "N sessions on one core".
- ``--server-url ws://127.0.0.1:PORT/ws``: a server you started yourself (loopback only); RSS with
  ``--server-pid``, no loop lag.

Modes: ``real`` = the bundled local models, loaded by ``agent.wiring.build_components`` from the settings
(environment ``AGENT_*``) exactly as ``make run`` does; ``instant`` = ``bench/latency.py``'s stand-ins (a
fixed transcript at once, one 100 ms tone per sentence at once, the real webrtc VAD and offline responder).
Progress goes to stderr, the table (or ``--json``) to stdout. Every wait is bounded (``--turn-timeout``,
``--time-limit``), so the run always ends by itself. Exit status 1 if a turn went unanswered, a caller
was refused or failed, or the time limit cut a level short.

This module changes only with the run and its command line and table; the callers are ``bench/load_callers.py``,
the server under test and the lag probe ``bench/load_servers.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.runtime.server.event_loop import loop_factory, loop_name, run
from bench.latency_sets import RATE, caller_speech
from bench.load_callers import Level, run_level
from bench.load_compute import silero_ms_per_100ms
from bench.load_servers import ChildServer, ExternalServer, InProcessServer, pin, serve_only, server_settings

# Short sentences (about 1-2 s) that no tuning run used: the held-out set of this benchmark.
SENTENCES: tuple[str, ...] = (
    "Do you deliver on Sundays?",
    "Where can I park my car?",
    "I lost my credit card.",
    "Can I pay by check?",
    "Is the museum open today?",
    "My internet is very slow.",
    "I want to speak to a manager.",
    "How long is the warranty?",
    "Please send me the receipt.",
    "Can I bring my dog inside?",
    "What is your return policy?",
    "The heating in my room is broken.",
)


# --- pure helpers -------------------------------------------------------------------------------------


def parse_counts(text: str) -> list[int]:
    counts = [int(x) for x in text.split(",") if x.strip()]
    if not counts or any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError("a comma-separated list of positive numbers, e.g. 1,4,10")
    return counts


def parse_cpus(text: str) -> set[int]:
    try:
        cpus = {int(x) for x in text.split(",") if x.strip()}
    except ValueError as exc:
        raise argparse.ArgumentTypeError("a comma-separated list of CPU numbers, e.g. 0 or 1,2") from exc
    if not cpus:
        raise argparse.ArgumentTypeError("name at least one CPU")
    return cpus


def loopback_url(url: str) -> str:
    parts = urlsplit(url)
    host = (parts.hostname or "").strip("[]")
    if parts.scheme != "ws":
        raise argparse.ArgumentTypeError("use a ws:// URL (loopback only)")
    try:
        local = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = False
    if not local:
        raise argparse.ArgumentTypeError(f"{host!r} is not a loopback address: this benchmark runs on loopback only")
    return url


# --- reporting ------------------------------------------------------------------------------------


def _cell(value: Any, width: int, fmt: str = ".0f") -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}{fmt}}"


def format_table(levels: Sequence[Level], header: str) -> str:
    lines = [
        header,
        f"{'callers':>7}{'peak':>6}{'refused':>8}{'failed':>7}{'answered':>11}"
        f"{'v2v p50':>9}{'v2v p95':>9}{'v2v max':>9}{'RSS MB start->end':>19}"
        f"{'lag p50':>9}{'lag p99':>9}{'lag max':>9}{'client lag p99':>16}{'pace min':>9}{'load 1m':>13}{'time s':>8}"
        f"{'turn CPU p95':>13}{'mean':>6}",
    ]
    for lv in levels:
        s = lv.summary()
        v2v, lag = s["client_voice_to_voice_ms"], s["server_loop_lag_ms"] or {}
        rss = f"{_cell(s['server_rss_mb']['start'], 0)}->{_cell(s['server_rss_mb']['end'], 0)}"
        load = f"{lv.load_start[0]:.2f}->{lv.load_end[0]:.2f}"
        compute = s["turn_model_compute_ms_per_100ms"] or {}
        lines.append(
            f"{lv.callers:>7}{lv.peak_sessions:>6}{lv.refused:>8}{lv.failed + lv.cut:>7}"
            f"{f'{lv.answered}/{lv.spoken}':>11}"
            f"{_cell(v2v['p50'], 9)}{_cell(v2v['p95'], 9)}{_cell(v2v['max'], 9)}{rss:>19}"
            f"{_cell(lag.get('p50'), 9, '.1f')}{_cell(lag.get('p99'), 9, '.1f')}{_cell(lag.get('max'), 9, '.1f')}"
            f"{_cell(lv.client_lag_ms.get('p99'), 16, '.1f')}{_cell(s['client_pace']['min'], 9, '.2f')}"
            f"{load:>13}{lv.elapsed_s:>8.0f}"
            f"{_cell(compute.get('p95'), 13, '.1f')}{_cell(compute.get('mean'), 6, '.1f')}"
        )
    lines.append(
        "v2v = caller-side voice-to-voice in ms (last audible frame sent -> first reply audio received); "
        "answered = turns whose reply audio arrived / turns spoken by admitted callers; failed includes "
        "callers cut by the time limit; lag = server event-loop oversleep of a 10 ms sleep, ms; pace min = the "
        "slowest caller's audio sent per second in the call (1.00 = real time; lower: the callers' CPU fell behind); "
        "turn CPU = ms of compute of Smart Turn and the text model per 100 ms of the callers' audio, p95 over the "
        "level's seconds and its mean (budget: 20 ms at p95 with Silero)."
    )
    for lv in levels:
        extra = [f"{k} {v}" for k, v in (("split turns", lv.split), ("timed-out waits", lv.timed_out)) if v]
        extra += [f"error messages {lv.errors}"] if lv.errors else []
        if lv.idle_open or lv.idle_refused:
            extra.append(
                f"idle sessions beside them: {lv.idle_open} open, {lv.idle_refused} refused, "
                f"{lv.idle_closed} closed by the server during the level"
            )
        summary = lv.summary()
        gaps, stages = summary["reply_gaps"], summary["server_stages_ms"]
        if gaps["total_ms"]:
            extra.append(
                f"replies with a gap: {gaps['turns']} (the audio ran dry {gaps['total_ms']:.0f} ms in all, "
                f"{gaps['max_ms']:.0f} at most in one)"
            )
        if any(v["n"] for v in stages.values()):
            extra.append(
                "server stages p50/p95 ms: "
                + ", ".join(
                    f"{k.removesuffix('_ms')} {_cell(v['p50'], 0)}/{_cell(v['p95'], 0)}" for k, v in stages.items()
                )
            )
        if lv.model_cpu_s:
            extra.append("model CPU s: " + ", ".join(f"{m} {c:.1f}" for m, c in sorted(lv.model_cpu_s.items())))
        if lv.arrivals_s and len({round(b - a, 3) for a, b in itertools.pairwise(lv.arrivals_s)}) > 1:
            extra.append("arrived at " + ", ".join(f"{a:.1f}" for a in lv.arrivals_s) + " s")
        extra += lv.failures[:3]
        if extra:
            lines.append(f"  x{lv.callers}: " + "; ".join(extra))
    return "\n".join(lines)


# --- main ----------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/load.py",
        description=(
            "Capacity benchmark: N concurrent callers over real WebSockets (loopback), each saying short "
            "sentences at real-time pace and listening to the whole reply before speaking again. Reports "
            "caller-side voice-to-voice p50/p95, turns answered, 503 refusals, server RSS and event-loop lag "
            "per number of callers."
        ),
        epilog=(
            "Examples: '--mode real --callers 1,4,10 --turns 3' (local models, in-process server); "
            "'--mode instant --callers 100,300,500 --server-process --server-cpus 0 --client-cpus 1' "
            "(the server alone on one core). Separately: start a server with '--serve-only --mode instant "
            "--port 8765 --max-sessions 600 --server-cpus 0' (it serves until Ctrl-C, or until its stdin closes "
            "when that is a pipe) and drive it with '--server-url ws://127.0.0.1:8765/ws --server-pid PID "
            "--client-cpus 1'."
        ),
    )
    parser.add_argument("--mode", choices=("real", "instant"), default="instant", help="default: instant")
    parser.add_argument(
        "--callers", type=parse_counts, default=[1, 4, 10], help="concurrent callers per level, e.g. 1,4,10 (default)"
    )
    parser.add_argument("--turns", type=int, default=3, help="sentences each caller says (default: 3)")
    parser.add_argument(
        "--idle",
        type=int,
        default=0,
        help="sessions opened before each level that start and then send nothing, kept open beside the callers "
        "(default: 0)",
    )
    parser.add_argument(
        "--stagger-ms", type=float, default=20.0, help="delay between one caller's start and the next (default: 20)"
    )
    parser.add_argument(
        "--arrive-within-ms",
        type=float,
        help="start the callers at random over this long instead of every --stagger-ms (uniform, sorted)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of --arrive-within-ms's arrivals (default: 1)")
    parser.add_argument(
        "--gap", type=float, default=1.0, help="least silence after each sentence, seconds (default: 1.0)"
    )
    parser.add_argument(
        "--turn-timeout", type=float, default=30.0, help="give up waiting for one reply after this (s, default 30)"
    )
    parser.add_argument(
        "--time-limit", type=float, default=1800.0, help="stop the whole run after this many seconds (default 1800)"
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        help="the server's session limit (AGENT_SERVER__MAX_SESSIONS); default: the setting for real mode, "
        "the largest --callers for instant mode",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--server-process", action="store_true", help="run the server in a child process (its own CPU, RSS, loop)"
    )
    where.add_argument("--server-url", type=loopback_url, help="drive a server that is already running (loopback)")
    where.add_argument(
        "--serve-only",
        action="store_true",
        help="only serve (print a JSON line with the URL when ready; answer 'stats' lines on stdin); ends when "
        "stdin closes (if a pipe), on SIGINT/SIGTERM or after --time-limit",
    )
    parser.add_argument("--server-pid", type=int, help="with --server-url: read that process's RSS")
    parser.add_argument("--port", type=int, default=0, help="--serve-only: port to listen on (default: any free)")
    parser.add_argument("--server-cpus", type=parse_cpus, help="pin the server to these CPUs, e.g. 0")
    parser.add_argument("--client-cpus", type=parse_cpus, help="pin the callers to these CPUs, e.g. 1")
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="event loop of the callers and of a server this script starts (default auto: uvloop when installed, "
        "as the server's AGENT_SERVER__EVENT_LOOP)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable results instead of the table")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the server's INFO log on stderr")
    return parser


async def amain(args: argparse.Namespace) -> int:
    run_started = time.perf_counter()
    pin(args.client_cpus, "callers")
    speech = [caller_speech(text) for text in SENTENCES]
    seconds = [len(s) / 2 / RATE for s in speech]
    print(
        f"made {len(speech)} sentences with Piper in {time.perf_counter() - run_started:.1f} s "
        f"({min(seconds):.1f}-{max(seconds):.1f} s each)",
        file=sys.stderr,
    )
    if args.server_url:
        server: Any = ExternalServer(args)
    elif args.server_process:
        server = ChildServer(args)
    else:
        pin(args.server_cpus, "server and callers")
        server = InProcessServer(args)
    levels: list[Level] = []
    async with server:
        print(f"[{args.mode}] server ready at {server.url} ({server.description})", file=sys.stderr)
        for n in args.callers:
            left = args.time_limit - (time.perf_counter() - run_started)
            if left < 5:
                print(f"[{args.mode}] time limit reached; skipping {n} callers and beyond", file=sys.stderr)
                break
            levels.append(await run_level(n, server, speech, args, left))
            await asyncio.sleep(1.0)
        description, max_sessions = server.description, server.max_sessions
    arriving = (
        f"arriving at random over {args.arrive_within_ms:g} ms (seed {args.seed})"
        if args.arrive_within_ms is not None
        else f"stagger: {args.stagger_ms:g} ms"
    )
    vad = server_settings(args).vad
    silero_on = args.mode == "real" and (vad.backend == "silero" or vad.confirm != "off")
    silero = silero_ms_per_100ms(b"".join(speech)) if silero_on else None
    header = (
        f"mode: {args.mode}   server: {description}   max sessions: {max_sessions or '-'}   turns per caller: "
        f"{args.turns}   {arriving}   loop: {loop_name(loop_factory(args.loop))}   CPUs: {os.cpu_count()}"
        + ("" if silero is None else f"\nSilero (second speech detector, every frame): {silero:.2f} ms per 100 ms")
    )
    if args.json:
        doc = {
            "mode": args.mode,
            "server": description,
            "max_sessions": max_sessions,
            "turns_per_caller": args.turns,
            "stagger_ms": args.stagger_ms,
            "arrive_within_ms": args.arrive_within_ms,
            "seed": args.seed,
            "silero_ms_per_100ms": None if silero is None else round(silero, 3),
            "loop": loop_name(loop_factory(args.loop)),
            "cpus": os.cpu_count(),
            "levels": [lv.summary() for lv in levels],
        }
        print(json.dumps(doc, indent=2))
    else:
        print(format_table(levels, header))
    bad = len(levels) < len(args.callers) or any(lv.unanswered or lv.refused or lv.failed or lv.cut for lv in levels)
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    if args.server_pid and not args.server_url:
        parser.error("--server-pid goes with --server-url")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    print(f"event loop: {loop_name(loop_factory(args.loop))}", file=sys.stderr)
    if args.serve_only:
        return run(serve_only(args), args.loop)
    return run(amain(args), args.loop)


if __name__ == "__main__":
    sys.exit(main())
