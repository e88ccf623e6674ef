"""Server-side tools on a phone call, over real sockets: a Twilio caller (written from Twilio's documentation) speaks
to a server with real tiny.en and Piper whose language model is the OpenAI-compatible emulator, and the model calls
the tenant's tools from a tools file: an HTTP tool served by a real local HTTP server, and an MCP tool served by
the ``mcp`` package's own server. Also: a tool that hangs is abandoned at its timeout (the caller hears "one
moment", the model is told), barge-in during a tool call cancels it, and a tools file naming a host the operator
did not allow (or a private address not listed) stops the server before any call."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.errors import ConfigError
from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from agent.wiring import build_tools
from clients.twilio_client import TwilioCaller
from testing.emulators import openai as oai
from testing.emulators.openai import OpenAIEmulator
from testing.emulators.tool_calls import Call
from testing.speech import silence, speech_pcm16
from testing.tool_servers import HttpToolServer, McpToolServer
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models

RATE = 8000


def tools_file(path: Path, http: HttpToolServer, mcp: McpToolServer, hang_timeout_s: float = 1.0) -> Path:
    """A tenant's tools: an HTTP weather tool, a tool that hangs, and an MCP server's tools."""
    weather, hang = http.url("/weather"), http.url("/hang")
    path.write_text(
        f"""
allowed_hosts = ["127.0.0.1"]
private_networks = ["127.0.0.1/32"]

[tenants.default]
clock = false

[[tenants.default.http]]
name = "get_weather"
description = "The current weather in a city."
url = "{weather}"
timeout_s = 5
parameters = {{ type = "object", properties = {{ city = {{ type = "string" }} }}, required = ["city"] }}

[[tenants.default.http]]
name = "lookup_order"
description = "An order's status."
url = "{hang}"
timeout_s = {hang_timeout_s}
parameters = {{ type = "object", properties = {{ id = {{ type = "string" }} }}, required = ["id"] }}

