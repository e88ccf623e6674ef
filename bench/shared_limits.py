"""What shared limits cost a call's handshake, and whether two replicas enforce one enrollment burst.

    python bench/shared_limits.py                    # 300 handshakes per case, burst 5
    python bench/shared_limits.py --handshakes 1000 --burst 3

Real ``python -m agent`` processes (the local models, auth off, so every socket is anonymous and its upgrade is
counted against its address: the check the Redis adapter adds to a handshake) and a real ``redis-server``
(``testing.redis_server``). Handshake time is measured at the client, from the TCP connect to the WebSocket open
(then the socket is closed and the next one opened), for four cases, one server each, one handshake on each in
turn (so that the load of the machine, which changes, weighs on each alike):

- **in-process**: ``AGENT_LIMITS__REDIS_URL`` unset (today's counting, the default);
- **redis up**: set, Redis answering;
- **redis stopped**: its Redis's process ended after the server started (connections refused: fail open at once);
- **redis hung**: its Redis frozen (SIGSTOP: it takes connections and answers nothing): a check that tries it waits
  its whole bound (``AGENT_LIMITS__CHECK_TIMEOUT_MS``, 5 ms by default) and fails open; while it is down, one check
  a second tries it, the others fail open at once.

Then two replicas on one Redis: the tenant's burst of ``--burst`` enrollments is spent across both in turn (an
upload that is not audio: admitted, decoded, refused ``bad_audio``), and the first refusal (``rate_limited``)
must come at enrollment ``burst + 1`` in total. Results go to docs/benchmarks.md ("Shared limits").
Its one reason to change is what this comparison measures.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from bench.stats import pct
from testing.agent_process import AgentProcess, start_agent
from testing.redis_server import RedisServer
from testing.sockets import next_json


def server_env(**settings: str) -> dict[str, str]:
    """This process's environment less every ``AGENT_*`` variable, then ``settings`` (load-aware admission off: the
    bench's own handshakes are not load)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_")}
    return (
        env
        | {"HF_HUB_OFFLINE": "1", "AGENT_SERVER__ADMISSION_WAIT_MS": "0", "AGENT_TTS__WARM_PHRASES": "false"}
        | settings
    )


async def handshakes(agent: AgentProcess, count: int, warm: int = 20) -> list[float]:
    """Milliseconds from connect to open, ``count`` times in turn (after ``warm`` not counted)."""
    times: list[float] = []
    for i in range(count + warm):
        started = time.perf_counter()
        try:
            async with connect(agent.ws_url, open_timeout=30) as ws:
                if i >= warm:
                    times.append((time.perf_counter() - started) * 1000)
                await ws.close()
        except InvalidStatus as exc:
            refusals = [line for line in agent.output().splitlines() if "refused an upgrade" in line]
            raise SystemExit(f"server {agent.name} refused a handshake: {exc}; {refusals[-1:]}") from None
    return times


async def enroll(agent: AgentProcess, name: str) -> str:
    """One enrollment of an upload that is not audio: the code it is answered with."""
    data = b"this is not audio" * 64
    async with connect(agent.ws_url) as ws:
        begin = {"type": "voice.enroll.begin", "name": name, "consent": "I agree.", "size": len(data)}
        await ws.send(json.dumps(begin))
        ready = await next_json(ws)
        if ready["type"] != "voice.enroll.ready":
            return str(ready.get("code"))
        await ws.send(json.dumps({"type": "voice.enroll.chunk", "data": base64.b64encode(data).decode()}))
        await ws.send(json.dumps({"type": "voice.enroll.end"}))
        return str((await next_json(ws)).get("code"))


def row(case: str, times: list[float], base_p95: float | None, failed: float | None = None) -> str:
    p50, p95 = pct(times, 50), pct(times, 95)
    added = "" if base_p95 is None else f"{p95 - base_p95:+.2f}"
    failures = "" if failed is None else f"{failed:g}"
    return f"| {case} | {len(times)} | {p50:.2f} | {p95:.2f} | {added} | {failures} |"


