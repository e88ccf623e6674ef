"""bench/load.py's callers: one level of N concurrent callers (spoken turns or idle sessions), what each saw, and the
server's figures around the level; changes only with how the load is made and measured at the callers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.latency_sets import RATE
from bench.load_compute import BUDGET_MS, Sample, sample_every, window_rates
from bench.load_servers import LagProbe
from bench.stats import percentiles
from clients.conversation import Conversation, Message
from clients.protocol_client import ConnectFailed, SessionFailed, converse_utterances

# --- the callers ------------------------------------------------------------------------------------

GAP_MS = 20.0
"""A reply whose audio ran dry this long in all counts as one with a gap (below it: frame jitter)."""

STAGES = (
    "endpoint_ms",
    "spec_asr_ms",
    "score_ms",
    "words_ms",
    "asr_ms",
    "llm_first_text_ms",
    "tts_first_audio_ms",
    "voice_to_voice_ms",
)
"""The server's own stages of a turn and the end of turn's evidence (``turn.metrics``, docs/protocol.md): where a
caller's wait went."""


@dataclass
class Level:
    """What one number of concurrent callers gave."""

    callers: int
    admitted: int = 0
    refused: int = 0
    failed: int = 0
    cut: int = 0
    peak_sessions: int = 0
    active: int = 0
    spoken: int = 0
    answered: int = 0
    split: int = 0
    timed_out: int = 0
    errors: int = 0
    v2v_ms: list[float] = field(default_factory=list)
    starved_ms: list[float] = field(default_factory=list)
    """Per answered turn, how long its reply's audio ran dry at the caller (``TurnResult.starved_ms``)."""
    stages_ms: dict[str, list[float]] = field(default_factory=lambda: {key: [] for key in STAGES})
    """Per stage of the server's ``turn.metrics`` (``STAGES``), the values of the answered turns that had it."""
    pace: list[float] = field(default_factory=list)
    """Per caller: audio seconds sent / seconds in the call (1.0 = the callers kept real-time pace)."""
    failures: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    start: dict[str, Any] = field(default_factory=dict)
    end: dict[str, Any] = field(default_factory=dict)
    client_lag_ms: dict[str, Any] = field(default_factory=dict)
    load_start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    idle_open: int = 0
    """Idle sessions (``--idle``) open when the callers started."""
    idle_refused: int = 0
    idle_closed: int = 0
    """Idle sessions the server closed before the level ended (its idle timeout, or a failure)."""
    arrivals_s: list[float] = field(default_factory=list)
    """When each caller started, seconds after the first could have (``arrivals``)."""
    audio_s: float = 0.0
    """Audio the callers who finished sent, seconds (speech and the silence while they listened)."""
    compute: list[Sample] = field(default_factory=list)
    """The turn models' CPU seconds on the server, sampled each second (``bench/load_compute.py``)."""
    model_cpu_s: dict[str, float] = field(default_factory=dict)
    """CPU seconds each model's jobs cost on the server during the level (all models)."""

    def turn_compute(self) -> dict[str, Any]:
        """The turn models' compute in ms per 100 ms of the callers' audio: each second's (p50 / p95 / max over
        the seconds with a caller in a call) and the level's mean (all of it over all the audio sent)."""
        rates = window_rates(self.compute)
        out: dict[str, Any] = {**percentiles(rates, (50, 95)), "budget_p95": BUDGET_MS}
        spent = self.compute[-1].cpu_s - self.compute[0].cpu_s if len(self.compute) > 1 else None
        out["mean"] = round(1000 * spent / (self.audio_s * 10), 2) if spent is not None and self.audio_s else None
        return out

    @property
    def unanswered(self) -> int:
        return self.spoken - self.answered

    def add(self, conversation: Conversation, utterances: int) -> None:
        turns = conversation.turns
        answered = sum(1 for t in turns if t.first_audio_at is not None)
        self.spoken += utterances
        self.answered += min(answered, utterances)
        self.split += max(0, len(turns) - utterances)
        self.timed_out += int(conversation.timed_out)
        self.errors += len(conversation.errors)
        self.v2v_ms += [v for t in turns if (v := t.client_voice_to_voice_ms) is not None]
        self.starved_ms += [t.starved_ms for t in turns if t.first_audio_at is not None]
        for turn in turns:
            metrics = turn.metrics or {}
            for key, values in self.stages_ms.items():
                if isinstance(value := metrics.get(key), int | float):
                    values.append(float(value))

    def summary(self) -> dict[str, Any]:
        v2v = percentiles(self.v2v_ms, (50, 95))
        return {
            "callers": self.callers,
            "admitted": self.admitted,
            "refused_503": self.refused,
            "failed": self.failed,
            "cut_by_time_limit": self.cut,
            "peak_sessions": self.peak_sessions,
            "turns_spoken": self.spoken,
            "turns_answered": self.answered,
            "turns_unanswered": self.unanswered,
            "split_turns": self.split,
            "callers_timed_out": self.timed_out,
            "error_messages": self.errors,
            "client_voice_to_voice_ms": v2v,
            "reply_gaps": {
                "turns": sum(1 for ms in self.starved_ms if ms >= GAP_MS),
                "total_ms": round(sum(self.starved_ms), 1),
                "max_ms": round(max(self.starved_ms, default=0.0), 1),
            },
            "server_stages_ms": {key: percentiles(values, (50, 95)) for key, values in self.stages_ms.items()},
            "server_rss_mb": {"start": _mb(self.start.get("rss_kb")), "end": _mb(self.end.get("rss_kb"))},
            "server_rss_peak_mb": _mb(self.end.get("hwm_kb")),
            "server_loop_lag_ms": self.end.get("lag_ms"),
            "client_loop_lag_ms": self.client_lag_ms,
            "client_pace": {
                "min": round(min(self.pace), 3) if self.pace else None,
                "median": round(float(np.median(self.pace)), 3) if self.pace else None,
            },
            "load_average": {"start": list(self.load_start), "end": list(self.load_end)},
            "idle_sessions": {"open": self.idle_open, "refused": self.idle_refused, "closed": self.idle_closed},
            "arrivals_s": [round(a, 2) for a in self.arrivals_s],
            "turn_model_compute_ms_per_100ms": self.turn_compute() if self.compute else None,
            "model_cpu_s": {model: round(cpu, 2) for model, cpu in sorted(self.model_cpu_s.items())},
            "elapsed_s": round(self.elapsed_s, 1),
            "failures": self.failures[:10],
        }


