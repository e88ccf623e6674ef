"""``bench/end_of_turn.py --live``: the end-of-turn sets played through a real server over a socket, in real time.

    python bench/end_of_turn.py --live --split dev --limit 10            # one server (python -m agent), policy current
    python bench/end_of_turn.py --live --split dev --only current,max1200 --plot /tmp/live.png   # a server each
    python bench/end_of_turn.py --live --split test --load 4             # test, with 4 other callers talking
    python bench/end_of_turn.py --live --url ws://127.0.0.1:8765/ws --split dev --save-latency /tmp/asr.json

**The server**: ``python -m agent`` in a child process on a free loopback port, with the environment's settings
(``AGENT_*``, the local models) and the policy's overrides as ``AGENT_SECTION__FIELD`` (one server per policy,
started and stopped in turn); or ``--url``, a server someone started (its own settings: policy ``current`` only).

**A call per utterance**, one at a time: ``session.start`` in the utterance's language, then its audio in 20 ms
frames paced by the wall clock, its trailing silence, and silence on until the reply to the caller's last turn
has begun after the audible end (or ``--reply-timeout`` after it). Then, once the reply's audio is complete, a
``playback.mark`` for all of it (as if played), so its ``turn.metrics`` comes at once, and ``session.end``. What
the caller saw is scored by ``bench/turns/live_score.py``: false cut-offs, splits, latency (last audible frame sent ->
first reply audio received) and the WER of the transcript the reply answered, in the offline mode's tables, plus
rows by source (human, synthetic) and language. ``--load N``: N other callers talk at the same time, each
saying dev utterances in turn in its own calls (not scored), so the numbers at capacity show.

**Measured for the offline mode**: every ``turn.metrics`` of the scored calls; ``--save-latency FILE`` writes
the transcript latency among them (``bench/turns/delays.py``) for ``--asr-latency FILE``. It changes when the way
the live bench drives a server changes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.progress import progress
from bench.turns.corpus import Utterance
from bench.turns.delays import Delays
from bench.turns.live_score import FRAME_MS, CallLog, LiveOutcome, frame_of, verdict
from bench.turns.policies import Policy
from bench.turns.report import (
    PolicyResult,
    SetResult,
    format_cutoffs,
    format_groups,
    format_summary,
    format_table,
    groups_json,
    result_json,
    summary_rows,
)
from bench.turns.seal import LOG, append, run_note, test_log_lines
from bench.turns.sentences import Split
from bench.turns.server import ChildServer, RunningServer, load_speech, open_call, other_caller
from bench.turns.sets import make_sets, save_wav
from bench.turns.voices import RATE
from clients.protocol_client import session_start
from testing.sockets import FrameClock

FRAME_BYTES = RATE * FRAME_MS // 1000 * 2
METRICS_WAIT_S = 8.0
"""After the reply began: how long to wait for its ``turn.metrics`` (the reply synthesized, then marked played)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    live = parser.add_argument_group("live mode (a real server over a socket, in real time)")
    live.add_argument("--live", action="store_true", help="play the sets through a real server, one call each")
    live.add_argument("--url", default=None, metavar="WS_URL", help="use this running server (ws://HOST:PORT/ws)")
    live.add_argument("--load", type=int, default=0, metavar="N", help="N other callers talking meanwhile (default 0)")
    live.add_argument(
        "--reply-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="wait this long after the audible end for a reply before calling it no reply (default 10)",
    )
    live.add_argument(
        "--save-latency",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the transcript latency the server "
        "reported (turn.metrics) as a distribution for the offline --asr-latency FILE",
    )


def check_arguments(args: argparse.Namespace, policies: list[Policy], error: Callable[[str], Any]) -> None:
    if args.load < 0 or args.reply_timeout <= 0:
        error("--load must be >= 0 and --reply-timeout > 0")
    if args.asr_latency_ms:
        error("--asr-latency-ms is for the offline mode: live transcripts take the time they take")
    if args.url is not None and (len(policies) > 1 or policies[0].overrides):
        error("--url: a running server has its own settings; run it with --only current (one policy)")
    if args.only is None:  # live: the configured policy and those added, unless --only names others (a server each)
        added = {name for name, _ in args.policy}
        policies[:] = [p for p in policies if p.name == "current" or p.name in added]


# --- one scored call ----------------------------------------------------------------------------------


