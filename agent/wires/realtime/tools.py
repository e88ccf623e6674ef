"""Function calling on the Realtime API, read and written (pure): the ``tools`` and ``tool_choice`` a client
declares, the ``function_call_output`` items it answers a call with, and the items a call and its result are in
the conversation. This module changes when the wire shape of function calling does.

A client's tools run on the client: each is a ``ToolSpec`` with ``runs_on="client"`` (the model's call goes to
the client as a ``function_call`` item; its result comes back as a ``function_call_output`` item). A choice is
kept as the core's ``ToolChoice``: ``auto``, ``none``, ``required``, or the name of the one function the model
must call (``{"type": "function", "name": ...}`` on the wire; beta clients may write the Chat Completions shape
``{"type": "function", "function": {"name": ...}}``). What this server cannot do (MCP tools, a ``function_call``
item written by the client) is refused with the parameter named.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.ports import ToolCall, ToolChoice, ToolSpec
from agent.wires.realtime.fields import MAX_TEXT_CHARS, RealtimeError, obj, optional_text

MAX_TOOLS = 128
MAX_CALL_ID_CHARS = 128
MODES = ("auto", "none", "required")
"""The choices that name no function."""
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TOOL_KEYS = frozenset({"type", "name", "description", "parameters"})


# ------------------------------------------------------------------------------------ tools and choice


def read_tools(value: Any, param: str) -> tuple[ToolSpec, ...] | None:
    """The function tools of ``tools`` (``None``: not given, or ``null``). Raises ``RealtimeError``."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise RealtimeError("invalid_value", f"{param} must be an array of tools", param)
    if len(value) > MAX_TOOLS:
        raise RealtimeError("invalid_value", f"{param} may hold at most {MAX_TOOLS} tools", param)
    specs = tuple(_tool(tool, f"{param}[{i}]") for i, tool in enumerate(value))
    names = [spec.name for spec in specs]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise RealtimeError("invalid_value", f"{param} declares {twice!r} twice", param)
    return specs


def _tool(value: Any, param: str) -> ToolSpec:
    tool = obj(value, param)
    kind = tool.get("type", "function")
    if kind != "function":
        raise RealtimeError(
            "unsupported_parameter",
            f"tools of type {str(kind)[:40]!r} are not supported: only function tools, which the client runs",
            f"{param}.type",
        )
    for key in tool:
        if key not in _TOOL_KEYS:
            raise RealtimeError("unknown_parameter", f"unknown parameter {param}.{key[:60]}", f"{param}.{key[:60]}")
    name = tool.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RealtimeError("invalid_value", f"{param}.name must be 1-64 letters, digits, '_' or '-'", f"{param}.name")
    description = optional_text(tool.get("description"), f"{param}.description") or ""
    parameters = tool.get("parameters")
    if parameters is None:
        return ToolSpec(name, description, runs_on="client")
    schema = obj(parameters, f"{param}.parameters")
    if schema.get("type", "object") != "object":
        raise RealtimeError(
            "invalid_value", f"{param}.parameters must be the JSON schema of an object", f"{param}.parameters"
        )
    return ToolSpec(name, description, json.dumps(schema), runs_on="client")


def read_choice(value: Any, param: str) -> ToolChoice | None:
    """The choice ``tool_choice`` says (``None``: not given, or ``null``). Raises ``RealtimeError``."""
    if value is None:
        return None
    if isinstance(value, str):
        if value not in MODES:
            raise RealtimeError(
                "invalid_value", f'{param} must be auto, none, required or {{"type": "function", "name": ...}}', param
            )
        return value
    choice = obj(value, param)
    kind = choice.get("type")
    if kind == "mcp":
        raise RealtimeError("unsupported_parameter", "MCP tools are not supported", f"{param}.type")
    if kind != "function":
        raise RealtimeError("invalid_value", f"{param}.type must be function", f"{param}.type")
    function = choice.get("function")
    name = function.get("name") if isinstance(function, dict) and "name" not in choice else choice.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RealtimeError("invalid_value", f"{param}.name must name one of the tools", f"{param}.name")
    if name in MODES:
        raise RealtimeError(
            "unsupported_parameter", f"a function named {name!r} cannot be the only one called here", f"{param}.name"
        )
    return name


