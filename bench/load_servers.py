"""The server under bench/load.py (in this process, a child process or an external one) and the event-loop lag probe
beside it: changes only with how the load bench runs and watches its server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import stat
import sys
import time
from pathlib import Path
from typing import Any

from bench.server import instant_components, real_loader
from bench.stats import percentiles

LAG_INTERVAL_S = 0.010
SCRIPT = Path(__file__).resolve().with_name("load.py")
"""The script a child server runs (``bench/load.py --serve-only``)."""
READY = "ready"


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


def model_cpu(server: Any) -> dict[str, float] | None:
    """A running server's model workers' CPU seconds so far, by model; ``None`` before its components are loaded."""
    components = server.state.components
    stats = None if components is None else components.queue_stats()
    return None if stats is None else {model: s.cpu_s_total for model, s in stats.models.items()}


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
        from bench.server import serving

        settings = server_settings(self._args)
        self.max_sessions = settings.server.max_sessions
        load = real_loader(settings) if self._args.mode == "real" else instant_components
        self._server = await self._stack.enter_async_context(serving(settings, load))
        self.url = self._server.ws_url
        self._probe.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._probe.stop()
        await self._stack.aclose()

    async def stats(self) -> dict[str, Any]:
        rss, hwm = rss_kb()
        return {"rss_kb": rss, "hwm_kb": hwm, "sessions": self._server.state.sessions, "lag_ms": self._probe.take()}

    async def model_cpu(self) -> dict[str, float] | None:
        """CPU seconds of the model workers' jobs so far, by model (``bench/load_compute.py``)."""
        return model_cpu(self._server)


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
        return await self._ask(b"stats\n")

    async def model_cpu(self) -> dict[str, float] | None:
        """CPU seconds of the model workers' jobs so far, by model, from the child (``bench/load_compute.py``)."""
        counts: dict[str, float] | None = (await self._ask(b"cpu\n")).get("model_cpu_s")
        return counts

    async def _ask(self, line: bytes) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(line)
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

    async def model_cpu(self) -> dict[str, float] | None:
        return None  # not ours to ask: its /metrics has voice_agent_model_cpu_seconds_total


async def serve_only(args: argparse.Namespace) -> int:
    """``--serve-only``: serve, print one JSON line when ready, answer ``stats`` lines on stdin with JSON.

    Ends when stdin closes (a pipe), on SIGINT/SIGTERM, or after ``--time-limit``.
    """
    from bench.server import serving

    pin(args.server_cpus, "server")
    settings = server_settings(args)
    load = real_loader(settings) if args.mode == "real" else instant_components
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    probe = LagProbe()
    async with serving(settings, load) as server:
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
            elif line == "cpu":
                print(json.dumps({"model_cpu_s": model_cpu(server)}), flush=True)
            elif line == "quit" or (not line and reader.at_eof() and piped):
                break
            elif not line and reader.at_eof():
                await asyncio.wait({stopped}, timeout=max(0.0, deadline - loop.time()))
        stopped.cancel()
        print(f"server stats at exit: {json.dumps(stats())}", file=sys.stderr)
        await probe.stop()
    return 0
