"""Realtime function calling without sockets: the tools a client declares, the model's calls as ``function_call``
items of a response, the client's ``function_call_output`` items, and what is refused (issue 30).

The wire is driven with the core's events as the core sends them (``ToolCalled`` in stream order among the
reply's text, the reply ending after the round; ``ToolOutputAdded`` once the client's result joined the
conversation); every event it sends is parsed by the official ``openai`` package's model of its type.
"""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioStart,
    CreateResponse,
    DeleteMessage,
    ErrorNotice,
    MessageDeleted,
    PlaybackClear,
    ReplyText,
    ToolCalled,
    ToolOutputAdded,
    ToolResult,
)
from agent.core.policies import SessionConfig, ToolPolicy
from agent.ports import ToolCall, ToolSpec
from agent.runtime.call.socket import CallSocket
from agent.wires.realtime.codec import RealtimeError
from agent.wires.realtime.wire import RealtimeWire
from tests.component.test_realtime_conformance import Socket
from tests.unit.test_realtime_conformance import conforming, metrics, sent, update, wire

WEATHER: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather now in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CLOCK = {"type": "function", "name": "get_time"}
CALL = ToolCall("call_1", "get_weather", '{"city": "Paris"}')


def checked(events: list[dict[str, Any]], beta: bool) -> list[dict[str, Any]]:
    for event in events:
        conforming(event, beta=beta)
    return events


def with_tools(beta: bool = False, **session: Any) -> RealtimeWire:
    w = wire(beta)
    update(w, {"tools": [WEATHER, CLOCK], **session}).applied("local-preview")
    return w


def request(w: RealtimeWire, event: dict[str, Any]) -> Any:
    return w.decode(json.dumps(event))


def output(call_id: str, text: str, item_id: str | None = None) -> dict[str, Any]:
    item = {"type": "function_call_output", "call_id": call_id, "output": text}
    if item_id is not None:
        item["id"] = item_id
    return {"type": "conversation.item.create", "item": item}


# ------------------------------------------------------------------------------------------ declaring


@pytest.mark.parametrize("beta", [False, True], ids=["ga", "beta"])
def test_the_sessions_tools_are_exactly_what_the_model_may_call_and_are_echoed(beta: bool) -> None:
    w = wire(beta)
    created = checked(sent(w.opening("sess_1", "local-preview")), beta)[0]["session"]
    assert (created["tools"], created["tool_choice"]) == ([], "auto")
    change = update(w, {"tools": [WEATHER, CLOCK], "tool_choice": "required", "parallel_tool_calls": True})
    server_tool = ToolSpec("lookup_order")
    config = change.rules(
        SessionConfig(tools=ToolPolicy(specs=(server_tool,)), language="en"), SessionConfig(language="en")
    )
    assert config.tools.specs == (
        ToolSpec("get_weather", WEATHER["description"], json.dumps(WEATHER["parameters"]), runs_on="client"),
        ToolSpec("get_time", "", runs_on="client"),
    )
    assert (config.tools.choice, config.tools.client_waits) == ("required", False)
    session = checked(sent(change.applied("local-preview")), beta)[0]["session"]
    assert session["tools"] == [
        WEATHER,
        {**CLOCK, "description": "", "parameters": {"type": "object", "properties": {}}},
    ]
    assert session["tool_choice"] == "required"
    # An update that does not name them keeps them; an empty list takes them all away.
    change = update(w, {"instructions": "Be brief."})
    assert [
        spec.name for spec in change.rules(SessionConfig(language="en"), SessionConfig(language="en")).tools.specs
    ] == [
        "get_weather",
        "get_time",
    ]
    assert sent(change.applied("v"))[0]["session"]["tools"][0]["name"] == "get_weather"
    change = update(w, {"tools": [], "tool_choice": "auto"})
    assert change.rules(SessionConfig(language="en"), SessionConfig(language="en")).tools.specs == ()
    assert sent(change.applied("v"))[0]["session"]["tools"] == []


