"""Capacity benchmark: N concurrent callers over real WebSockets, each taking turns with the server.

    python bench/load.py --mode real --callers 1,4,10 --turns 3          # the local models, in-process
    python bench/load.py --mode instant --callers 100,300,500 --server-process --server-cpus 0 --client-cpus 1
    python bench/load.py --mode instant --callers 50 --json > load.json
    python bench/load.py --mode real --callers 10 --stagger-ms 1500 --idle 20   # 20 silent sessions beside

Each caller opens its own session and says short sentences (made with the bundled Piper voice at start-up,
not the ones ``bench/latency.py`` tunes against), streamed in 20 ms frames at real-time pace. After each
sentence it keeps sending silence until its reply is done and would have finished playing (a polite caller
who listens to the whole answer), then speaks again. Caller ``i`` starts ``i × --stagger-ms`` after the
first and says the sentences from its own starting point, so the callers do not speak in lockstep.

``--idle N`` opens N more sessions before each level that send ``session.start`` and then nothing at all (a
page left open, a socket held by someone who never speaks), keeps them open through the level and reports how
many were refused or closed by the server meanwhile: admission counts work, so they must cost the callers
nothing.

For each number of callers (a "level", run one after the other against one server) it reports, at the
caller: voice-to-voice (last audible frame sent → first reply audio received) p50/p95/max, turns answered
(reply audio heard) out of turns spoken, refusals (HTTP 503 at the upgrade) and other failures; at the
server: RSS at the start and end of the level (``/proc/<pid>/status``) and event-loop lag (a task that
sleeps 10 ms and records how late it wakes: p50/p99/max).

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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import signal
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agent.runtime.server.event_loop import loop_factory, loop_name, run
from bench.latency import RATE, caller_speech, instant_components, real_loader
from clients.conversation import Conversation, Message
from clients.protocol_client import ConnectFailed, SessionFailed, converse_utterances

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

LAG_INTERVAL_S = 0.010
SCRIPT = Path(__file__).resolve()
READY = "ready"


# --- pure helpers -------------------------------------------------------------------------------------


def percentiles(values: Sequence[float], points: Sequence[int]) -> dict[str, Any]:
    """``n``, ``max`` and ``p<point>`` of ``values`` (linear interpolation), rounded to 0.1; ``None`` if empty."""
    out: dict[str, Any] = {"n": len(values)}
    arr = np.asarray(values, dtype=np.float64)
    for p in points:
        out[f"p{p}"] = round(float(np.percentile(arr, p)), 1) if arr.size else None
    out["max"] = round(float(arr.max()), 1) if arr.size else None
    return out


def oversleep_ms(started: float, woke: float, interval_s: float) -> float:
    """How late a sleep of ``interval_s`` that started at ``started`` woke at ``woke`` (seconds), in ms (≥ 0)."""
    return max(0.0, (woke - started - interval_s) * 1000.0)


def rss_kb(pid: int | str = "self") -> tuple[int | None, int | None]:
    """``VmRSS`` and ``VmHWM`` (peak) of a process in kB, from ``/proc/<pid>/status`` (``None`` if unreadable)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None, None
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(rest.split()[0])
    return found.get("VmRSS"), found.get("VmHWM")


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


# --- the event-loop lag probe -------------------------------------------------------------------------


