"""Red-team battery for the server's own tools (issue 37), over real sockets: what a model steered by the caller
and a tool server that misbehaves can and cannot do, through the ``ToolBox`` the server runs and through a
``/ws`` call of a real server.

The model writes arguments: it cannot set or repeat a parameter the operator fixed in a tool's URL, cannot send a
key the schema does not declare, nor values the schema refuses; each refusal is a tool error the model is told
and an audit line that names the check, never the values. A tool server: one that stalls its listing delays no
call's start (the listing is refreshed in the background, once per tenant however many calls start); two that
offer one name get one route, the one whose spec was offered; one that stops offering a tool takes its route
away; one that answers 50 MB is read only to its bound, then hung up on.

Tool servers are the local aiohttp ``HttpToolServer`` and the ``mcp`` package's own server (``McpToolServer``);
the /ws calls run stand-in speech models and the OpenAI-compatible model emulator. Nothing here is timed: each
wait is for an event (the loud waits of ``testing.waits`` only guard against a hang).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.adapters.mcp_tools import ANSWER_BYTES
from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.adapters.tool_box import ToolBox, ToolRefused
from agent.config import LlmSettings
from agent.config.tool_file import parse_tools
from agent.config.tools import ToolSettings
from agent.errors import ToolFailed
from agent.front_door.listener import RunningServer, running_server
from agent.ports import ToolCall
from testing.emulators import openai as oai
from testing.emulators.openai import OpenAIEmulator
from testing.emulators.tool_calls import Call
from testing.sockets import read_until, until
from testing.tool_servers import HttpToolServer, McpToolServer
from tests.integration.conftest import local_settings
from tests.integration.standins import standin_components, utterance

LOOPBACK = ("127.0.0.0/8",)
WAIT_S = 30.0
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
FORECAST = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city"],
}
START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def toolbox(
    http: Sequence[dict[str, Any]] = (),
    mcp: Sequence[dict[str, Any]] = (),
    *,
    ticks: Ticks | None = None,
    settings: ToolSettings | None = None,
) -> ToolBox:
    data = {
        "allowed_hosts": ["127.0.0.1"],
        "private_networks": list(LOOPBACK),
        "tenants": {"default": {"http": list(http), "mcp": list(mcp)}},
    }
    catalog = parse_tools(data, environ={}, base=Path("."))
    return ToolBox(settings or ToolSettings(), catalog, monotonic=ticks or Ticks())


def audit_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agent.tools.audit" and r.levelno == logging.INFO]


@pytest.fixture
async def http_server() -> AsyncIterator[HttpToolServer]:
    async with HttpToolServer() as server:
        yield server


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpToolServer]:
    async with McpToolServer() as server:
        yield server


# ------------------------------------------------------------------------------- what the model writes


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_the_model_cannot_set_or_repeat_a_parameter_the_operator_fixed(
    http_server: HttpToolServer, caplog: pytest.LogCaptureFixture, method: str
) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    url = http_server.url("/echo?source=operator")
    box = toolbox([{"name": "lookup", "method": method, "url": url, "parameters": CITY}])
    for arguments in ['{"source": "attacker", "city": "Paris"}', '{"SOURCE": "attacker"}', '{"source[]": "x"}']:
        with pytest.raises(ToolRefused) as caught:
            await box.run("default", ToolCall("c1", "lookup", arguments))
        assert "is fixed by the operator" in caught.value.detail and caught.value.reason == "fixed"
    assert http_server.seen == []  # refused before any request
    assert all("outcome=refused" in line and line.endswith("reason=fixed") for line in audit_lines(caplog))
    assert "attacker" not in "".join(audit_lines(caplog))
    output = json.loads(await box.run("default", ToolCall("c2", "lookup", '{"city": "Paris"}')))
    [seen] = http_server.seen
    assert [pair for pair in seen.pairs if pair[0] == "source"] == [("source", "operator")]
    if method == "GET":
        assert output["query"] == {"source": "operator", "city": "Paris"}
    else:
        assert (output["query"], output["json"]) == ({"source": "operator"}, {"city": "Paris"})
    await box.aclose()


async def test_arguments_the_schema_refuses_are_a_tool_error_and_an_audit_line_without_values(
    http_server: HttpToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    box = toolbox([{"name": "forecast", "url": http_server.url("/weather"), "parameters": FORECAST}])
    refused = {
        '{"city": 4111111111111111}': "$.city: must be of type string",
        '{"days": 3}': "$: a required key is missing: city",
        '{"city": "Paris", "days": 99}': "$.days: breaks the schema's maximum 7",
        '{"city": "Paris", "days": "3"}': "$.days: must be of type integer",
    }
    for arguments, problem in refused.items():
        with pytest.raises(ToolRefused) as caught:
            await box.run("default", ToolCall("c", "forecast", arguments))
        assert caught.value.detail == f"the arguments do not match the tool's schema: {problem}"
        assert "4111" not in caught.value.detail
    assert http_server.seen == []
    lines = audit_lines(caplog)
    assert len(lines) == 4 and all("outcome=refused" in line and line.endswith("reason=schema") for line in lines)
    assert "4111" not in caplog.text and "Paris" not in caplog.text
    assert "Paris" in await box.run("default", ToolCall("ok", "forecast", '{"city": "Paris", "days": 2}'))
    await box.aclose()


async def test_keys_the_schema_does_not_declare_are_refused_unless_it_allows_them(http_server: HttpToolServer) -> None:
    url = http_server.url("/echo")
    box = toolbox(
        [
            {"name": "closed", "url": url, "parameters": CITY},
            {"name": "no_schema", "url": url},
            {"name": "open", "url": url, "parameters": CITY | {"additionalProperties": {"type": "string"}}},
        ]
    )
    for name, arguments in [("closed", '{"city": "Rome", "admin": true}'), ("no_schema", '{"admin": true}')]:
        with pytest.raises(ToolRefused, match="keys the schema does not declare are not allowed: admin"):
            await box.run("default", ToolCall("c", name, arguments))
    assert http_server.seen == []
    assert json.loads(await box.run("default", ToolCall("c", "no_schema", "{}")))["query"] == {}
    output = await box.run("default", ToolCall("c", "open", '{"city": "Rome", "lang": "it"}'))
    assert json.loads(output)["query"] == {"city": "Rome", "lang": "it"}
    await box.aclose()


async def test_mcp_and_clock_arguments_are_checked_against_their_schemas(mcp_server: McpToolServer) -> None:
    box = toolbox(mcp=[{"name": "wx", "url": mcp_server.url, "prefix": "wx_"}])
    await box.refresh("default")
    for name, arguments, problem in [
        ("wx_get_forecast", '{"city": 5}', "$.city: must be of type string"),
        (
            "wx_get_forecast",
            '{"city": "Oslo", "admin": 1}',
            "$: keys the schema does not declare are not allowed: admin",
        ),
        ("get_time", '{"timezone": 5}', "$.timezone: must be of type string"),
        ("get_time", '{"tz": "UTC"}', "$: keys the schema does not declare are not allowed: tz"),
    ]:
        with pytest.raises(ToolRefused) as caught:
            await box.run("default", ToolCall("c", name, arguments))
        assert caught.value.detail.endswith(problem), caught.value.detail
    assert mcp_server.calls == []  # refused before the MCP server was asked
    assert "Oslo" in await box.run("default", ToolCall("c", "wx_get_forecast", '{"city": "Oslo"}'))
    assert mcp_server.calls == ["get_forecast"]
    await box.aclose()


# ------------------------------------------------------------------------------- what a tool server sends


async def test_an_mcp_answer_of_50_mb_is_read_only_to_its_bound(mcp_server: McpToolServer) -> None:
    chars = 50_000_000
    box = toolbox(mcp=[{"name": "wx", "url": mcp_server.url, "prefix": "wx_"}])
    with pytest.raises(ToolFailed) as caught:
        await box.run("default", ToolCall("c", "wx_flood", json.dumps({"chars": chars})))
    assert caught.value.detail == f"the MCP server's answer is over {ANSWER_BYTES} bytes"
    await until(lambda: len(mcp_server.flood_sent) == 1, WAIT_S, "the MCP server to see the client go")
    # Read to the bound, then hung up on: the server could write no more than the sockets' buffers hold.
    assert mcp_server.flood_sent[0] < chars // 2, "the client read the whole answer"
    await box.aclose()


async def test_an_mcp_answer_over_its_bound_on_an_event_stream_fails_the_same_way(mcp_server: McpToolServer) -> None:
    # get_forecast answers on an SSE stream, its text twice (as text and as structured content): 40,000 characters
    # of city are over 8 * 100 + 65,536 bytes; 10,000 are not, and are cut to 100 characters.
    settings = ToolSettings(max_output_chars=100)
    box = toolbox(mcp=[{"name": "wx", "url": mcp_server.url, "prefix": "wx_"}], settings=settings)
    with pytest.raises(ToolFailed) as caught:
        await box.run("default", ToolCall("c", "wx_get_forecast", json.dumps({"city": "x" * 40_000})))
    assert caught.value.detail == "the MCP server's answer is over 66336 bytes"
    assert len(await box.run("default", ToolCall("c", "wx_get_forecast", json.dumps({"city": "x" * 10_000})))) == 100
    await box.aclose()


async def test_one_name_offered_by_two_servers_routes_to_the_one_whose_spec_was_offered() -> None:
    async with McpToolServer() as first, McpToolServer() as second:
        ticks = Ticks()
        box = toolbox(
            mcp=[
                {"name": "first", "url": first.url, "timeout_s": 5},
                {"name": "second", "url": second.url, "timeout_s": 7},
            ],
            ticks=ticks,
        )
        second.hold()  # the second in the file's order is listed last
        listing = asyncio.ensure_future(box.refresh("default"))
        await until(lambda: first.listings == 1 and second.held == 1, WAIT_S, "the first listing, the second held")
        second.release()
        specs = {spec.name: spec for spec in await listing}
        assert specs["get_forecast"].timeout_s == 5  # the first server's spec
        assert "Lima" in await box.run("default", ToolCall("c", "get_forecast", '{"city": "Lima"}'))
        assert (first.calls, second.calls) == (["get_forecast"], [])

        # The first stops offering fail(): after its next listing, the name routes to the second server, whose
        # spec is now the one offered (no route is left to the first).
        first.remove_tool("fail")
        ticks.now += ToolSettings().mcp_list_ttl_s
        assert "fail" in {spec.name for spec in await box.refresh("default")}  # the second's, now offered
        with pytest.raises(ToolFailed, match="boom"):
            await box.run("default", ToolCall("c", "fail", '{"reason": "boom"}'))
        assert (first.calls[-1:], second.calls) == (["get_forecast"], ["fail"])
        await box.aclose()


async def test_a_tool_a_server_stops_offering_loses_its_route(mcp_server: McpToolServer) -> None:
    ticks = Ticks()
    box = toolbox(mcp=[{"name": "wx", "url": mcp_server.url, "prefix": "wx_"}], ticks=ticks)
    assert "wx_fail" in {spec.name for spec in await box.refresh("default")}
    mcp_server.remove_tool("fail")
    ticks.now += ToolSettings().mcp_list_ttl_s
    assert "wx_fail" not in {spec.name for spec in await box.refresh("default")}
    with pytest.raises(ToolFailed) as caught:
        await box.run("default", ToolCall("c", "wx_fail", '{"reason": "x"}'))
    assert caught.value.detail == "no such tool" and "fail" not in mcp_server.calls
    await box.aclose()


async def test_a_stalled_listing_is_not_waited_for_and_runs_once_however_many_ask(
    mcp_server: McpToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="agent.adapters.tool_listings")
    box = toolbox(mcp=[{"name": "wx", "url": mcp_server.url, "prefix": "wx_", "timeout_s": 60}])
    mcp_server.hold()
    for _ in range(5):
        assert [spec.name for spec in await box.tools("default")] == ["get_time"]
    await until(lambda: mcp_server.held == 1, WAIT_S, "the listing to reach the MCP server")
    assert [spec.name for spec in await box.tools("default")] == ["get_time"]  # still unanswered, not waited for
    mcp_server.release()
    assert "wx_get_forecast" in {spec.name for spec in await box.refresh("default")}
    assert (mcp_server.held, mcp_server.listings) == (1, 1)
    assert len([r for r in caplog.records if "refreshing the listings" in r.getMessage()]) == 1
    await box.aclose()


# ------------------------------------------------------------------------------- through a /ws call


def tools_file(path: Path, http: HttpToolServer, mcp: McpToolServer) -> Path:
    weather, schema = http.url("/weather?source=operator"), json.dumps(CITY)
    path.write_text(
        json.dumps(
            {
                "allowed_hosts": ["127.0.0.1"],
                "private_networks": ["127.0.0.1/32"],
                "tenants": {
                    "default": {
                        "clock": False,
                        "http": [{"name": "get_weather", "url": weather, "parameters": json.loads(schema)}],
                        "mcp": [{"name": "wx", "url": mcp.url, "prefix": "wx_", "timeout_s": 60}],
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    return path


@asynccontextmanager
async def ws_server(
    tmp_path: Path, http: HttpToolServer, mcp: McpToolServer, emulator: OpenAIEmulator
) -> AsyncIterator[tuple[RunningServer, ToolBox]]:
    """A server with stand-in speech models, the emulator as its language model and the tools of ``tools_file``."""
    settings = local_settings(tools={"file": str(tools_file(tmp_path / "tools.json", http, mcp)), "clock": False})
    llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
    runner = ToolBox(settings.tools, settings.tools.load_file({}))
    try:
        served = dataclasses.replace(standin_components(), llm=llm, tools=runner)
        async with running_server(settings, lambda: served) as server:
            await server.wait_ready()
            yield server, runner
    finally:
        await llm.aclose()
        await runner.aclose()


async def one_turn(ws: ClientConnection) -> None:
    pcm = utterance()
    for i in range(0, len(pcm), 3200):
        await ws.send(pcm[i : i + 3200])
    await read_until(ws, "turn.metrics")


def offered(request: Any) -> list[str]:
    return sorted(tool["function"]["name"] for tool in request.body.get("tools", []))


async def test_calls_start_while_the_mcp_listing_stalls_and_a_later_call_sees_its_tools(tmp_path: Path) -> None:
    async with HttpToolServer() as http, McpToolServer() as mcp, OpenAIEmulator(["Fine."]) as emulator:
        mcp.hold()
        async with ws_server(tmp_path, http, mcp, emulator) as (server, runner):
            # the listing starts when the server is ready (ToolRunner.warm), before any call asks for it
            await until(lambda: mcp.held == 1, WAIT_S, "the listing to reach the MCP server at start-up")
            first = await connect(server.ws_url)
            await first.send(START)
            await read_until(first, "session.started")  # while the MCP server holds the listing unanswered
            others = [await connect(server.ws_url) for _ in range(3)]
            for ws in others:
                await ws.send(START)
                await read_until(ws, "session.started")
            await one_turn(first)
            assert offered(emulator.requests[0]) == ["get_weather"]  # no listing yet: the HTTP tool alone
            assert (mcp.held, mcp.listings) == (1, 0)  # still the one listing, still unanswered

            mcp.release()
            await runner.refresh("default")
            later = await connect(server.ws_url)
            await later.send(START)
            await read_until(later, "session.started")
            await one_turn(later)
            assert "wx_get_forecast" in offered(emulator.requests[1])
            assert mcp.listings == 1
            for ws in [first, *others, later]:
                await ws.close()


async def test_through_a_call_the_model_is_told_it_may_not_override_the_operator(tmp_path: Path) -> None:
    calls = [Call("get_weather", '{"source": "attacker", "city": "Paris"}')]
    async with HttpToolServer() as http, McpToolServer() as mcp, OpenAIEmulator(["Sorry."]) as emulator:
        emulator.script(oai.model_reply(calls))
        async with ws_server(tmp_path, http, mcp, emulator) as (server, _), connect(server.ws_url) as ws:
            await ws.send(START)
            await read_until(ws, "session.started")
            await one_turn(ws)
        assert http.seen == []
        [result] = [m for m in emulator.requests[1].body["messages"] if m["role"] == "tool"]
        assert "the argument source is fixed by the operator" in result["content"]