@pytest.mark.parametrize(
    ("choice", "beta", "echo"),
    [
        ({"type": "function", "name": "get_weather"}, False, {"type": "function", "name": "get_weather"}),
        ({"type": "function", "name": "get_weather"}, True, "get_weather"),  # beta tool_choice is a string
        ({"type": "function", "function": {"name": "get_weather"}}, True, "get_weather"),  # the Chat shape
        ("none", False, "none"),
    ],
)
def test_a_tool_choice_names_a_mode_or_one_of_the_tools(choice: Any, beta: bool, echo: Any) -> None:
    w = wire(beta)
    change = update(w, {"tools": [WEATHER], "tool_choice": choice})
    chosen = "none" if choice == "none" else "get_weather"
    assert change.rules(SessionConfig(language="en"), SessionConfig(language="en")).tools.choice == chosen
    assert checked(sent(change.applied("v")), beta)[0]["session"]["tool_choice"] == echo


@pytest.mark.parametrize(
    ("session", "code", "param"),
    [
        ({"tools": {"type": "function"}}, "invalid_value", "session.tools"),
        ({"tools": [WEATHER, {"type": "mcp", "server_label": "x"}]}, "unsupported_parameter", "session.tools[1].type"),
        ({"tools": [{**WEATHER, "strict": True}]}, "unknown_parameter", "session.tools[0].strict"),
        ({"tools": [{**WEATHER, "name": "get weather"}]}, "invalid_value", "session.tools[0].name"),
        ({"tools": [{**WEATHER, "description": 3}]}, "invalid_value", "session.tools[0].description"),
        ({"tools": [{**WEATHER, "parameters": "{}"}]}, "invalid_value", "session.tools[0].parameters"),
        ({"tools": [{**WEATHER, "parameters": {"type": "string"}}]}, "invalid_value", "session.tools[0].parameters"),
        ({"tools": [WEATHER, WEATHER]}, "invalid_value", "session.tools"),
        ({"tools": [{"name": f"f{i}"} for i in range(129)]}, "invalid_value", "session.tools"),
        ({"tool_choice": "sometimes"}, "invalid_value", "session.tool_choice"),
        ({"parallel_tool_calls": False}, "unsupported_parameter", "session.parallel_tool_calls"),
        ({"tool_choice": {"type": "mcp", "server_label": "x"}}, "unsupported_parameter", "session.tool_choice.type"),
        ({"tool_choice": {"type": "function"}}, "invalid_value", "session.tool_choice.name"),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "function", "name": "book"}},
            "invalid_value",
            "session.tool_choice",
        ),
        (
            {"tools": [{"name": "auto"}], "tool_choice": {"type": "function", "name": "auto"}},
            "unsupported_parameter",
            "session.tool_choice.name",
        ),
    ],
)
def test_bad_tools_are_refused_with_the_parameter_and_change_nothing(
    session: dict[str, Any], code: str, param: str
) -> None:
    w = with_tools()
    with pytest.raises(RealtimeError) as info:
        request(w, {"type": "session.update", "event_id": "evt_t", "session": session})
    error = checked(sent(w.encode(ErrorNotice(info.value.code, info.value.message))), False)[0]["error"]
    assert (error["code"], error["param"], error["event_id"]) == (code, param, "evt_t")
    assert [spec.name for spec in w.view.tools] == ["get_weather", "get_time"] and w.view.tool_choice == "auto"


def test_a_choice_must_name_a_tool_the_session_keeps() -> None:
    w = with_tools(tool_choice={"type": "function", "name": "get_time"})
    with pytest.raises(RealtimeError) as info:  # the tools change, and the forced one is gone
        update(w, {"tools": [WEATHER]})
    assert (info.value.code, info.value.param) == ("invalid_value", "session.tools")
    change = update(w, {"tool_choice": {"type": "function", "name": "get_weather"}})  # one declared before
    assert change.rules(SessionConfig(language="en"), SessionConfig(language="en")).tools.choice == "get_weather"


