"""Function calling through the OpenAI-compatible adapter, over a real socket against the chat-completions emulator.

The emulator streams calls as OpenAI documents them and refuses (HTTP 400) what the service refuses: tool messages
that answer no call, calls left unanswered, a ``tool_choice`` naming an undeclared function. The official
``openai`` SDK reads the emulator's stream into the same calls the adapter yields, so the emulator is faithful.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from openai import AsyncOpenAI
from openai.lib.streaming.chat import ChatCompletionStreamState

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.errors import ProviderError
from agent.ports import ChatMessage, ToolCall, ToolChoice
from testing.emulators import openai as oai
from testing.emulators.openai import Call, OpenAIEmulator
from testing.emulators.openai_requests import CHOICE_NOT_DECLARED, ORPHAN_TOOL_MESSAGE, UNANSWERED_CALLS
from testing.emulators.tool_calls import last_results, user_text
from tests.integration.tool_asks import ASK, CLOCK, PARIS, WEATHER, collect

KEY = "sk-tools"


@pytest.fixture
async def emulator() -> AsyncIterator[OpenAIEmulator]:
    async with OpenAIEmulator(api_key=KEY) as emu:
        yield emu


@pytest.fixture
async def llm(emulator: OpenAIEmulator) -> AsyncIterator[OpenAICompatLLM]:
    adapter = OpenAICompatLLM(
        LlmSettings(backend="openai", model="m", base_url=emulator.base_url, api_key=KEY, read_timeout_s=5.0)
    )
    yield adapter
    await adapter.aclose()


async def test_text_then_a_call_in_one_reply(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script(oai.calls_reply(Call("get_weather", PARIS, "call_abc", pieces=6), text=["Let me", " check."]))
    assert await collect(llm) == ["Let me", " check.", ToolCall("call_abc", "get_weather", PARIS)]
    body = emulator.requests[0].body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city now.",
                "parameters": json.loads(WEATHER.parameters),
            },
        }
    ]
    assert body["tool_choice"] == "auto"


async def test_parallel_calls_come_in_index_order(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script(oai.calls_reply(Call("get_weather", PARIS, "call_1"), Call("get_time", "", "call_2")))
    assert await collect(llm, tools=(WEATHER, CLOCK)) == [
        ToolCall("call_1", "get_weather", PARIS),
        ToolCall("call_2", "get_time", "{}"),
    ]
    assert emulator.requests[0].body["tools"][1] == {
        "type": "function",
        "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
    }


async def test_two_rounds_the_result_goes_back_and_the_service_accepts_it(
    llm: OpenAICompatLLM, emulator: OpenAIEmulator
) -> None:
    def model(body: dict[str, Any]) -> list[str | Call]:
        results = last_results(body)
        if results:
            return [f"It is {results[0]}."]
        return ["One moment.", Call("get_weather", PARIS)] if "weather" in user_text(body) else ["Hi."]

    emulator.reply = model
    first = await collect(llm)
    assert first[0] == "One moment." and isinstance(first[1], ToolCall) and len(first) == 2
    call = first[1]
    assert call.name == "get_weather" and call.arguments == PARIS and call.call_id.startswith("call_")
    history = (
        *ASK,
        ChatMessage("assistant", "One moment.", (call,)),
        ChatMessage("tool", "18 °C", call_id=call.call_id),
    )
    assert "".join(str(d) for d in await collect(llm, history)) == "It is 18 °C."
    assert emulator.refusals == []
    assert emulator.requests[1].body["messages"][2:] == [
        {
            "role": "assistant",
            "content": "One moment.",
            "tool_calls": [
                {"id": call.call_id, "type": "function", "function": {"name": "get_weather", "arguments": PARIS}}
            ],
        },
        {"role": "tool", "tool_call_id": call.call_id, "content": "18 °C"},
    ]


async def test_a_failed_result_and_a_call_with_no_text(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    history = (
        *ASK,
        ChatMessage("assistant", "", (ToolCall("call_9", "get_weather", PARIS),)),
        ChatMessage("tool", "timed out after 10 s", call_id="call_9", failed=True),
    )
    await collect(llm, history)
    assert emulator.refusals == []
    assert emulator.requests[0].body["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [oai_call("call_9", "get_weather", PARIS)]},
        {"role": "tool", "tool_call_id": "call_9", "content": "error: timed out after 10 s"},
    ]


def oai_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


async def test_a_history_the_service_would_refuse_is_put_in_order(
    llm: OpenAICompatLLM, emulator: OpenAIEmulator
) -> None:
    # The caller spoke while the tools ran; one call never got a result; a result's call was trimmed off.
    history = (
        ChatMessage("tool", "old result", call_id="gone"),
        ChatMessage("user", "Weather in Paris and the time?"),
        ChatMessage("assistant", "", (ToolCall("a", "get_weather", PARIS), ToolCall("b", "get_time"))),
        ChatMessage("user", "Hello?"),
        ChatMessage("tool", "18 °C", call_id="a"),
    )
    await collect(llm, history, tools=(WEATHER, CLOCK))
    assert emulator.refusals == []
    assert [(m["role"], m.get("tool_call_id"), m["content"]) for m in emulator.requests[0].body["messages"]][1:] == [
        ("user", None, "[result of an earlier tool call: old result]"),
        ("user", None, "Weather in Paris and the time?"),
        ("assistant", None, None),
        ("tool", "a", "18 °C"),
        ("tool", "b", "error: no result: the call did not finish"),
        ("user", None, "Hello?"),
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
async def test_tool_choice_mapping(
    llm: OpenAICompatLLM, emulator: OpenAIEmulator, choice: ToolChoice, wire: object
) -> None:
    await collect(llm, tool_choice=choice)
    assert emulator.requests[0].body["tool_choice"] == wire


async def test_a_named_choice_finishes_with_stop_and_the_call_still_comes(
    llm: OpenAICompatLLM, emulator: OpenAIEmulator
) -> None:
    emulator.reply = lambda body: [Call("get_weather", PARIS)]
    (call,) = await collect(llm, tool_choice="get_weather")
    assert isinstance(call, ToolCall) and call.name == "get_weather"


async def test_a_choice_naming_an_undeclared_tool_is_refused(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    with pytest.raises(ProviderError, match="HTTP 400") as info:
        await collect(llm, tool_choice="book_table")
    assert CHOICE_NOT_DECLARED in str(info.value)


async def test_no_tools_no_tool_fields(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    await collect(llm, tools=(), tool_choice="required")
    body = emulator.requests[0].body
    assert "tools" not in body and "tool_choice" not in body


async def test_calls_without_ids_get_unique_made_up_ones(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    # Ollama's shape: every call of a parallel batch at index 0, whole, one per chunk; here without ids at all.
    emulator.script(
        [
            oai.chunk({"role": "assistant", "content": ""}),
            oai.chunk({"tool_calls": [{"index": 0, "function": {"name": "get_weather", "arguments": PARIS}}]}),
            oai.chunk({"tool_calls": [{"index": 1, "function": {"name": "get_time", "arguments": "{}"}}]}),
            oai.chunk({}, finish_reason="tool_calls"),
            oai.DONE,
        ]
    )
    first, second = await collect(llm)
    assert isinstance(first, ToolCall) and isinstance(second, ToolCall)
    assert (first.name, second.name) == ("get_weather", "get_time")
    assert first.call_id.startswith("call_") and second.call_id.startswith("call_") and first.call_id != second.call_id


async def test_a_reused_index_with_a_new_id_is_a_new_call(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    def whole(call_id: str, name: str) -> bytes:
        fragment = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        return oai.chunk({"tool_calls": [fragment]})

    emulator.script([whole("x1", "get_weather"), whole("x2", "get_time"), oai.chunk({}, "tool_calls"), oai.DONE])
    assert await collect(llm) == [ToolCall("x1", "get_weather", "{}"), ToolCall("x2", "get_time", "{}")]


async def test_calls_are_yielded_at_done_when_no_finish_reason_came(
    llm: OpenAICompatLLM, emulator: OpenAIEmulator
) -> None:
    emulator.script([oai.tool_call_start(0, "c", "get_weather"), oai.tool_call_arguments(0, PARIS), oai.DONE])
    assert await collect(llm) == [ToolCall("c", "get_weather", PARIS)]


@pytest.mark.parametrize(
    "tool_calls",
    [
        "not a list",
        [{"id": "c", "function": {"name": "get_weather"}}],  # no index
        [{"index": 0, "function": {"name": 7}}],
        [{"index": 0, "function": {"arguments": "{}"}}],  # never named
    ],
)
async def test_malformed_fragments_are_provider_errors(
    llm: OpenAICompatLLM, emulator: OpenAIEmulator, tool_calls: object
) -> None:
    emulator.script([oai.chunk({"tool_calls": tool_calls}), oai.chunk({}, "tool_calls"), oai.DONE])
    with pytest.raises(ProviderError, match="tool call"):
        await collect(llm)


async def test_a_stream_broken_inside_a_call_yields_no_call(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script([oai.content("Checking."), oai.tool_call_start(0, "c", "get_weather"), oai.Disconnect()])
    got: list[str | ToolCall] = []
    with pytest.raises(ProviderError):
        async for item in _items(llm):
            got.append(item)
    assert got == ["Checking."]


async def _items(llm: OpenAICompatLLM) -> AsyncIterator[str | ToolCall]:
    async for item in llm.stream_reply(ASK, language="en", tools=(WEATHER,)):
        yield item


async def test_the_official_sdk_reads_the_emulators_calls_as_the_adapter_does(emulator: OpenAIEmulator) -> None:
    steps = oai.calls_reply(Call("get_weather", PARIS, "call_1", pieces=7), Call("get_time", "{}", "call_2"))
    emulator.script(steps)
    emulator.script(steps)
    client = AsyncOpenAI(base_url=emulator.base_url, api_key=KEY)
    try:
        stream = await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "Weather and time?"}],
            tools=[{"type": "function", "function": {"name": "get_weather"}}],
            stream=True,
        )
        state = ChatCompletionStreamState()
        async for chunk in stream:
            state.handle_chunk(chunk)
    finally:
        await client.close()
    choice = state.get_final_completion().choices[0]
    assert choice.finish_reason == "tool_calls"
    sdk = [
        (c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or [] if c.type == "function"
    ]
    adapter = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url, api_key=KEY))
    try:
        ours = [(c.call_id, c.name, c.arguments) for c in await collect(adapter) if isinstance(c, ToolCall)]
    finally:
        await adapter.aclose()
    assert sdk == ours == [("call_1", "get_weather", PARIS), ("call_2", "get_time", "{}")]


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [{"role": "user", "content": "Hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"}],
            ORPHAN_TOOL_MESSAGE,
        ),
        (
            [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": None, "tool_calls": [oai_call("x", "f", "{}")]},
                {"role": "user", "content": "Hello?"},
            ],
            UNANSWERED_CALLS.format(ids="x"),
        ),
    ],
)
async def test_the_emulator_refuses_what_the_service_refuses(
    emulator: OpenAIEmulator, messages: list[dict[str, Any]], message: str
) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{emulator.base_url}/chat/completions",
            json={"model": "m", "messages": messages, "stream": True},
            headers={"Authorization": f"Bearer {KEY}"},
        ) as response,
    ):
        assert response.status == 400
        assert (await response.json())["error"]["message"] == message
    assert emulator.refusals == [message]