def failed_open(agent: AgentProcess) -> float:
    """The checks of the address's bound that Redis did not answer in time (taken, uncounted)."""
    return agent.metric("voice_agent_shared_limit_errors_total", 'limit="opening_peer",outcome="failed_open"')


async def interleaved(agents: list[AgentProcess], count: int) -> list[list[float]]:
    """``handshakes`` on each of ``agents`` in turn, one at a time, ``count`` rounds: a change of the machine's load
    during the run weighs on every case alike."""
    times: list[list[float]] = [[] for _ in agents]
    for _ in range(count):
        for i, agent in enumerate(agents):
            times[i] += await handshakes(agent, 1, warm=0)
    return times


async def run(args: argparse.Namespace, directory: Path) -> None:
    redis = {name: RedisServer(directory / name) for name in ("up", "stopped", "hung")}
    agents: list[AgentProcess] = []
    try:
        for server in redis.values():
            server.directory.mkdir()
            server.start()
        burst = {"AGENT_VOICES__ENROLL_BURST": str(args.burst), "AGENT_VOICES__ENROLL_PER_HOUR": "1"}
        agents.append(start_agent("in-process", directory, server_env()))
        for name, server in redis.items():
            env = {"AGENT_LIMITS__REDIS_URL": server.url, "AGENT_LIMITS__CHECK_TIMEOUT_MS": str(args.timeout_ms)}
            agents.append(
                start_agent(name, directory, server_env(**env, **burst, AGENT_VOICES__DIR=str(directory / name)))
            )
        for agent in agents:
            await handshakes(agent, 0)  # the warm-up of each
        redis["stopped"].stop()
        redis["hung"].pause()
        before = [failed_open(agent) for agent in agents[1:]]
        times = await interleaved(agents, args.handshakes)
        failed = [failed_open(agent) - then for agent, then in zip(agents[1:], before, strict=True)]
        redis["hung"].pause(False)
        env = {"AGENT_LIMITS__REDIS_URL": redis["up"].url, "AGENT_LIMITS__CHECK_TIMEOUT_MS": str(args.timeout_ms)}
        second = start_agent("up-b", directory, server_env(**env, **burst, AGENT_VOICES__DIR=str(directory / "up-b")))
        agents.append(second)
        pair = (agents[1], second)
        codes = [await enroll(pair[i % 2], f"v{i}") for i in range(args.burst + 2)]
    finally:
        for agent in agents:
            agent.stop()
        for server in redis.values():
            server.stop()
    base_p95 = pct(times[0], 95)
    print(f"handshake time at the client, ms (check bound {args.timeout_ms:g} ms; cases interleaved)\n")
    print("| limits counted | handshakes | p50 | p95 | p95 added | checks failed open |")
    print("|---|---|---|---|---|---|")
    print(row("in process (no Redis)", times[0], None))
    print(row("Redis up", times[1], base_p95, failed[0]))
    print(row("Redis stopped (connection refused)", times[2], base_p95, failed[1]))
    print(row("Redis hung (SIGSTOP: no answer)", times[3], base_p95, failed[2]))
    refused = next((i + 1 for i, code in enumerate(codes) if code != "bad_audio"), None)
    print(f"\ntwo replicas, one Redis, burst {args.burst}: answers in turn a, b, a, ...: {', '.join(codes)}")
    print(f"first refusal at enrollment {refused} in total (expected {args.burst + 1}): ", end="")
    print("ok" if refused == args.burst + 1 and codes[args.burst] == "rate_limited" else "WRONG")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--handshakes", type=int, default=300, help="handshakes per case (default 300)")
    parser.add_argument("--burst", type=int, default=5, help="the tenant's enrollment burst (default 5)")
    parser.add_argument("--timeout-ms", type=float, default=5.0, help="AGENT_LIMITS__CHECK_TIMEOUT_MS (default 5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="shared-limits-") as directory:
        asyncio.run(run(args, Path(directory)))


if __name__ == "__main__":
    main()