def test_a_response_may_repeat_the_sessions_tools_but_not_change_them() -> None:
    w = with_tools()
    same = {"tools": [WEATHER, CLOCK], "tool_choice": "auto", "parallel_tool_calls": True, "instructions": "x"}
    assert request(w, {"type": "response.create", "response": same}) == CreateResponse("x")
    for response, param in (
        ({"tools": [WEATHER]}, "response.tools"),
        ({"tools": []}, "response.tools"),
        ({"tool_choice": "none"}, "response.tool_choice"),
        ({"tool_choice": {"type": "function", "name": "get_time"}}, "response.tool_choice"),
        ({"tool_choice": {"type": "function", "name": "nope"}}, "response.tool_choice"),
        ({"parallel_tool_calls": False}, "response.parallel_tool_calls"),
    ):
        with pytest.raises(RealtimeError) as info:
            request(w, {"type": "response.create", "response": response})
        assert info.value.param == param, response
        assert info.value.code == ("invalid_value" if "nope" in str(response) else "unsupported_parameter")


# --------------------------------------------------------------------------------------------- calls


@pytest.mark.parametrize("beta", [False, True], ids=["ga", "beta"])
def test_a_response_that_only_calls_a_tool_speaks_nothing(beta: bool) -> None:
    w = with_tools(beta)
    events = checked(sent(w.encode(ToolCalled(1, CALL))), beta)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.output_item.added",
        "conversation.item.created" if beta else "conversation.item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        *([] if beta else ["conversation.item.done"]),
    ]
    added, done = events[1]["item"], events[5]["item"]
    assert added == {
        "id": added["id"],
        "object": "realtime.item",
        "type": "function_call",
        "status": "in_progress",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": "",
    }
    assert done == {**added, "status": "completed", "arguments": '{"city": "Paris"}'}
    arguments = events[4]
    assert (arguments["call_id"], arguments["item_id"], arguments["output_index"]) == ("call_1", added["id"], 0)
    assert arguments["arguments"] == events[3]["delta"] == '{"city": "Paris"}'
    assert arguments.get("name") == (None if beta else "get_weather")  # the beta event has no name
    assert events[2]["previous_item_id"] is None
    # The reply ends after the round: no text, no audio.
    assert w.encode(ReplyText(1, "", done=True)) == []
    end = checked(sent(w.encode(metrics(1))), beta)
    assert [e["type"] for e in end] == ["response.done"]
    response = end[0]["response"]
    assert (response["status"], response["output"]) == ("completed", [done])
    assert response["id"] == events[0]["response"]["id"]


@pytest.mark.parametrize("beta", [False, True], ids=["ga", "beta"])
async def test_a_reply_that_speaks_and_calls_has_both_items_in_order(beta: bool) -> None:
    w = with_tools(beta)
    out = checked(sent(w.encode(ReplyText(1, "Let me check.", done=False))), beta)
    message = out[1]["item"]["id"]
    assert [e["output_index"] for e in out if "output_index" in e] == [0, 0, 0]
    out += checked(sent(w.encode(ToolCalled(1, CALL))), beta)
    out += checked(sent(w.encode(ToolCalled(1, ToolCall("call_2", "get_time")))), beta)
    calls = [e for e in out if e["type"] == "response.function_call_arguments.done"]
    assert [(e["call_id"], e["output_index"]) for e in calls] == [("call_1", 1), ("call_2", 2)]
    w.encode(AudioStart(1, 24000))
    socket = Socket()
    for payload in w.encode(AudioChunk(1, b"\x01\x00" * 480)):
        await w.send(cast(CallSocket, socket), 1, payload)
    (delta,) = checked(sent(socket.sent), beta)
    assert (delta["item_id"], delta["output_index"]) == (message, 0)
    out += sent(w.encode(ReplyText(1, "Let me check.", done=True)))
    end = checked(sent(w.encode(AudioEnd(1))), beta)
    response = end[-1]["response"]
    assert response["status"] == "completed"
    assert [(item["type"], item["id"]) for item in response["output"]] == [
        ("message", message),
        ("function_call", calls[0]["item_id"]),
        ("function_call", calls[1]["item_id"]),
    ]
    assert response["output"][0]["content"][0]["transcript"] == "Let me check."


