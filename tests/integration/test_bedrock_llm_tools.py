"""Function calling through the Bedrock adapter and the real aiobotocore client, against the ConverseStream emulator.

The emulator streams ``toolUse`` blocks as the service's event stream has them and refuses (``ValidationException``)
what the service refuses: tool blocks without a ``toolConfig``, a ``toolResult`` that answers no ``toolUse`` of the
message before, a ``toolUse`` left unanswered, roles that do not alternate.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiobotocore.session import AioSession, get_session
from botocore.exceptions import ClientError

from agent.adapters.bedrock_llm import BedrockLLM
from agent.config import LlmSettings
from agent.errors import ProviderError
from agent.ports import ChatMessage, ToolCall, ToolChoice, ToolSpec
from testing.emulators import bedrock
from testing.emulators.bedrock import BedrockEmulator, Call
from testing.emulators.bedrock_requests import (
    MISSING_RESULTS,
    NO_TOOL_CONFIG,
    TOO_MANY_RESULTS,
    UNEXPECTED_RESULT,
)
from testing.emulators.tool_calls import last_results, user_text
from tests.integration.tool_asks import ASK, CLOCK, PARIS, WEATHER, collect

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"

_SESSION = get_session()
_SESSION.set_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


def _session() -> AioSession:
    return _SESSION


@pytest.fixture
async def emulator() -> AsyncIterator[BedrockEmulator]:
    async with BedrockEmulator() as emu:
        yield emu


@pytest.fixture
async def llm(emulator: BedrockEmulator) -> AsyncIterator[BedrockLLM]:
    settings = LlmSettings(
        backend="bedrock", model=MODEL, region="us-west-2", endpoint_url=emulator.url, max_attempts=1
    )
    adapter = BedrockLLM(settings, session=_session())
    yield adapter
    await adapter.aclose()


async def test_text_then_a_call_in_one_reply(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    emulator.script(bedrock.calls_reply(Call("get_weather", PARIS, "tooluse_a1", pieces=6), text=["Let me", " check."]))
    assert await collect(llm) == ["Let me", " check.", ToolCall("tooluse_a1", "get_weather", PARIS)]
    assert emulator.requests[0].body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": "The weather in a city now.",
                    "inputSchema": {"json": json.loads(WEATHER.parameters)},
                }
            }
        ]
    }


async def test_parallel_calls_come_in_block_order(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    emulator.script(bedrock.calls_reply(Call("get_weather", PARIS, "t1"), Call("get_time", "", "t2")))
    assert await collect(llm, tools=(WEATHER, CLOCK)) == [
        ToolCall("t1", "get_weather", PARIS),
        ToolCall("t2", "get_time", "{}"),  # no input pieces at all: an empty object
    ]
    specs = emulator.requests[0].body["toolConfig"]["tools"]
    assert specs[1] == {"toolSpec": {"name": "get_time", "inputSchema": {"json": {"type": "object", "properties": {}}}}}


async def test_two_rounds_the_result_goes_back_and_the_service_accepts_it(
    llm: BedrockLLM, emulator: BedrockEmulator
) -> None:
    def model(body: dict[str, Any]) -> list[str | Call]:
        results = last_results(body)
        if results:
            return [f"It is {results[0]}."]
        return [Call("get_weather", PARIS)] if "weather" in user_text(body) else ["Hi."]

    emulator.reply = model
    (call,) = await collect(llm)
    assert isinstance(call, ToolCall) and call.name == "get_weather" and call.call_id.startswith("tooluse_")
    history = (*ASK, ChatMessage("assistant", "", (call,)), ChatMessage("tool", "18 °C", call_id=call.call_id))
    assert await collect(llm, history) == ["It is 18 °C."]
    assert emulator.refusals == []
    assert emulator.requests[1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": call.call_id, "name": "get_weather", "input": {"city": "Paris"}}}],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": call.call_id, "content": [{"text": "18 °C"}], "status": "success"}}
            ],
        },
    ]


async def test_a_failed_result_has_status_error(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    history = (
        *ASK,
        ChatMessage("assistant", "Checking.", (ToolCall("t1", "get_weather", PARIS),)),
        ChatMessage("tool", "timed out after 10 s", call_id="t1", failed=True),
    )
    await collect(llm, history)
    assert emulator.refusals == []
    assistant, result = emulator.requests[0].body["messages"][1:]
    assert assistant["content"][0] == {"text": "Checking."}
    assert result["content"] == [
        {"toolResult": {"toolUseId": "t1", "content": [{"text": "timed out after 10 s"}], "status": "error"}}
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [("auto", None), ("required", {"any": {}}), ("get_weather", {"tool": {"name": "get_weather"}})],
)
async def test_tool_choice_mapping(
    llm: BedrockLLM, emulator: BedrockEmulator, choice: ToolChoice, wire: object
) -> None:
    await collect(llm, tool_choice=choice)
    assert emulator.requests[0].body["toolConfig"].get("toolChoice") == wire


@pytest.mark.parametrize(("tools", "choice"), [((), "auto"), ((WEATHER,), "none")], ids=["no tools", "choice none"])
async def test_no_tools_no_tool_config_and_past_calls_go_as_text(
    llm: BedrockLLM, emulator: BedrockEmulator, tools: tuple[ToolSpec, ...], choice: ToolChoice
) -> None:
    history = (
        *ASK,
        ChatMessage("assistant", "Let me see.", (ToolCall("t1", "get_weather", PARIS),)),
        ChatMessage("tool", "18 °C", call_id="t1"),
        ChatMessage("assistant", "", (ToolCall("t2", "get_weather", '{"city": "Rome"}'),)),
        ChatMessage("tool", "no such city", call_id="t2", failed=True),
        ChatMessage("user", "Thanks!"),
    )
    assert await collect(llm, history, tools=tools, tool_choice=choice)
    body = emulator.requests[0].body
    assert "toolConfig" not in body and emulator.refusals == []
    assert body["messages"][1:] == [
        {"role": "assistant", "content": [{"text": 'Let me see.\n\n[called get_weather {"city": "Paris"}]'}]},
        {"role": "user", "content": [{"text": "[result of get_weather: 18 °C]"}]},
        {"role": "assistant", "content": [{"text": '[called get_weather {"city": "Rome"}]'}]},
        {"role": "user", "content": [{"text": "[get_weather failed: no such city]\n\nThanks!"}]},
    ]


async def test_a_choice_naming_an_undeclared_tool_is_refused(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    with pytest.raises(ProviderError, match="ValidationException"):
        await collect(llm, tool_choice="book_table")


async def test_input_for_a_block_that_never_started_is_an_error(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    emulator.script([bedrock.message_start(), bedrock.tool_use_delta(PARIS, 0), bedrock.block_stop(0)])
    with pytest.raises(ProviderError, match="no tool use"):
        await collect(llm)


async def test_a_stream_that_ends_inside_a_call_is_an_error(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    emulator.script(
        [bedrock.message_start(), bedrock.tool_use_start("t1", "get_weather", 0), bedrock.tool_use_delta('{"ci', 0)]
    )
    with pytest.raises(ProviderError, match="inside a tool call"):
        await collect(llm)


def _use(tool_use_id: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": tool_use_id, "name": "get_weather", "input": {}}}


def _result(tool_use_id: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tool_use_id, "content": [{"text": "r"}]}}


_CONFIG = {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}


@pytest.mark.parametrize(
    ("messages", "config", "message"),
    [
        (
            [{"role": "user", "content": [{"text": "Hi"}]}, {"role": "assistant", "content": [_use("t1")]}],
            None,
            NO_TOOL_CONFIG,
        ),
        (
            [
                {"role": "user", "content": [{"text": "Hi"}]},
                {"role": "assistant", "content": [_use("t1")]},
                {"role": "user", "content": [_result("t2")]},
            ],
            _CONFIG,
            UNEXPECTED_RESULT.format(i=2, j=0, id="t2"),
        ),
        (
            [
                {"role": "user", "content": [{"text": "Hi"}]},
                {"role": "assistant", "content": [_use("t1")]},
                {"role": "user", "content": [{"text": "Hello?"}]},
            ],
            _CONFIG,
            MISSING_RESULTS.format(i=2, ids="t1"),
        ),
        ([{"role": "user", "content": [_result("t1")]}], _CONFIG, TOO_MANY_RESULTS.format(i=0)),
    ],
)
async def test_the_emulator_refuses_what_the_service_refuses(
    emulator: BedrockEmulator,
    messages: list[dict[str, Any]],
    config: dict[str, Any] | None,
    message: str,
) -> None:
    # Sent by the plain client, so the body is exactly these messages (the adapter never writes such a history).
    request: dict[str, Any] = {"modelId": MODEL, "messages": messages}
    if config is not None:
        request["toolConfig"] = config
    async with _SESSION.create_client("bedrock-runtime", region_name="us-west-2", endpoint_url=emulator.url) as client:
        with pytest.raises(ClientError) as info:
            await client.converse_stream(**request)
    assert info.value.response["Error"] == {"Code": "ValidationException", "Message": message}
    assert emulator.refusals == [message]