def _mb(kb: int | None) -> float | None:
    return None if kb is None else round(kb / 1024, 1)


async def one_caller(
    index: int, delay_s: float, url: str, utterances: Sequence[bytes], level: Level, args: argparse.Namespace
) -> None:
    await asyncio.sleep(delay_s)
    in_call = False
    started = 0.0
    ended: set[object] = set()  # turns the server saw end (speech.stopped)
    heard: set[object] = set()  # turns whose reply audio started (audio.start)

    def on_event(msg: Message) -> None:
        nonlocal in_call, started
        kind = msg.get("type")
        if kind == "speech.stopped":
            ended.add(msg.get("turn"))
        elif kind == "audio.start":
            heard.add(msg.get("turn"))
        elif kind == "session.started" and not in_call:
            in_call = True
            started = time.monotonic()
            level.admitted += 1
            level.active += 1
            level.peak_sessions = max(level.peak_sessions, level.active)

    try:
        conversation = await converse_utterances(
            url,
            utterances,
            RATE,
            gap_s=args.gap,
            wait_for_playback=True,
            turn_timeout_s=args.turn_timeout,
            on_event=on_event,
        )
    except ConnectFailed as exc:
        status = getattr(getattr(exc.__cause__, "response", None), "status_code", None)
        if status == 503:
            level.refused += 1
        else:
            level.failed += 1
            level.failures.append(f"caller {index}: {exc}")
        return
    except SessionFailed as exc:
        level.failed += 1
        level.failures.append(f"caller {index}: {exc}")
        return
    except asyncio.CancelledError:  # cut by the time limit: count what the events showed
        level.cut += 1
        level.spoken += len(ended)
        level.answered += len(heard & ended)
        raise
    finally:
        if in_call:
            level.active -= 1
    level.add(conversation, len(utterances))
    level.audio_s += conversation.input_seconds
    if started:
        level.pace.append(conversation.input_seconds / max(1e-3, time.monotonic() - started))


def arrivals(n: int, stagger_ms: float, within_ms: float | None = None, seed: int = 1) -> list[float]:
    """When each of ``n`` callers starts, in seconds: every ``stagger_ms`` (caller ``i`` at ``i x stagger``), or,
    with ``within_ms``, at random over that long (uniform, sorted, the same for the same ``seed``): callers who
    do not wait their turn to arrive, some of them nearly together."""
    if within_ms is None:
        return [i * stagger_ms / 1000 for i in range(n)]
    draws = np.random.default_rng(seed).uniform(0.0, within_ms / 1000, size=n)
    return [float(x) for x in np.sort(draws)]