async def test_text_after_a_call_is_the_next_output_item() -> None:
    w = with_tools()
    w.encode(ToolCalled(1, CALL))
    spoken = checked(sent(w.encode(ReplyText(1, "Checking.", done=False))), False)
    assert [e["type"] for e in spoken] == [
        "response.output_item.added",
        "conversation.item.added",
        "response.content_part.added",
        "response.output_audio_transcript.delta",
    ]
    assert {e["output_index"] for e in spoken if "output_index" in e} == {1}
    w.encode(AudioStart(1, 24000))
    socket = Socket()
    await w.send(cast(CallSocket, socket), 1, b"\x00\x00" * 100)
    assert json.loads(socket.sent[0])["output_index"] == 1
    w.encode(ReplyText(1, "Checking.", done=True))
    done = sent(w.encode(AudioEnd(1)))
    assert [i["type"] for i in done[-1]["response"]["output"]] == ["function_call", "message"]
    assert [e["output_index"] for e in done if e["type"] == "response.output_item.done"] == [1]


def test_a_cancelled_response_keeps_the_call_it_made() -> None:
    w = with_tools()
    w.encode(ToolCalled(1, CALL))
    w.encode(ReplyText(1, "And", done=False))
    w.encode(AudioStart(1, 24000))
    done = checked(sent(w.encode(PlaybackClear(1))), False)[-1]["response"]
    assert done["status"] == "cancelled"
    assert [(i["type"], i["status"]) for i in done["output"]] == [
        ("function_call", "completed"),
        ("message", "incomplete"),
    ]
    assert w.encode(ToolCalled(1, ToolCall("late", "get_time"))) == []  # nothing after response.done


def test_the_output_format_may_change_after_a_response_that_only_called_a_tool() -> None:
    w = with_tools()
    w.encode(ToolCalled(1, CALL))
    w.encode(metrics(1))
    update(w, {"output_audio_format": "g711_ulaw"}).applied("v")
    assert w.output_rate == 8000


# -------------------------------------------------------------------------------------------- outputs


@pytest.mark.parametrize("beta", [False, True], ids=["ga", "beta"])
def test_the_clients_output_joins_the_conversation_under_its_id(beta: bool) -> None:
    w = with_tools(beta)
    call_item = sent(w.encode(ToolCalled(1, CALL)))[1]["item"]["id"]
    w.encode(metrics(1))
    assert request(w, output("call_1", '{"sky": "sunny"}', "out_1")) == ToolResult("call_1", '{"sky": "sunny"}')
    added = checked(sent(w.encode(ToolOutputAdded(1, "call_1", '{"sky": "sunny"}'))), beta)
    assert [e["type"] for e in added] == (
        ["conversation.item.created"] if beta else ["conversation.item.added", "conversation.item.done"]
    )
    assert added[0]["previous_item_id"] == call_item
    assert added[0]["item"] == {
        "id": "out_1",
        "object": "realtime.item",
        "type": "function_call_output",
        "status": "completed",
        "call_id": "call_1",
        "output": '{"sky": "sunny"}',
    }
    # Without an id the server names it; a second output for the same call is refused.
    w.encode(ToolCalled(2, ToolCall("call_2", "get_time")))
    w.encode(metrics(2))
    request(w, output("call_2", ""))
    named = sent(w.encode(ToolOutputAdded(2, "call_2", "")))[0]["item"]
    assert named["id"].startswith("item_") and named["output"] == ""
    with pytest.raises(RealtimeError) as info:
        request(w, output("call_1", "again"))
    assert (info.value.code, info.value.param) == ("invalid_value", "item.call_id")
    with pytest.raises(RealtimeError) as info:
        request(w, output("call_3", "x", "out_1"))  # an id that is taken
    assert (info.value.code, info.value.param) == ("invalid_value", "item.id")