def check_parallel(value: Any, param: str) -> None:
    """Refuses ``parallel_tool_calls: false``: the model here may always make several calls in one response."""
    if value not in (None, True):
        raise RealtimeError(
            "unsupported_parameter", "the model may always make parallel calls here (only true is taken)", param
        )


def settle(
    tools: tuple[ToolSpec, ...] | None,
    choice: ToolChoice | None,
    current: tuple[tuple[ToolSpec, ...], ToolChoice],
    where: str,
) -> tuple[tuple[ToolSpec, ...], ToolChoice]:
    """The tools and choice in effect once ``tools`` / ``choice`` (``None``: unchanged) replace ``current``'s.
    Raises ``RealtimeError`` when the choice would name a function that is not one of the tools."""
    specs = current[0] if tools is None else tools
    chosen = current[1] if choice is None else choice
    if chosen not in MODES and all(spec.name != chosen for spec in specs):
        param = f"{where}.tool_choice" if choice is not None else f"{where}.tools"
        raise RealtimeError("invalid_value", f"tool_choice names {chosen!r}, which is not one of the tools", param)
    return specs, chosen


def same_tools(
    tools: tuple[ToolSpec, ...] | None, choice: ToolChoice | None, current: tuple[tuple[ToolSpec, ...], ToolChoice]
) -> None:
    """Refuses a ``response.create`` that names other tools or another choice than the session's: there are
    none per response here (``current``: the session's). Raises ``RealtimeError``."""
    specs, chosen = settle(tools, choice, current, "response")
    if specs != current[0]:
        raise RealtimeError(
            "unsupported_parameter",
            "tools per response are not supported: set them with session.update",
            "response.tools",
        )
    if chosen != current[1]:
        raise RealtimeError(
            "unsupported_parameter",
            "tool_choice per response is not supported: set it with session.update",
            "response.tool_choice",
        )


def tools_json(specs: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    """The session's ``tools``, as the client declared them."""
    return [
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": json.loads(spec.parameters),
        }
        for spec in specs
    ]


def choice_json(choice: ToolChoice, *, beta: bool) -> str | dict[str, str]:
    """The session's ``tool_choice``: a mode, or the function to call (a bare name in the beta shape, whose
    ``tool_choice`` is a string)."""
    if choice in MODES or beta:
        return choice
    return {"type": "function", "name": choice}


# --------------------------------------------------------------------------------------------- items


def read_output(item: dict[str, Any]) -> tuple[str, str]:
    """The ``call_id`` and ``output`` of a ``function_call_output`` item. Raises ``RealtimeError``."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not 0 < len(call_id) <= MAX_CALL_ID_CHARS:
        raise RealtimeError(
            "invalid_value", f"item.call_id must be a string of 1-{MAX_CALL_ID_CHARS} characters", "item.call_id"
        )
    output = item.get("output")
    if not isinstance(output, str) or len(output) > MAX_TEXT_CHARS:
        raise RealtimeError(
            "invalid_value", f"item.output must be a string of at most {MAX_TEXT_CHARS} characters", "item.output"
        )
    return call_id, output


def call_item(item_id: str, call: ToolCall, status: str) -> dict[str, Any]:
    """The ``function_call`` item of the model's ``call`` (``arguments`` empty while it is ``in_progress``)."""
    return {
        "id": item_id,
        "object": "realtime.item",
        "type": "function_call",
        "status": status,
        "call_id": call.call_id,
        "name": call.name,
        "arguments": "" if status == "in_progress" else call.arguments,
    }


def output_item(item_id: str, call_id: str, output: str) -> dict[str, Any]:
    """The ``function_call_output`` item of the client's result of call ``call_id``."""
    return {
        "id": item_id,
        "object": "realtime.item",
        "type": "function_call_output",
        "status": "completed",
        "call_id": call_id,
        "output": output,
    }
