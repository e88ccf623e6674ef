"""Server-side tools: what a call through the server's ``ToolBox`` costs over the tool's own response time.

    .venv/bin/python bench/tools.py               # 200 calls per row, a table
    .venv/bin/python bench/tools.py --n 1000      # more calls per row
    .venv/bin/python bench/tools.py --json        # machine-readable, every row

Everything runs on this machine, with no network: the HTTP tool server of the tests (``testing.tool_servers``,
``aiohttp`` on 127.0.0.1, in this event loop) and their MCP server (the ``mcp`` package's own ``MCPServer`` over
streamable HTTP, ``uvicorn`` on a thread of its own). The ``ToolBox`` is the server's (``agent.adapters.tool_box``),
built from a tools file that lists 127.0.0.1 and permits loopback, its audit line written (to /dev/null) as the
server writes it.

**Rows**, each after ``--warmup`` calls, the paired rows interleaved call by call so that both see the same machine:

- ``http direct``: the same GET ``/weather?city=Paris`` with a plain ``aiohttp`` session (kept-alive connection):
  the tool's own response time, as this machine serves it;
- ``http toolbox``: the ``get_weather`` HTTP tool through ``ToolBox.run`` (arguments parsed, the URL checked,
  the connection's address checked at resolution, the body read bounded, the output cut, the audit line);
- ``mcp sdk, one session``: ``get_forecast`` on one open ``mcp.Client`` session (the SDK's floor);
- ``mcp toolbox``: the same tool through ``ToolBox.run`` (one short MCP connection per call, as the server does);
- ``clock toolbox``: the built-in ``get_time`` (the box's own cost, no I/O).

**Overhead** = ``http toolbox`` - ``http direct``, at p50 and p95; the target (issue 30) is at most 20 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp
from mcp import Client

from agent.adapters.tool_box import ToolBox
from agent.config.tool_file import parse_tools
from agent.config.tools import ToolSettings
from agent.ports import ToolCall
from agent.security.logsafe import LOG_FORMAT
from testing.tool_servers import HttpToolServer, McpToolServer

TARGET_MS = 20.0
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
Call = Callable[[], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    n: int
    p50_ms: float
    p95_ms: float
    max_ms: float


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def row(name: str, samples_s: list[float]) -> Row:
    ms = [s * 1000 for s in samples_s]
    return Row(name, len(ms), percentile(ms, 0.5), percentile(ms, 0.95), max(ms))


async def timed(call: Call) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def interleaved(calls: dict[str, Call], n: int, warmup: int) -> dict[str, list[float]]:
    """``n`` timings of each call, taken in turn (a, b, a, b...) after ``warmup`` untimed rounds."""
    for _ in range(warmup):
        for call in calls.values():
            await call()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(n):
        for name, call in calls.items():
            samples[name].append(await timed(call))
    return samples


def audit_to_devnull() -> None:
    """The audit line formatted and written as the server does, to /dev/null (its cost counts; its text not)."""
    handler = logging.StreamHandler(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - lives as long as the run
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    audit = logging.getLogger("agent.tools.audit")
    audit.addHandler(handler)
    audit.setLevel(logging.INFO)
    audit.propagate = False


def toolbox(http: HttpToolServer, mcp: McpToolServer) -> ToolBox:
    data = {
        "allowed_hosts": ["127.0.0.1"],
        "private_networks": ["127.0.0.0/8"],
        "tenants": {
            "default": {
                "http": [{"name": "get_weather", "url": http.url("/weather"), "timeout_s": 10, "parameters": CITY}],
                "mcp": [{"name": "wx", "url": mcp.url, "prefix": "wx_", "timeout_s": 10}],
            }
        },
    }
    return ToolBox(ToolSettings(), parse_tools(data, environ={}, base=Path(".")))


async def measure(n: int, warmup: int) -> tuple[list[Row], float]:
    """The rows, and how long the first listing of the MCP server's tools took (a cold connection), in ms."""
    async with HttpToolServer() as http, McpToolServer() as mcp, aiohttp.ClientSession() as session:
        box = toolbox(http, mcp)
        start = time.perf_counter()
        names = {spec.name for spec in await box.refresh("default")}
        first_listing_ms = (time.perf_counter() - start) * 1000
        assert {"get_weather", "wx_get_forecast", "get_time"} <= names, names

        async def direct() -> object:
            async with session.get(http.url("/weather"), params={"city": "Paris"}) as response:
                response.raise_for_status()
                return await response.read()

        def through_box(name: str, arguments: str) -> Call:
            call = ToolCall("bench", name, arguments)
            return lambda: box.run("default", call)

        http_samples = await interleaved(
            {"http direct": direct, "http toolbox": through_box("get_weather", '{"city": "Paris"}')}, n, warmup
        )
        async with Client(mcp.url) as client:

            async def sdk() -> object:
                return await client.call_tool("get_forecast", {"city": "Paris"})

            mcp_samples = await interleaved(
                {"mcp sdk, one session": sdk, "mcp toolbox": through_box("wx_get_forecast", '{"city": "Paris"}')},
                n,
                warmup,
            )
        clock_samples = await interleaved({"clock toolbox": through_box("get_time", "{}")}, n, warmup)
        await box.aclose()
    samples = http_samples | mcp_samples | clock_samples
    return [row(name, values) for name, values in samples.items()], first_listing_ms


def table(rows: list[Row], first_listing_ms: float) -> str:
    lines = [f"{'path':<22} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"]
    lines += [f"{r.name:<22} {r.n:>5} {r.p50_ms:>8.2f} {r.p95_ms:>8.2f} {r.max_ms:>8.2f}" for r in rows]
    by_name = {r.name: r for r in rows}
    direct, boxed = by_name["http direct"], by_name["http toolbox"]
    p50, p95 = boxed.p50_ms - direct.p50_ms, boxed.p95_ms - direct.p95_ms
    verdict = "met" if p95 <= TARGET_MS else "MISSED"
    lines.append("")
    lines.append(f"HTTP tool overhead: p50 {p50:+.2f} ms, p95 {p95:+.2f} ms (target <= {TARGET_MS:g} ms: {verdict})")
    sdk, mcp_box = by_name["mcp sdk, one session"], by_name["mcp toolbox"]
    lines.append(
        f"MCP call through the toolbox: p50 {mcp_box.p50_ms:.2f} ms, p95 {mcp_box.p95_ms:.2f} ms "
        f"({mcp_box.p50_ms - sdk.p50_ms:+.2f} ms at p50 over one open SDK session); "
        f"first listing (cold) {first_listing_ms:.1f} ms"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="What a server-side tool call costs through the ToolBox, over the tool's own response time "
        "(local HTTP and MCP tool servers, no network).",
    )
    parser.add_argument("--n", type=int, default=200, help="timed calls per row (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls per row first (default 20)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = parser.parse_args(argv)
    if args.n < 1 or args.warmup < 0:
        parser.error("--n must be at least 1 and --warmup at least 0")
    # Before the MCP server is built: it would otherwise set up the root logger itself (at INFO).
    logging.basicConfig(level=logging.WARNING, format=LOG_FORMAT)
    audit_to_devnull()
    rows, first_listing_ms = asyncio.run(measure(args.n, args.warmup))
    if args.json:
        print(json.dumps({"rows": [asdict(r) for r in rows], "first_listing_ms": first_listing_ms}, indent=2))
    else:
        print(table(rows, first_listing_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