def test_an_output_for_an_unknown_call_is_refused_by_the_core_with_the_parameter() -> None:
    w = with_tools()
    request(w, {**output("call_9", "x", "mine"), "event_id": "evt_out"})
    error = checked(sent(w.encode(ErrorNotice("unknown_call", "no call 'call_9' was made"))), False)[0]["error"]
    assert (error["code"], error["param"], error["event_id"]) == ("unknown_call", "item.call_id", "evt_out")
    # The refused item's id is not kept for a later output of that call.
    w.encode(ToolCalled(1, ToolCall("call_9", "get_time")))
    w.encode(metrics(1))
    request(w, output("call_9", "noon"))
    assert sent(w.encode(ToolOutputAdded(1, "call_9", "noon")))[0]["item"]["id"] != "mine"


@pytest.mark.parametrize(
    ("item", "code", "param"),
    [
        (
            {"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": "{}"},
            "unsupported_parameter",
            "item.type",
        ),
        ({"type": "function_call_output", "output": "x"}, "invalid_value", "item.call_id"),
        ({"type": "function_call_output", "call_id": "c" * 129, "output": "x"}, "invalid_value", "item.call_id"),
        ({"type": "function_call_output", "call_id": "c", "output": {"sky": "sunny"}}, "invalid_value", "item.output"),
        ({"type": "function_call_output", "call_id": "c"}, "invalid_value", "item.output"),
    ],
)
def test_items_of_function_calling_that_are_refused(item: dict[str, Any], code: str, param: str) -> None:
    with pytest.raises(RealtimeError) as info:
        request(with_tools(), {"type": "conversation.item.create", "item": item})
    assert (info.value.code, info.value.param) == (code, param)


def test_an_output_goes_at_the_end_of_the_conversation() -> None:
    w = with_tools()
    w.encode(ToolCalled(1, CALL))
    with pytest.raises(RealtimeError) as info:
        request(w, {**output("call_1", "x"), "previous_item_id": "item_elsewhere"})
    assert info.value.param == "previous_item_id"


# ------------------------------------------------------------------------------------ truncate, delete


def test_a_call_and_its_output_go_with_their_reply() -> None:
    w = with_tools()
    message = sent(w.encode(ReplyText(1, "Let me see.", done=False)))[1]["item"]["id"]
    call = sent(w.encode(ToolCalled(1, CALL)))[0]["item"]["id"]
    w.encode(ReplyText(1, "Let me see.", done=True))
    w.encode(metrics(1))
    request(w, output("call_1", "sunny", "out_1"))
    w.encode(ToolOutputAdded(1, "call_1", "sunny"))
    for item in (call, "out_1"):
        with pytest.raises(RealtimeError) as info:
            request(w, {"type": "conversation.item.truncate", "item_id": item, "audio_end_ms": 0})
        assert (info.value.code, info.value.param) == ("invalid_value", "item_id")
        # Deleting any of them deletes the reply: the model is never shown a call without its result.
        assert request(w, {"type": "conversation.item.delete", "item_id": item}) == DeleteMessage(1, "assistant")
    deleted = checked(sent(w.encode(MessageDeleted(1, "assistant"))), False)
    assert [e["item_id"] for e in deleted] == [message, call, "out_1"]
    with pytest.raises(RealtimeError) as info:
        request(w, {"type": "conversation.item.delete", "item_id": call})
    assert info.value.code == "item_not_found"
    # The conversation now ends where it did before the reply: items go after that.
    with pytest.raises(RealtimeError):
        request(w, {**output("call_1", "x"), "previous_item_id": "out_1"})