async def _progress(level: Level, mode: str, started: float) -> None:
    while True:
        await asyncio.sleep(5.0)
        print(
            f"[{mode} x{level.callers}] {time.perf_counter() - started:5.0f} s: in call {level.active} "
            f"(peak {level.peak_sessions}), refused {level.refused}, failed {level.failed}, "
            f"turns answered {level.answered}/{level.spoken} (finished callers), load {os.getloadavg()[0]:.2f}",
            file=sys.stderr,
        )


async def open_idle(url: str, n: int, level: Level, stack: contextlib.AsyncExitStack) -> list[ClientConnection]:
    """``n`` sessions that start and then send nothing; kept open until ``stack`` closes."""
    opened: list[ClientConnection] = []
    start = json.dumps({"type": "session.start", "sample_rate": RATE, "voice": None})
    for _ in range(n):
        try:
            ws = await stack.enter_async_context(connect(url, open_timeout=30))
            await ws.send(start)
            async with asyncio.timeout(30):
                while not (isinstance(m := await ws.recv(), str) and json.loads(m).get("type") == "session.started"):
                    pass
        except InvalidStatus:
            level.idle_refused += 1
            continue
        except (OSError, TimeoutError, ConnectionClosed) as exc:
            level.failures.append(f"idle session: {exc}")
            level.idle_refused += 1
            continue
        opened.append(ws)
    level.idle_open = len(opened)
    return opened


async def run_level(
    n: int, server: Any, speech: Sequence[bytes], args: argparse.Namespace, time_left_s: float
) -> Level:
    level = Level(callers=n)
    async with contextlib.AsyncExitStack() as idle_stack:
        idle = await open_idle(server.url, args.idle, level, idle_stack) if args.idle else []
        if idle:
            print(f"[{args.mode} x{n}] {len(idle)} idle sessions open", file=sys.stderr)
        await _callers(level, n, server, speech, args, time_left_s)
        level.idle_closed = sum(1 for ws in idle if ws.close_code is not None)
    return level


async def _callers(
    level: Level, n: int, server: Any, speech: Sequence[bytes], args: argparse.Namespace, time_left_s: float
) -> None:
    level.start = await server.stats()  # also resets the server's lag samples
    cpu_before = await server.model_cpu() or {}
    level.load_start = os.getloadavg()
    client_probe = LagProbe()
    client_probe.start()
    speech_s = max(len(s) for s in speech) / 2 / RATE
    level.arrivals_s = arrivals(n, args.stagger_ms, args.arrive_within_ms, args.seed)
    last = max(level.arrivals_s, default=0.0)
    limit_s = min(time_left_s, last + args.turns * (speech_s + args.gap + args.turn_timeout) + 30)
    print(
        f"[{args.mode} x{n}] starting {n} callers ({args.turns} turns each, bounded at {limit_s:.0f} s)",
        file=sys.stderr,
    )
    started = time.perf_counter()
    tasks = []
    for i in range(n):
        utterances = [speech[(i + k) % len(speech)] for k in range(args.turns)]
        caller = one_caller(i, level.arrivals_s[i], server.url, utterances, level, args)
        tasks.append(asyncio.create_task(caller, name=f"caller-{i}"))
    progress = asyncio.create_task(_progress(level, args.mode, started))
    sampled = asyncio.Event()
    sampler = asyncio.create_task(sample_every(server.model_cpu, lambda: level.active, level.compute, sampled))
    _, pending = await asyncio.wait(tasks, timeout=limit_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    level.elapsed_s = time.perf_counter() - started
    progress.cancel()
    sampled.set()
    await sampler
    cpu_after = await server.model_cpu() or {}
    level.model_cpu_s = {model: cpu - cpu_before.get(model, 0.0) for model, cpu in cpu_after.items()}
    level.client_lag_ms = client_probe.take()
    await client_probe.stop()
    # Let the server see the last closes before reading its RSS and lag for this level.
    deadline = time.monotonic() + 10.0
    level.end = await server.stats()
    lag = level.end.get("lag_ms")  # the level's; samples taken while waiting for the closes are not
    while (level.end.get("sessions") or 0) > level.idle_open and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        level.end = {**await server.stats(), "lag_ms": lag}
    level.load_end = os.getloadavg()
    print(f"[{args.mode} x{n}] done in {level.elapsed_s:.1f} s", file=sys.stderr)
