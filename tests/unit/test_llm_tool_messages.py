"""How the language-model adapters write a history's tool calls and results, and read a stream's calls: pure.

Each history the adapters write is also put through the emulators' validation (what OpenAI and Bedrock refuse),
so "the service accepts it" is checked here too, without a socket.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.adapters.bedrock_converse import (
    ToolUseBlocks,
    to_converse,
    tool_config,
    tool_input,
    tool_use_id,
)
from agent.adapters.llm_tools import EMPTY_RESULT, NO_RESULT, ToolResult, paired, parameters_schema
from agent.adapters.openai_chat_wire import ToolCallFragments, chat_messages, tool_fields
from agent.errors import ProviderError
from agent.ports import ChatMessage, ToolCall, ToolSpec
from testing.emulators.bedrock_requests import validation_error
from testing.emulators.openai_requests import invalid

WEATHER = ToolSpec("get_weather", "The weather now.", '{"type": "object", "properties": {"city": {"type": "string"}}}')
CLOCK = ToolSpec("get_time")
PARIS = '{"city": "Paris"}'
CALL_A = ToolCall("a", "get_weather", PARIS)
CALL_B = ToolCall("b", "get_time")


def _openai_ok(history: list[ChatMessage] | tuple[ChatMessage, ...], tools: tuple[ToolSpec, ...] = ()) -> None:
    body = {"model": "m", "messages": chat_messages(history), "stream": True, **tool_fields(tools, "auto")}
    assert invalid(body) is None, body


def _bedrock_ok(history: list[ChatMessage] | tuple[ChatMessage, ...], tools: tuple[ToolSpec, ...] = ()) -> None:
    config = tool_config(tools, "auto")
    system, messages = to_converse(history, tools_offered=config is not None)
    body: dict[str, Any] = {"messages": messages, "system": system}
    if config is not None:
        body["toolConfig"] = config
    assert validation_error(body) is None, body


# ------------------------------------------------------------------------------------------------ pairing


def test_each_call_is_followed_by_its_result_in_call_order() -> None:
    history = [
        ChatMessage("user", "Weather and time?"),
        ChatMessage("assistant", "One moment.", (CALL_A, CALL_B)),
        ChatMessage("tool", "12:00", call_id="b"),
        ChatMessage("user", "Hello?"),  # spoken while the tools ran
        ChatMessage("tool", "18 °C", call_id="a", failed=False),
    ]
    assert paired(history) == [
        history[0],
        history[1],
        ToolResult(CALL_A, "18 °C"),
        ToolResult(CALL_B, "12:00"),
        history[3],
    ]


def test_a_call_without_a_result_gets_a_failed_one() -> None:
    history = [ChatMessage("user", "Weather?"), ChatMessage("assistant", "", (CALL_A,)), ChatMessage("user", "Well?")]
    assert paired(history)[2] == ToolResult(CALL_A, NO_RESULT, failed=True)


def test_a_result_that_answers_no_call_becomes_user_text() -> None:
    history = [
        ChatMessage("tool", "old", call_id="trimmed"),
        ChatMessage("user", "Weather?"),
        ChatMessage("assistant", "", (CALL_A,)),
        ChatMessage("tool", "18 °C", call_id="a"),
        ChatMessage("tool", "again", call_id="a"),  # answered twice
        ChatMessage("assistant", "It is 18 °C."),
        ChatMessage("tool", "late", call_id="a"),  # after the next assistant message
    ]
    texts = [item.text for item in paired(history) if isinstance(item, ChatMessage) and item.role == "user"]
    assert texts == [
        "[result of an earlier tool call: old]",
        "Weather?",
        "[result of an earlier tool call: again]",
        "[result of an earlier tool call: late]",
    ]


def test_an_empty_result_reads_no_output() -> None:
    history = [
        ChatMessage("user", "Time?"),
        ChatMessage("assistant", "", (CALL_B,)),
        ChatMessage("tool", " ", call_id="b"),
    ]
    assert paired(history)[2] == ToolResult(CALL_B, EMPTY_RESULT)


def test_parameters_that_are_no_object_schema_are_a_provider_error() -> None:
    assert parameters_schema(CLOCK, "x") == {"type": "object", "properties": {}}
    for bad in ("not json", "[1, 2]"):
        with pytest.raises(ProviderError, match="get_time"):
            parameters_schema(ToolSpec("get_time", parameters=bad), "x")


# ------------------------------------------------------------------------------------------------- OpenAI


def test_openai_messages_for_calls_and_results() -> None:
    history = [
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "Weather and time?"),
        ChatMessage("assistant", "", (CALL_A, CALL_B)),
        ChatMessage("tool", "18 °C", call_id="a"),
        ChatMessage("tool", "clock broken", call_id="b", failed=True),
        ChatMessage("assistant", "It is 18 °C; the clock is broken."),
    ]
    assert chat_messages(history, "ignored: the history has one") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather and time?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": PARIS}},
                {"id": "b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "18 °C"},
        {"role": "tool", "tool_call_id": "b", "content": "error: clock broken"},
        {"role": "assistant", "content": "It is 18 °C; the clock is broken."},
    ]
    _openai_ok(history, (WEATHER, CLOCK))
    _openai_ok(history)  # the history is sent faithfully with no tools offered too


def test_openai_system_prompt_and_blank_messages() -> None:
    history = [ChatMessage("user", "Hi"), ChatMessage("assistant", "  "), ChatMessage("user", "There")]
    assert chat_messages(history, "Sys.") == [
        {"role": "system", "content": "Sys."},
        {"role": "user", "content": "Hi"},
        {"role": "user", "content": "There"},
    ]


def test_openai_tool_fields() -> None:
    assert tool_fields((), "required") == {}
    fields = tool_fields((WEATHER, CLOCK), "auto")
    assert fields["tool_choice"] == "auto"
    assert fields["tools"] == [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "The weather now.", **_params(WEATHER)},
        },
        {"type": "function", "function": {"name": "get_time", **_params(CLOCK)}},
    ]
    assert tool_fields((WEATHER,), "none")["tool_choice"] == "none"
    assert tool_fields((WEATHER,), "required")["tool_choice"] == "required"
    assert tool_fields((WEATHER,), "get_weather")["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }


def _params(spec: ToolSpec) -> dict[str, Any]:
    return {"parameters": json.loads(spec.parameters)}


def test_fragments_join_by_index_and_come_in_index_order() -> None:
    calls = ToolCallFragments()
    calls.feed([{"index": 1, "id": "b", "type": "function", "function": {"name": "get_time", "arguments": ""}}])
    calls.feed([{"index": 0, "id": "a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}])
    for piece in ('{"ci', 'ty": "Pa', 'ris"}'):
        calls.feed([{"index": 0, "function": {"arguments": piece}}])
    # The SDK's dump of a fragment writes absent fields as null: they are absent.
    calls.feed([{"index": 1, "id": None, "type": None, "function": {"name": None, "arguments": None}}])
    calls.feed(None)
    assert calls.finish() == [CALL_A, ToolCall("b", "get_time", "{}")]
    assert calls.finish() == []  # forgotten once given


def test_fragments_without_ids_get_unique_ones_and_a_new_id_at_an_index_is_a_new_call() -> None:
    calls = ToolCallFragments()
    calls.feed([{"index": 0, "function": {"name": "get_weather", "arguments": PARIS}}])
    calls.feed([{"index": 1, "function": {"name": "get_time"}}])
    first, second = calls.finish()
    assert first.call_id != second.call_id and first.call_id.startswith("call_") and len(first.call_id) == 29
    calls.feed([{"index": 0, "id": "x1", "function": {"name": "get_weather", "arguments": "{}"}}])
    calls.feed([{"index": 0, "id": "x2", "function": {"name": "get_time", "arguments": "{}"}}])
    assert [c.call_id for c in calls.finish()] == ["x1", "x2"]


@pytest.mark.parametrize(
    "fragments",
    [
        {"index": 0},
        ["x"],
        [{"function": {"name": "f"}}],
        [{"index": -1, "function": {"name": "f"}}],
        [{"index": True, "function": {"name": "f"}}],
        [{"index": 0, "id": 5}],
        [{"index": 0, "function": "f"}],
        [{"index": 0, "function": {"name": "f", "arguments": {"city": "Paris"}}}],
    ],
)
def test_malformed_fragments_are_provider_errors(fragments: object) -> None:
    with pytest.raises(ProviderError, match="malformed tool call fragment"):
        ToolCallFragments().feed(fragments)


def test_a_call_never_named_is_a_provider_error() -> None:
    calls = ToolCallFragments()
    calls.feed([{"index": 0, "id": "a", "function": {"arguments": "{}"}}])
    with pytest.raises(ProviderError, match="no function name"):
        calls.finish()


# ------------------------------------------------------------------------------------------------ Bedrock


def test_converse_text_only_history_keeps_its_shape() -> None:
    history = [
        ChatMessage("system", "Sys."),
        ChatMessage("assistant", "Hello!"),
        ChatMessage("user", "What is"),
        ChatMessage("user", "the time?"),
        ChatMessage("assistant", "Noon."),
    ]
    assert to_converse(history) == (
        [{"text": "Sys."}],
        [
            {"role": "user", "content": [{"text": "What is\n\nthe time?"}]},
            {"role": "assistant", "content": [{"text": "Noon."}]},
        ],
    )


def test_converse_blocks_for_calls_and_results() -> None:
    history = [
        ChatMessage("user", "Weather and time?"),
        ChatMessage("assistant", "One moment.", (CALL_A, CALL_B)),
        ChatMessage("tool", "18 °C", call_id="a"),
        ChatMessage("tool", "", call_id="b", failed=True),
        ChatMessage("user", "And?"),
    ]
    _, messages = to_converse(history, tools_offered=True)
    assert messages[1:] == [
        {
            "role": "assistant",
            "content": [
                {"text": "One moment."},
                {"toolUse": {"toolUseId": "a", "name": "get_weather", "input": {"city": "Paris"}}},
                {"toolUse": {"toolUseId": "b", "name": "get_time", "input": {}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "a", "content": [{"text": "18 °C"}], "status": "success"}},
                {"toolResult": {"toolUseId": "b", "content": [{"text": EMPTY_RESULT}], "status": "error"}},
                {"text": "And?"},
            ],
        },
    ]
    _bedrock_ok(history, (WEATHER, CLOCK))
    _bedrock_ok(history)  # as text


def test_converse_calls_and_results_as_text_without_tools() -> None:
    history = [
        ChatMessage("user", "Weather?"),
        ChatMessage("assistant", "One moment.", (CALL_A,)),
        ChatMessage("tool", "18 °C", call_id="a"),
    ]
    assert to_converse(history)[1][1:] == [
        {"role": "assistant", "content": [{"text": 'One moment.\n\n[called get_weather {"city": "Paris"}]'}]},
        {"role": "user", "content": [{"text": "[result of get_weather: 18 °C]"}]},
    ]


def test_converse_drops_a_leading_call_with_its_result() -> None:
    history = [
        ChatMessage("assistant", "", (CALL_A,)),
        ChatMessage("tool", "18 °C", call_id="a"),
        ChatMessage("user", "Thanks"),
    ]
    assert to_converse(history, tools_offered=True)[1] == [{"role": "user", "content": [{"text": "Thanks"}]}]
    with pytest.raises(ProviderError, match="no user message"):
        to_converse(history[:2], tools_offered=True)


def test_tool_use_ids_and_inputs_as_bedrock_takes_them() -> None:
    assert tool_use_id("tooluse_AbC-1.2:3") == "tooluse_AbC-1.2:3"
    odd = tool_use_id("call with spaces/and slashes")
    assert odd == tool_use_id("call with spaces/and slashes") and odd.startswith("call_")
    assert tool_use_id("x" * 65) != tool_use_id("x" * 66)
    assert tool_input(PARIS) == {"city": "Paris"}
    assert tool_input("") == {} and tool_input("  ") == {}
    assert tool_input('{"city": "Par') == {"_raw": '{"city": "Par'}
    assert tool_input("[1]") == {"_raw": "[1]"}
    history = [
        ChatMessage("user", "Go"),
        ChatMessage("assistant", "", (ToolCall("id with space", "get_weather", "{broken"),)),
        ChatMessage("tool", "bad arguments", call_id="id with space", failed=True),
    ]
    _bedrock_ok(history, (WEATHER,))


def test_bedrock_tool_config() -> None:
    assert tool_config((), "auto") is None
    assert tool_config((WEATHER,), "none") is None
    assert tool_config((WEATHER, CLOCK), "auto") == {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": "The weather now.",
                    "inputSchema": {"json": _schema()},
                }
            },
            {"toolSpec": {"name": "get_time", "inputSchema": {"json": {"type": "object", "properties": {}}}}},
        ]
    }
    assert (tool_config((WEATHER,), "required") or {})["toolChoice"] == {"any": {}}
    assert (tool_config((WEATHER,), "get_weather") or {})["toolChoice"] == {"tool": {"name": "get_weather"}}


def _schema() -> dict[str, Any]:
    return {"type": "object", "properties": {"city": {"type": "string"}}}


def test_tool_use_blocks_from_start_to_stop() -> None:
    blocks = ToolUseBlocks()
    blocks.start({"contentBlockIndex": 0, "start": {"image": {}}})  # not a tool use: not ours
    blocks.start({"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "get_weather"}}})
    blocks.start({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t2", "name": "get_time"}}})
    for piece in ('{"city"', ': "Paris"}'):
        blocks.delta(1, piece)
    assert blocks.unfinished
    assert blocks.stop(0) is None
    assert blocks.stop(1) == ToolCall("t1", "get_weather", PARIS)
    assert blocks.stop(2) == ToolCall("t2", "get_time", "{}")
    assert not blocks.unfinished


def test_malformed_tool_use_blocks_are_provider_errors() -> None:
    blocks = ToolUseBlocks()
    with pytest.raises(ProviderError, match="no tool use"):
        blocks.delta(0, "{}")
    with pytest.raises(ProviderError, match="malformed toolUse start"):
        blocks.start({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "", "name": "f"}}})
    blocks.start({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "f"}}})
    with pytest.raises(ProviderError, match="no tool use"):
        blocks.delta(0, {"not": "text"})
