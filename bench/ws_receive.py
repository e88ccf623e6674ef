"""What the event loop and the WebSocket library cost per caller audio frame, before any of our code runs.

    python bench/ws_receive.py                       # 300 connections, asyncio then uvloop, 10 s each
    python bench/ws_receive.py --connections 500 --seconds 20 --loops uvloop

A bare ``websockets`` server (the same settings as ours: no compression, ``max_queue`` 8) whose handler only
reads (``async for message in ws: pass``) runs in a child process pinned to CPU ``--server-cpu``; a client
process pinned to ``--client-cpu`` opens ``--connections`` connections, each sending one 20 ms PCM frame
(640 bytes) every 20 ms, as a caller does. The server's CPU time (``/proc/<pid>/stat``) over ``--seconds``
after a warm-up gives its share of one core and the microseconds per frame received. This is the floor under
``bench/load.py --mode instant``: a server cannot carry more real-time callers per core than this allows.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.runtime.server.event_loop import LoopChoice, loop_factory, loop_name, run
from testing.sockets import FrameClock

FRAME = b"\0" * 640
FRAME_S = 0.020
TICK_S = os.sysconf("SC_CLK_TCK")


async def serve(port: int, seconds: float) -> None:
    from websockets.asyncio.server import ServerConnection, serve

    async def handler(ws: ServerConnection) -> None:
        async for _ in ws:
            pass

    async with serve(handler, "127.0.0.1", port, compression=None, max_queue=8):
        print("ready", flush=True)
        await asyncio.sleep(seconds)


async def send(port: int, connections: int, seconds: float) -> None:
    from websockets.asyncio.client import connect

    async def one(i: int) -> None:
        await asyncio.sleep(i * FRAME_S / connections)  # spread over one frame period
        async with connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
            start = time.monotonic()
            async for _ in FrameClock(FRAME_S):
                if time.monotonic() - start >= seconds:
                    break
                await ws.send(FRAME)

    await asyncio.gather(*(one(i) for i in range(connections)))


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def measure(loop: LoopChoice, args: argparse.Namespace) -> tuple[float, float]:
    """(share of one core, µs per frame) of the server on ``loop``."""
    port = 20000 + os.getpid() % 20000
    total = args.warmup + args.seconds + 5
    me = [sys.executable, str(Path(__file__).resolve()), "--loops", loop, "--port", str(port)]
    server = subprocess.Popen([*me, "--role", "server", "--seconds", str(total + 5)], stdout=subprocess.PIPE)
    os.sched_setaffinity(server.pid, {args.server_cpu})
    assert server.stdout is not None
    server.stdout.readline()  # "ready"
    client = subprocess.Popen(
        [*me, "--role", "client", "--connections", str(args.connections), "--seconds", str(total)]
    )
    os.sched_setaffinity(client.pid, {args.client_cpu})
    try:
        time.sleep(args.warmup)
        before, started = cpu_ticks(server.pid), time.monotonic()
        time.sleep(args.seconds)
        used_s = (cpu_ticks(server.pid) - before) / TICK_S
        elapsed = time.monotonic() - started
    finally:
        client.kill()
        server.kill()
        client.wait()
        server.wait()
    frames = args.connections * elapsed / FRAME_S
    return used_s / elapsed, used_s / frames * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/ws_receive.py",
        description="CPU a bare websockets server spends receiving real-time 20 ms audio frames from N "
        "connections, on the standard asyncio loop and on uvloop (the floor under bench/load.py).",
    )
    parser.add_argument("--connections", type=int, default=300, help="concurrent senders (default 300)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured time per loop (default 10)")
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before measuring (default 8)")
    parser.add_argument("--loops", default="asyncio,uvloop", help="loops to compare (default asyncio,uvloop)")
    parser.add_argument("--server-cpu", type=int, default=0, help="CPU of the server (default 0)")
    parser.add_argument("--client-cpu", type=int, default=1, help="CPU of the senders (default 1)")
    parser.add_argument("--role", choices=("bench", "server", "client"), default="bench", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    loops: list[LoopChoice] = []
    for name in args.loops.split(","):
        if name not in ("asyncio", "uvloop"):
            parser.error(f"unknown loop {name!r}")
        loops.append(cast(LoopChoice, name))
    if args.role == "server":
        run(serve(args.port, args.seconds), loops[0])
        return 0
    if args.role == "client":
        run(send(args.port, args.connections, args.seconds), loops[0])
        return 0
    rows = []
    for loop in loops:
        print(
            f"{loop}: {args.connections} connections, {args.warmup:g} s warm-up, {args.seconds:g} s measured ...",
            file=sys.stderr,
        )
        loop_factory(loop)  # uvloop missing: a clear error now
        share, per_frame = measure(loop, args)
        rows.append((loop_name(loop_factory(loop)), share, per_frame))
    print(f"{'loop':>8}{'connections':>13}{'frames/s':>10}{'server CPU':>12}{'us/frame':>10}")
    for name, share, per_frame in rows:
        print(f"{name:>8}{args.connections:>13}{args.connections / FRAME_S:>10.0f}{share:>11.0%}{per_frame:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