async def call(url: str, u: Utterance, reply_timeout_s: float) -> CallLog:
    """Say ``u`` in a call of its own and record what the caller saw (see the module doc)."""
    log = CallLog()
    frames = [u.pcm[i : i + FRAME_BYTES].ljust(FRAME_BYTES, b"\0") for i in range(0, len(u.pcm), FRAME_BYTES)]
    end_frame = frame_of(u.audible_end_ms)
    try:
        ws = await open_call(url)
    except (OSError, TimeoutError, InvalidStatus) as exc:
        log.errors.append(f"connect: {exc}")
        return log
    async with ws:
        started: dict[str, Any] = {}
        try:
            await ws.send(json.dumps(session_start(RATE, language=u.language)))
            while started.get("type") not in ("session.started", "error"):
                message = await asyncio.wait_for(ws.recv(), 30)
                started = json.loads(message) if isinstance(message, str) else {}
        except (TimeoutError, ConnectionClosed) as exc:
            log.errors.append(f"session.start: {type(exc).__name__} {exc}")
            return log
        if started["type"] == "error":
            log.errors.append(f"session.start: {started.get('code')}")
            return log
        bytes_per_ms = int(started.get("output_sample_rate", 24000)) * 2 / 1000
        t0 = time.monotonic()
        state: dict[str, Any] = {"speaking": False, "latest": None, "audio_turn": None}
        caller_turns: set[int] = set()
        audio_bytes: dict[int, int] = {}
        metrics_for: set[int] = set()

        def now_ms() -> float:
            return (time.monotonic() - t0) * 1000

        def replied() -> bool:
            sent, latest = log.audible_end_sent_ms, state["latest"]
            return sent is not None and not state["speaking"] and log.first_audio.get(latest, -1.0) >= sent

        async def receive() -> None:
            async for message in ws:
                at = now_ms()
                turn = state["audio_turn"]
                if isinstance(message, bytes):
                    if turn in caller_turns:
                        log.first_audio.setdefault(turn, at)
                        audio_bytes[turn] = audio_bytes.get(turn, 0) + len(message)
                    continue
                event = json.loads(message)
                kind, turn = event.get("type"), event.get("turn")
                if kind == "speech.started":
                    state["speaking"] = True
                elif kind == "speech.stopped":
                    state["speaking"], state["latest"] = False, turn
                    log.stopped.append((round(at, 1), turn))
                    caller_turns.add(turn)
                elif kind == "transcript":
                    log.transcripts[turn] = event.get("text", "")
                    if event.get("continues") is not None:
                        log.continues[turn] = event["continues"]
                elif kind == "audio.start":
                    state["audio_turn"] = turn
                elif kind == "audio.end" and turn == state["latest"] and replied():
                    played = round(audio_bytes.get(turn, 0) / bytes_per_ms)
                    await ws.send(json.dumps({"type": "playback.mark", "turn": turn, "played_ms": played}))
                elif kind == "turn.metrics":
                    log.metrics.append(event)
                    metrics_for.add(turn)
                elif kind == "error":
                    log.errors.append(str(event.get("code")))
                elif kind == "session.ended":
                    return

        receiver = asyncio.create_task(receive())
        try:
            replied_at: float | None = None
            async for n in FrameClock(FRAME_MS / 1000):
                if receiver.done():
                    break
                await ws.send(frames[n] if n < len(frames) else bytes(FRAME_BYTES))
                if n == end_frame:
                    log.audible_end_sent_ms = round(now_ms(), 1)
                sent = log.audible_end_sent_ms
                if replied_at is None and replied():
                    replied_at = now_ms()
                if replied_at is not None and (
                    state["latest"] in metrics_for or now_ms() - replied_at > METRICS_WAIT_S * 1000
                ):
                    break
                if replied_at is None and sent is not None and now_ms() - sent > reply_timeout_s * 1000:
                    log.timed_out = True
                    break
            with contextlib.suppress(ConnectionClosed):
                await ws.send(json.dumps({"type": "session.end"}))
            with contextlib.suppress(TimeoutError, ConnectionClosed):
                await asyncio.wait_for(asyncio.shield(receiver), 3)
        except ConnectionClosed as exc:
            log.errors.append(f"closed: {exc}")
        finally:
            receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await receiver
    return log


# --- the run --------------------------------------------------------------------------------------------