class LagProbe:
    """Sleeps ``interval_s`` over and over and records how late it wakes (ms); ``take`` hands the samples over."""

    def __init__(self, interval_s: float = LAG_INTERVAL_S) -> None:
        self._interval = interval_s
        self._samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="lag-probe")

    async def _run(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(self._interval)
            self._samples.append(oversleep_ms(started, time.perf_counter(), self._interval))

    def take(self) -> dict[str, Any]:
        samples, self._samples = self._samples, []
        return percentiles(samples, (50, 99))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


# --- the server under test ----------------------------------------------------------------------------


def server_settings(args: argparse.Namespace) -> Any:
    from agent.config import Settings

    server: dict[str, Any] = {"host": "127.0.0.1", "port": args.port}
    max_sessions = args.max_sessions
    if max_sessions is None and args.mode == "instant":
        max_sessions = max(args.callers) + args.idle
    if max_sessions is not None:
        server["max_sessions"] = max_sessions
    return Settings(server=server)


def pin(cpus: set[int] | None, who: str) -> None:
    if cpus is None:
        return
    os.sched_setaffinity(0, cpus)
    print(f"{who} pinned to CPU {','.join(map(str, sorted(cpus)))}", file=sys.stderr)


class InProcessServer:
    """``running_server`` in this process; the lag probe shares the loop with the callers."""

    description = "in-process (same event loop and CPUs as the callers)"

    def __init__(self, args: argparse.Namespace) -> None:
        self._args = args
        self._stack = contextlib.AsyncExitStack()
        self._probe = LagProbe()
        self._server: Any = None
        self.url = ""
        self.pid = os.getpid()
        self.max_sessions: int | None = None

    async def __aenter__(self) -> InProcessServer:
        from agent.runtime.server.listener import running_server

        settings = server_settings(self._args)
        self.max_sessions = settings.server.max_sessions
        load = real_loader(settings) if self._args.mode == "real" else instant_components
        self._server = await self._stack.enter_async_context(running_server(settings, load=load))
        await self._server.wait_ready()
        self.url = self._server.ws_url
        self._probe.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._probe.stop()
        await self._stack.aclose()

    async def stats(self) -> dict[str, Any]:
        rss, hwm = rss_kb()
        return {"rss_kb": rss, "hwm_kb": hwm, "sessions": self._server.state.sessions, "lag_ms": self._probe.take()}


class ChildServer:
    """This script with ``--serve-only`` in a child process; asked for its stats over its stdin/stdout."""

    def __init__(self, args: argparse.Namespace) -> None:
        self._args = args
        self._proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.pid = 0
        self.max_sessions: int | None = None
        cpus = "" if args.server_cpus is None else f", pinned to CPU {','.join(map(str, sorted(args.server_cpus)))}"
        self.description = f"child process{cpus}"

    async def __aenter__(self) -> ChildServer:
        a = self._args
        cmd = [sys.executable, str(SCRIPT), "--serve-only", "--mode", a.mode]
        cmd += ["--callers", ",".join(map(str, a.callers)), "--time-limit", str(a.time_limit + 60)]
        if a.max_sessions is not None:
            cmd += ["--max-sessions", str(a.max_sessions)]
        if a.server_cpus is not None:
            cmd += ["--server-cpus", ",".join(map(str, sorted(a.server_cpus)))]
        cmd += ["--loop", a.loop]
        if a.verbose:
            cmd.append("-v")
        self._proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 20
        )
        self.pid = self._proc.pid
        hello = await self._reply(timeout_s=300.0)
        self.url, self.max_sessions = hello[READY], hello["max_sessions"]
        return self

    async def _reply(self, timeout_s: float = 30.0) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        async with asyncio.timeout(timeout_s):
            while True:
                line = await self._proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"the server process exited (status {await self._proc.wait()})")
                if line.startswith(b"{"):  # anything else a library printed is not ours
                    reply: dict[str, Any] = json.loads(line)
                    return reply

    async def stats(self) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(b"stats\n")
        await self._proc.stdin.drain()
        return await self._reply()

    async def __aexit__(self, *exc: object) -> None:
        if self._proc is None:
            return
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            await asyncio.wait_for(self._proc.wait(), 40.0)
        except TimeoutError:
            self._proc.kill()
            await self._proc.wait()