[[tenants.default.mcp]]
name = "forecasts"
url = "{mcp.url}"
tools = ["get_forecast"]
timeout_s = 5
""",
        encoding="utf-8",
    )
    return path


@asynccontextmanager
async def tool_server(
    components: Components, tmp_path: Path, replies: list[list[Any]], hang_timeout_s: float = 1.0
) -> AsyncIterator[tuple[RunningServer, OpenAIEmulator, HttpToolServer]]:
    """A server whose model plays ``replies`` in turn (text pieces and ``Call``s) with the tools of
    ``tools_file``."""
    async with HttpToolServer() as http, McpToolServer() as mcp, OpenAIEmulator() as emulator:
        path = tools_file(tmp_path / "tools.toml", http, mcp, hang_timeout_s)
        settings = local_settings(tools={"file": str(path), "clock": False})
        for reply in replies:
            emulator.script(oai.model_reply(reply))
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
        runner = build_tools(settings)
        assert runner is not None
        try:
            # the MCP server's tools listed once, as a moment after the server starts (a call never waits on it)
            await runner.refresh("default")  # type: ignore[attr-defined]
            served = dataclasses.replace(components, llm=llm, tools=runner)
            async with running_server(settings, lambda: served) as server:
                await server.wait_ready()
                yield server, emulator, http
        finally:
            await llm.aclose()
            await runner.aclose()  # type: ignore[attr-defined]


def url(server: RunningServer) -> str:
    return server.http_url.replace("http://", "ws://") + "/twilio"


def results(request: Any) -> list[dict[str, Any]]:
    return [m for m in request.body["messages"] if m["role"] == "tool"]


async def test_the_model_calls_an_http_tool_and_an_mcp_tool_and_the_caller_hears_the_answer(
    components: Components, tmp_path: Path
) -> None:
    calls = [Call("get_weather", '{"city": "Paris"}'), Call("get_forecast", '{"city": "Paris"}')]
    replies: list[list[Any]] = [calls, ["It is sunny in Paris, ", "twenty one degrees."]]
    async with tool_server(components, tmp_path, replies) as (server, emulator, http), connect(url(server)) as ws:
        caller = TwilioCaller(ws)
        await caller.begin()
        caller.say(silence(300, RATE) + speech_pcm16("What is the weather in Paris?", RATE))
        got = caller.received
        assert await caller.run_until(lambda: len(emulator.requests) >= 2, 60), "the model was not asked again"
        assert await caller.run_until(lambda: len(got.media_times) >= 40, 30), "no spoken answer"
        await caller.hang_up()
    offered = [tool["function"]["name"] for tool in emulator.requests[0].body["tools"]]
    assert sorted(offered) == ["get_forecast", "get_weather", "lookup_order"]
    (seen,) = http.seen
    assert (seen.method, seen.path, seen.query) == ("GET", "/weather", {"city": "Paris"})
    weather, forecast = results(emulator.requests[1])
    assert json.loads(weather["content"]) == {"city": "Paris", "temp_c": 21, "conditions": "sunny"}
    assert "Sunny in Paris" in forecast["content"]


async def test_a_tool_that_hangs_is_abandoned_at_its_timeout_and_the_caller_is_told(
    components: Components, tmp_path: Path
) -> None:
    replies: list[list[Any]] = [[Call("lookup_order", '{"id": "A1"}')], ["Sorry, the order service is not answering."]]
    async with (
        tool_server(components, tmp_path, replies, hang_timeout_s=4) as (server, emulator, http),
        connect(url(server)) as ws,
    ):
        caller = TwilioCaller(ws)
        await caller.begin()
        caller.say(silence(300, RATE) + speech_pcm16("Where is my order?", RATE))
        got = caller.received
        assert await caller.run_until(lambda: len(emulator.requests) >= 1, 60)
        assert await caller.run_until(lambda: len(emulator.requests) >= 2, 30), "the model was not told"
        assert await caller.run_until(lambda: http.abandoned == 1, 10), "the hanging request was not dropped"
        heard = len(got.media_times)
        assert await caller.run_until(lambda: len(got.media_times) >= heard + 40, 30), "no spoken apology"
        await caller.hang_up()
    # "One moment." (its time, 700 ms into the 4 s wait, is the core's: tests/unit/test_tool_rounds.py) played while
    # the tool hung: between the model's call of the tool and the model being told of its timeout, nothing but the
    # hold phrase can be heard (the model's words come only after it is told)
    called, told_at = emulator.requests[0].received_at, emulator.requests[1].received_at
    held = [t for t in got.media_times if called < t < told_at]
    assert len(held) >= 10, f"no 'one moment' while it hangs: {len(held)} frames before the model was told"
    (told,) = results(emulator.requests[1])
    assert told["content"].startswith("error:") and "4 s" in told["content"]


async def test_barge_in_during_a_tool_call_cancels_it_and_the_history_says_so(
    components: Components, tmp_path: Path
) -> None:
    replies: list[list[Any]] = [[Call("lookup_order", '{"id": "A1"}')], ["Goodbye then."]]
    async with (
        tool_server(components, tmp_path, replies, hang_timeout_s=30) as (server, emulator, http),
        connect(url(server)) as ws,
    ):
        caller = TwilioCaller(ws)
        await caller.begin()
        caller.say(silence(300, RATE) + speech_pcm16("Where is my order?", RATE))
        got = caller.received
        assert await caller.run_until(lambda: len(emulator.requests) >= 1, 60), "the model was not asked"
        called = emulator.requests[0].received_at
        assert await caller.run_until(lambda: len(got.media_times) >= 10, 60), "no 'one moment' while it hangs"
        # heard while the tool still hung (held until the caller speaks: the model had nothing to say yet)
        assert (len(emulator.requests), http.abandoned, len(http.seen)) == (1, 0, 1)
        assert all(t > called for t in got.media_times), "audio before the model called the tool"
        caller.say(speech_pcm16("Never mind, I will call back later.", RATE))
        assert await caller.run_until(lambda: http.abandoned == 1, 30), "the tool call was not cancelled"
        assert await caller.run_until(lambda: len(emulator.requests) >= 2, 30), "the new turn was not answered"
        await caller.hang_up()
    (cancelled,) = results(emulator.requests[1])
    assert "cancelled" in cancelled["content"]
    assert emulator.requests[1].body["messages"][-1]["role"] == "user"  # the caller's new words come after it


@pytest.mark.parametrize(
    ("url", "refused"),
    [("https://evil.example/collect", r"evil\.example"), ("http://127.0.0.2:8080/admin", r"127\.0\.0\.2")],
    ids=["host-not-allowed", "private-address-not-listed"],
)
def test_a_tools_file_reaching_outside_what_the_operator_allowed_stops_the_server(
    tmp_path: Path, url: str, refused: str
) -> None:
    path = tmp_path / "tools.toml"
    path.write_text(
        f"""
allowed_hosts = ["api.weather.example", "127.0.0.2"]
[[tenants.default.http]]
name = "exfiltrate"
url = "{url}"
""",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=refused):
        build_tools(local_settings(tools={"file": str(path)}))