async def run_policy(
    policy: Policy, sets: dict[Split, list[Utterance]], speech: list[bytes], args: argparse.Namespace
) -> tuple[PolicyResult, dict[str, int]]:
    result = PolicyResult(policy, {})
    counts = {"turns": 0, "answered": 0, "failed": 0}
    server = RunningServer(args.url) if args.url else ChildServer(policy)
    async with server:
        others = [asyncio.create_task(other_caller(server.url, i, speech, counts)) for i in range(args.load)]
        if others:
            progress(f"policy {policy.name}: {args.load} other callers talking; first scored call in 5 s")
            await asyncio.sleep(5.0)
        try:
            for split, utterances in sets.items():
                began, outcomes = time.perf_counter(), []
                for n, u in enumerate(utterances, 1):
                    outcome = LiveOutcome(u, await call(server.url, u, args.reply_timeout))
                    if outcome.log.errors and outcome.log.errors[0].startswith("session.start"):
                        progress(
                            f"policy {policy.name} {split}: call {n} ({u.language}) refused, not scored: "
                            f"{outcome.log.errors[0]} (German needs a multilingual model: AGENT_ASR__MODEL=base)"
                        )
                        continue
                    outcomes.append(outcome)
                    progress(
                        f"policy {policy.name} {split}: call {n}/{len(utterances)} {u.category} {u.source} "
                        f"{u.language}: {verdict(outcome)}"
                    )
                result.sets[split] = SetResult(split, outcomes, time.perf_counter() - began)
        finally:
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
    return result, counts


async def run_live(args: argparse.Namespace, policies: list[Policy]) -> int:
    started = time.perf_counter()
    with ThreadPoolExecutor(1, thread_name_prefix="eot-corpus") as pool:
        made = make_sets(args, pool)
        sets = {s: [f.result() for f in fs] for s, fs in made.items()}  # all made before any call: no CPU taken
    if args.save_wav is not None:
        save_wav(args.save_wav, sets)
    speech = load_speech(args.load) if args.load else []
    results, load_counts = [], {}
    for policy in policies:
        result, counts = await run_policy(policy, sets, speech, args)
        results.append(result)
        load_counts[policy.name] = counts
    sizes = ", ".join(f"{s} {len(us)}" for s, us in sets.items())
    where = args.url or "python -m agent (one per policy)"
    progress(
        f"{sizes} calls per policy, live against {where}, load {args.load}; total {time.perf_counter() - started:.0f} s"
    )
    metrics = [
        m
        for r in results
        for s in r.sets.values()
        for o in s.outcomes
        if isinstance(o, LiveOutcome)
        for m in o.log.metrics
    ]
    delays = Delays.from_metrics(metrics)
    fields = sorted({k for m in metrics for k in m if k.endswith("_ms")})
    progress(
        f"turn.metrics read: {len(metrics)} turns, fields {', '.join(fields) or '-'}; transcript latency from "
        f"{delays.asr_from}: {len(delays.asr_ms)} samples"
    )
    if args.save_latency is not None:
        delays.save(args.save_latency)
        progress(f"wrote {args.save_latency}")
    if args.plot is not None:
        from bench.turns.plot import plot  # matplotlib only when asked

        title = f"end of turn, live: {sizes} calls, load {args.load}"
        plot(summary_rows(results), args.plot, title, "reply at the caller:")
        progress(f"wrote {args.plot}")
    if args.json:
        document = {
            "mode": "live",
            "server": where,
            "load": args.load,
            "other_callers": load_counts,
            "utterances": {s: len(us) for s, us in sets.items()},
            "policies": {
                r.policy.name: {**result_json(r), "groups": {s: groups_json(x.outcomes) for s, x in r.sets.items()}}
                for r in results
            },
            "latency_distribution": delays.as_json(),
        }
        print(json.dumps(document, indent=2))
    else:
        print(
            f"end of turn, live: {sizes} calls against {where}, in real time, load {args.load}; latency = last "
            "audible frame sent -> first reply audio received; a false cut-off = reply audio before the audible end\n"
        )
        blocks = []
        for r in results:
            block = format_table(r).replace(
                "latency ms: audible end -> end of turn", "latency ms: audible end -> first reply audio"
            )
            block += "\n" + format_groups(r) + ("\n" + format_cutoffs(r) if args.list_cutoffs else "")
            blocks.append(block)
        print("\n\n".join([*blocks, format_summary(results)]))
    log = test_log_lines(results, mode="live", asr="real", load=args.load, note=run_note(args))
    append(log)
    if log:
        progress(f"appended {len(log)} line(s) to {LOG}")
    return 0