class ExternalServer:
    """A server started by someone else: RSS only with ``--server-pid``, no loop lag."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.url = args.server_url
        self.pid = args.server_pid
        self.max_sessions: int | None = None
        self.description = f"external ({self.url}" + (f", pid {self.pid})" if self.pid else ")")

    async def __aenter__(self) -> ExternalServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def stats(self) -> dict[str, Any]:
        rss, hwm = rss_kb(self.pid) if self.pid else (None, None)
        return {"rss_kb": rss, "hwm_kb": hwm, "sessions": None, "lag_ms": None}


async def serve_only(args: argparse.Namespace) -> int:
    """``--serve-only``: serve, print one JSON line when ready, answer ``stats`` lines on stdin with JSON.

    Ends when stdin closes (a pipe), on SIGINT/SIGTERM, or after ``--time-limit``.
    """
    from agent.runtime.server.listener import running_server

    pin(args.server_cpus, "server")
    settings = server_settings(args)
    load = real_loader(settings) if args.mode == "real" else instant_components
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    probe = LagProbe()
    async with running_server(settings, load=load) as server:
        await server.wait_ready()
        probe.start()

        def stats() -> dict[str, Any]:
            rss, hwm = rss_kb()
            return {"rss_kb": rss, "hwm_kb": hwm, "sessions": server.state.sessions, "lag_ms": probe.take()}

        hello = {READY: server.ws_url, "pid": os.getpid(), "max_sessions": settings.server.max_sessions}
        print(json.dumps(hello), flush=True)
        print(f"serving {args.mode} at {server.ws_url} (pid {os.getpid()})", file=sys.stderr)
        reader = asyncio.StreamReader()
        mode = os.fstat(sys.stdin.fileno()).st_mode
        piped = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)  # asyncio's subprocess stdin is a socket pair
        if piped:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        else:  # a terminal or /dev/null: serve until a signal or the time limit
            reader.feed_eof()
        deadline = loop.time() + args.time_limit
        stopped = asyncio.create_task(stop.wait())
        while loop.time() < deadline and not stop.is_set():
            read = asyncio.create_task(reader.readline())
            await asyncio.wait({read, stopped}, timeout=deadline - loop.time(), return_when=asyncio.FIRST_COMPLETED)
            if not read.done():
                read.cancel()
                break
            line = read.result().decode().strip()
            if line == "stats":
                print(json.dumps(stats()), flush=True)
            elif line == "quit" or (not line and reader.at_eof() and piped):
                break
            elif not line and reader.at_eof():
                await asyncio.wait({stopped}, timeout=max(0.0, deadline - loop.time()))
        stopped.cancel()
        print(f"server stats at exit: {json.dumps(stats())}", file=sys.stderr)
        await probe.stop()
    return 0


# --- the callers ------------------------------------------------------------------------------------


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
    if started:
        level.pace.append(conversation.input_seconds / max(1e-3, time.monotonic() - started))


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
    level.load_start = os.getloadavg()
    client_probe = LagProbe()
    client_probe.start()
    speech_s = max(len(s) for s in speech) / 2 / RATE
    limit_s = min(time_left_s, n * args.stagger_ms / 1000 + args.turns * (speech_s + args.gap + args.turn_timeout) + 30)
    print(
        f"[{args.mode} x{n}] starting {n} callers ({args.turns} turns each, bounded at {limit_s:.0f} s)",
        file=sys.stderr,
    )
    started = time.perf_counter()
    tasks = []
    for i in range(n):
        utterances = [speech[(i + k) % len(speech)] for k in range(args.turns)]
        caller = one_caller(i, i * args.stagger_ms / 1000, server.url, utterances, level, args)
        tasks.append(asyncio.create_task(caller, name=f"caller-{i}"))
    progress = asyncio.create_task(_progress(level, args.mode, started))
    _, pending = await asyncio.wait(tasks, timeout=limit_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    level.elapsed_s = time.perf_counter() - started
    progress.cancel()
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


# --- reporting ------------------------------------------------------------------------------------


def _cell(value: Any, width: int, fmt: str = ".0f") -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}{fmt}}"


def format_table(levels: Sequence[Level], header: str) -> str:
    lines = [
        header,
        f"{'callers':>7}{'peak':>6}{'refused':>8}{'failed':>7}{'answered':>11}"
        f"{'v2v p50':>9}{'v2v p95':>9}{'v2v max':>9}{'RSS MB start->end':>19}"
        f"{'lag p50':>9}{'lag p99':>9}{'lag max':>9}{'client lag p99':>16}{'pace min':>9}{'load 1m':>13}{'time s':>8}",
    ]
    for lv in levels:
        s = lv.summary()
        v2v, lag = s["client_voice_to_voice_ms"], s["server_loop_lag_ms"] or {}
        rss = f"{_cell(s['server_rss_mb']['start'], 0)}->{_cell(s['server_rss_mb']['end'], 0)}"
        load = f"{lv.load_start[0]:.2f}->{lv.load_end[0]:.2f}"
        lines.append(
            f"{lv.callers:>7}{lv.peak_sessions:>6}{lv.refused:>8}{lv.failed + lv.cut:>7}"
            f"{f'{lv.answered}/{lv.spoken}':>11}"
            f"{_cell(v2v['p50'], 9)}{_cell(v2v['p95'], 9)}{_cell(v2v['max'], 9)}{rss:>19}"
            f"{_cell(lag.get('p50'), 9, '.1f')}{_cell(lag.get('p99'), 9, '.1f')}{_cell(lag.get('max'), 9, '.1f')}"
            f"{_cell(lv.client_lag_ms.get('p99'), 16, '.1f')}{_cell(s['client_pace']['min'], 9, '.2f')}"
            f"{load:>13}{lv.elapsed_s:>8.0f}"
        )
    lines.append(
        "v2v = caller-side voice-to-voice in ms (last audible frame sent -> first reply audio received); "
        "answered = turns whose reply audio arrived / turns spoken by admitted callers; failed includes "
        "callers cut by the time limit; lag = server event-loop oversleep of a 10 ms sleep, ms; pace min = the "
        "slowest caller's audio sent per second in the call (1.00 = real time; lower: the callers' CPU fell behind)."
    )
    for lv in levels:
        extra = [f"{k} {v}" for k, v in (("split turns", lv.split), ("timed-out waits", lv.timed_out)) if v]
        extra += [f"error messages {lv.errors}"] if lv.errors else []
        if lv.idle_open or lv.idle_refused:
            extra.append(
                f"idle sessions beside them: {lv.idle_open} open, {lv.idle_refused} refused, "
                f"{lv.idle_closed} closed by the server during the level"
            )
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
    header = (
        f"mode: {args.mode}   server: {description}   max sessions: {max_sessions or '-'}   turns per caller: "
        f"{args.turns}   stagger: {args.stagger_ms:g} ms   loop: {loop_name(loop_factory(args.loop))}   "
        f"CPUs: {os.cpu_count()}"
    )
    if args.json:
        doc = {
            "mode": args.mode,
            "server": description,
            "max_sessions": max_sessions,
            "turns_per_caller": args.turns,
            "stagger_ms": args.stagger_ms,
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
