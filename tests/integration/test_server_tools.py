"""Server-side tools over real sockets: HTTP tools against a local aiohttp server, MCP tools against the ``mcp``
package's own server (streamable HTTP, uvicorn on a thread), through the ToolBox the server runs.

The hosts: every tool here is on 127.0.0.1 or ``localhost``, which the host rules refuse unless the tools file
lists them and permits loopback (``private_networks``), so both sides of that rule are exercised on loopback.
Timeouts are small fixed values only where the server never answers; nothing here bounds how fast a call is.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent.adapters.http_tools import GuardedResolver, HostRefused, HttpTools
from agent.adapters.mcp_tools import McpTools
from agent.adapters.mcp_transport import Reading
from agent.adapters.tool_box import CUT_MARK, FAILED_RETRY_S, ToolBox
from agent.config.tool_file import HttpTool, McpServer, parse_tools
from agent.config.tool_hosts import HostPolicy
from agent.config.tools import ToolSettings
from agent.errors import ProviderTimeout, ToolFailed
from agent.ports import ToolCall
from testing.sockets import free_port, until
from testing.tool_servers import HttpToolServer, McpToolServer

LOOPBACK = ("127.0.0.0/8", "::1")
CITY = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}
ECHOED = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "array", "items": {"type": "integer"}},
        "metric": {"type": "boolean"},
        "ratio": {"type": "number"},
        "note": {"type": ["string", "null"]},
    },
}
HANG_TIMEOUT_S = 0.2
"""The limit given to a tool whose server never answers (any small value: the call is abandoned at it)."""
WAIT_S = 30.0
BIG = {"chars": {"type": "integer"}}


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def http_server() -> AsyncIterator[HttpToolServer]:
    async with HttpToolServer() as server:
        yield server


@pytest.fixture
def mcp_server() -> Iterator[McpToolServer]:
    with McpToolServer() as server:
        yield server


def toolbox(
    http: Sequence[dict[str, Any]] = (),
    mcp: Sequence[dict[str, Any]] = (),
    *,
    hosts: tuple[str, ...] = ("127.0.0.1",),
    networks: tuple[str, ...] = LOOPBACK,
    environ: dict[str, str] | None = None,
    settings: ToolSettings | None = None,
    ticks: Ticks | None = None,
) -> ToolBox:
    data = {
        "allowed_hosts": list(hosts),
        "private_networks": list(networks),
        "tenants": {"default": {"http": list(http), "mcp": list(mcp)}},
    }
    catalog = parse_tools(data, environ=environ or {}, base=Path("."))
    return ToolBox(settings or ToolSettings(), catalog, monotonic=ticks or Ticks())


def audit_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agent.tools.audit" and r.levelno == logging.INFO]


async def test_a_get_tool_sends_its_arguments_in_the_query_and_its_secret_header(
    http_server: HttpToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    tool = {
        "name": "get_weather",
        "url": http_server.url("/weather"),
        "headers": {"Authorization": "env:WX"},
        "parameters": CITY,
    }
    box = toolbox([tool], environ={"WX": "Bearer wx-secret"})
    spec = next(s for s in await box.tools("default") if s.name == "get_weather")
    assert spec.runs_on == "server" and spec.timeout_s == 5.0
    output = await box.run("default", ToolCall("call-1", "get_weather", '{"city": "Paris", "days": 2}'))
    assert json.loads(output) == {"city": "Paris", "temp_c": 21, "conditions": "sunny"}
    [seen] = http_server.seen
    assert (seen.method, seen.query) == ("GET", {"city": "Paris", "days": "2"})
    assert seen.headers["Authorization"] == "Bearer wx-secret"
    [line] = audit_lines(caplog)
    assert "tool=get_weather source=http call_id=call-1" in line and "outcome=ok" in line
    assert "Paris" not in line and "wx-secret" not in caplog.text
    await box.aclose()


async def test_a_post_tool_sends_its_arguments_as_json(http_server: HttpToolServer) -> None:
    box = toolbox(
        [{"name": "echo", "method": "POST", "url": http_server.url("/echo?source=tool"), "parameters": ECHOED}]
    )
    arguments = {"city": "Oslo", "days": [1, 2], "metric": True, "note": None}
    output = json.loads(await box.run("default", ToolCall("c", "echo", json.dumps(arguments))))
    assert output == {"method": "POST", "query": {"source": "tool"}, "json": arguments}
    await box.aclose()


async def test_a_get_tool_writes_values_as_json_does(http_server: HttpToolServer) -> None:
    box = toolbox([{"name": "echo", "url": http_server.url("/echo?source=tool"), "parameters": ECHOED}])
    arguments = '{"city": "Rome", "days": [1, 2], "metric": true, "ratio": 0.5, "note": null}'
    output = json.loads(await box.run("default", ToolCall("c", "echo", arguments)))
    assert output["query"] == {"source": "tool", "city": "Rome", "days": "[1,2]", "metric": "true", "ratio": "0.5"}
    await box.aclose()


async def test_a_tool_that_hangs_is_abandoned_at_its_timeout(
    http_server: HttpToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    box = toolbox([{"name": "slow", "url": http_server.url("/hang"), "timeout_s": HANG_TIMEOUT_S}])
    with pytest.raises(ProviderTimeout) as caught:
        await box.run("default", ToolCall("c", "slow", "{}"))
    assert caught.value.provider == "slow" and "0.2 s" in caught.value.detail
    assert "outcome=timeout" in audit_lines(caplog)[0]
    await box.aclose()


async def test_a_slow_tool_does_not_hold_up_another_call(http_server: HttpToolServer) -> None:
    box = toolbox(
        [
            {"name": "slow", "url": http_server.url("/hang"), "timeout_s": 60},
            {"name": "get_weather", "url": http_server.url("/weather"), "parameters": CITY},
        ]
    )
    slow = asyncio.create_task(box.run("default", ToolCall("c1", "slow", "{}")))
    await until(lambda: any(s.path == "/hang" for s in http_server.seen), WAIT_S, "the slow call to arrive")
    assert "sunny" in await box.run("default", ToolCall("c2", "get_weather", '{"city": "Lima"}'))
    assert not slow.done()
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    await box.aclose()


async def test_a_cancelled_call_is_audited_and_its_request_dropped(
    http_server: HttpToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    box = toolbox([{"name": "slow", "url": http_server.url("/hang"), "timeout_s": 60}])
    task = asyncio.create_task(box.run("default", ToolCall("c1", "slow", "{}")))
    await until(lambda: len(http_server.seen) == 1, WAIT_S, "the call to arrive")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: http_server.abandoned == 1, WAIT_S, "the tool server to see the call dropped")
    assert "outcome=cancelled" in audit_lines(caplog)[0]
    await box.aclose()


async def test_a_redirect_is_refused_and_not_followed(http_server: HttpToolServer) -> None:
    box = toolbox([{"name": "moved", "url": http_server.url("/redirect")}])
    with pytest.raises(ToolFailed, match="HTTP 302: the tool redirected"):
        await box.run("default", ToolCall("c", "moved", "{}"))
    assert [s.path for s in http_server.seen] == ["/redirect"]
    await box.aclose()


async def test_an_error_status_fails_with_the_status_only(http_server: HttpToolServer) -> None:
    box = toolbox([{"name": "broken", "url": http_server.url("/error"), "parameters": CITY}])
    with pytest.raises(ToolFailed) as caught:
        await box.run("default", ToolCall("c", "broken", '{"city": "Paris"}'))
    assert caught.value.detail == "HTTP 500 Internal Server Error"
    await box.aclose()


async def test_output_is_cut_to_the_bound_and_the_body_read_only_that_far(http_server: HttpToolServer) -> None:
    # 64 MB, more than the socket buffers of both ends hold: the server writes what the client reads, and only
    # a client that stopped reading (then hung up) leaves most of it unwritten.
    chars = 64 * 1024 * 1024
    big = {"name": "big", "url": http_server.url("/big"), "parameters": {"type": "object", "properties": BIG}}
    box = toolbox([big], settings=ToolSettings(max_output_chars=100))
    output = await box.run("default", ToolCall("c", "big", json.dumps({"chars": chars})))
    assert len(output) == 100 and output.endswith(CUT_MARK) and output.startswith("x" * 80)
    await until(lambda: len(http_server.big_sent) == 1, WAIT_S, "the tool server to see the client go")
    assert http_server.big_sent[0] < chars // 2, "the client read the whole body"
    await box.aclose()


async def test_a_name_resolving_to_loopback_is_refused_unless_permitted(http_server: HttpToolServer) -> None:
    tool = {"name": "get_weather", "url": http_server.url("/weather", host="localhost"), "parameters": CITY}
    refused = toolbox([tool], hosts=("localhost",), networks=())
    with pytest.raises(ToolFailed, match="resolves to a refused address"):
        await refused.run("default", ToolCall("c", "get_weather", '{"city": "Paris"}'))
    assert http_server.seen == []
    permitted = toolbox([tool], hosts=("localhost",), networks=LOOPBACK)
    assert "Paris" in await permitted.run("default", ToolCall("c", "get_weather", '{"city": "Paris"}'))
    await refused.aclose()
    await permitted.aclose()


async def test_hosts_off_the_list_are_refused_at_each_request_and_connection(http_server: HttpToolServer) -> None:
    # The tools file refuses such a URL at load time (tests/unit/test_tools_file.py); the adapter checks again.
    policy = HostPolicy.of(["api.weather.example"], LOOPBACK)
    tools = HttpTools(policy, max_output_chars=1000, default_timeout_s=5)
    stray = HttpTool(name="stray", url=http_server.url("/weather"))
    with pytest.raises(ToolFailed, match="not on the allowed hosts"):
        await tools.run(stray, {})
    with pytest.raises(HostRefused, match="not on the allowed hosts"):
        await GuardedResolver(policy).resolve("localhost", 80)
    assert http_server.seen == []
    await tools.aclose()


def mcp_entry(server: McpToolServer, **overrides: Any) -> dict[str, Any]:
    return {"name": "wx", "url": server.url, "prefix": "wx_"} | overrides


async def test_mcp_tools_are_listed_and_called(mcp_server: McpToolServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    box = toolbox(mcp=[mcp_entry(mcp_server)])
    assert [spec.name for spec in await box.tools("default")] == ["get_time"]  # listed in the background
    specs = {spec.name: spec for spec in await box.refresh("default")}
    assert set(specs) == {"get_time", "wx_get_forecast", "wx_fail", "wx_hang", "wx_flood"}
    forecast = specs["wx_get_forecast"]
    assert forecast.description == "The weather forecast for a city."
    assert json.loads(forecast.parameters)["properties"]["city"]["type"] == "string"
    assert (forecast.runs_on, forecast.timeout_s) == ("server", 5.0)
    output = await box.run("default", ToolCall("call-7", "wx_get_forecast", '{"city": "Paris"}'))
    assert output == "Sunny in Paris, 21 degrees"
    [line] = audit_lines(caplog)
    assert "tool=wx_get_forecast source=mcp:wx call_id=call-7" in line and "outcome=ok" in line
    assert "Paris" not in line
    await box.aclose()


async def test_an_mcp_tool_is_callable_before_any_listing(mcp_server: McpToolServer) -> None:
    box = toolbox(mcp=[mcp_entry(mcp_server)])
    assert "Oslo" in await box.run("default", ToolCall("c", "wx_get_forecast", '{"city": "Oslo"}'))
    await box.aclose()


async def test_an_mcp_error_result_fails_with_its_text(mcp_server: McpToolServer) -> None:
    box = toolbox(mcp=[mcp_entry(mcp_server)])
    with pytest.raises(ToolFailed) as caught:
        await box.run("default", ToolCall("c", "wx_fail", '{"reason": "no data for Atlantis"}'))
    assert caught.value.provider == "wx_fail" and "no data for Atlantis" in caught.value.detail
    await box.aclose()


async def test_an_mcp_tool_that_hangs_times_out(mcp_server: McpToolServer) -> None:
    # Called on its server directly: through the ToolBox, the listing that routes the call would have the same
    # small timeout, which a loaded machine might miss (the call would then be "no such tool").
    config = McpServer(name="wx", url=mcp_server.url, prefix="wx_", timeout_s=HANG_TIMEOUT_S)
    tools = McpTools(config, HostPolicy.of(["127.0.0.1"], LOOPBACK), default_timeout_s=5)
    with pytest.raises(ProviderTimeout) as caught:
        await tools.call("wx_hang", {})
    assert caught.value.provider == "wx_hang"
    await tools.aclose()


async def test_an_error_the_sdk_raises_after_the_deadline_passed_is_a_timeout() -> None:
    # Under load the deadline's cancellation can leave the MCP SDK's task groups as a closed stream's error
    # (anyio's BrokenResourceError), not as the cancellation asyncio.timeout turns into TimeoutError: 1 call in ~90
    # with deadlines of 1-200 ms on a busy machine. A call past its deadline is a timeout, whatever it raised.
    config = McpServer(name="wx", url="http://127.0.0.1:9/mcp", prefix="wx_", timeout_s=0.001)
    tools = McpTools(config, HostPolicy.of(["127.0.0.1"], LOOPBACK), default_timeout_s=5)
    deadline = asyncio.timeout(0.001)
    with pytest.raises(TimeoutError):
        async with deadline:
            await asyncio.sleep(1)
    closed = anyio.BrokenResourceError()
    failure = tools._failure("wx_hang", closed, Reading(1000), deadline)
    assert isinstance(failure, ProviderTimeout) and failure.provider == "wx_hang", failure
    in_time = asyncio.timeout(60)
    async with in_time:
        pass
    assert isinstance(tools._failure("wx_get", closed, Reading(1000), in_time), ToolFailed)
    await tools.aclose()


async def test_only_the_allowed_mcp_tools_are_offered_and_called(mcp_server: McpToolServer) -> None:
    box = toolbox(mcp=[mcp_entry(mcp_server, tools=["get_forecast"])])
    assert [spec.name for spec in await box.refresh("default")] == ["get_time", "wx_get_forecast"]
    with pytest.raises(ToolFailed, match="no such tool"):
        await box.run("default", ToolCall("c", "wx_fail", '{"reason": "x"}'))
    await box.aclose()


async def test_mcp_headers_come_from_secrets() -> None:
    with McpToolServer(required_header=("Authorization", "Bearer m-1")) as server:
        box = toolbox(
            mcp=[mcp_entry(server, headers={"Authorization": "env:MCP_TOKEN"})], environ={"MCP_TOKEN": "Bearer m-1"}
        )
        assert "wx_get_forecast" in {spec.name for spec in await box.refresh("default")}
        assert all(h.get("authorization") == "Bearer m-1" for h in server.headers_seen)
        await box.aclose()


async def test_an_mcp_server_that_is_down_is_left_out_until_it_is_asked_again(
    http_server: HttpToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    ticks = Ticks()
    down = {"name": "down", "url": f"http://127.0.0.1:{free_port()}/mcp"}
    box = toolbox([{"name": "get_weather", "url": http_server.url("/weather")}], [down], ticks=ticks)
    assert [spec.name for spec in await box.refresh("default")] == ["get_time", "get_weather"]
    assert "MCP server down left out: the MCP server cannot be reached" in caplog.text
    caplog.clear()
    await box.refresh("default")
    assert "left out" not in caplog.text  # not asked again at every turn
    ticks.now += FAILED_RETRY_S
    await box.refresh("default")
    assert "MCP server down left out" in caplog.text
    await box.aclose()


async def test_an_mcp_server_resolving_to_loopback_is_refused_unless_permitted(mcp_server: McpToolServer) -> None:
    url = mcp_server.url.replace("127.0.0.1", "localhost")
    refused = toolbox(mcp=[mcp_entry(mcp_server, url=url)], hosts=("localhost",), networks=())
    assert [spec.name for spec in await refused.refresh("default")] == ["get_time"]
    assert mcp_server.headers_seen == []
    permitted = toolbox(mcp=[mcp_entry(mcp_server, url=url)], hosts=("localhost",))
    assert "wx_get_forecast" in {spec.name for spec in await permitted.refresh("default")}
    await refused.aclose()
    await permitted.aclose()


async def test_an_mcp_server_that_redirects_is_not_followed(
    mcp_server: McpToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    # A 307 to its own /mcp: the SDK would follow it (same origin, same method); the server's client follows none.
    box = toolbox(mcp=[mcp_entry(mcp_server, url=mcp_server.url.replace("/mcp", "/moved"))])
    assert [spec.name for spec in await box.refresh("default")] == ["get_time"]
    assert "MCP server wx left out" in caplog.text and "not followed" in caplog.text
    assert all(h.get("host", "").startswith("127.0.0.1") for h in mcp_server.headers_seen)
    assert len(mcp_server.headers_seen) >= 1
    await box.aclose()


async def test_an_mcp_server_that_goes_away_keeps_its_last_good_listing(caplog: pytest.LogCaptureFixture) -> None:
    ticks = Ticks()
    with McpToolServer() as server:
        box = toolbox(mcp=[mcp_entry(server)], ticks=ticks)
        listed = {spec.name for spec in await box.refresh("default")}
        assert "wx_get_forecast" in listed
    ticks.now += ToolSettings().mcp_list_ttl_s  # the server has stopped: the next listing fails
    assert {spec.name for spec in await box.refresh("default")} == listed
    assert "MCP server wx its last good listing kept: the MCP server cannot be reached" in caplog.text
    await box.aclose()
