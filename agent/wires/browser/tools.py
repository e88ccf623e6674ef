"""Function calling on protocol v1 (``/ws``): the tools a ``session.start`` declares, the ``tool.result`` a client
sends back, and the ``tool.call`` and per-tool timings the server sends. Pure functions, no sockets.

Reason to change: what protocol v1 says about tools (docs/protocol.md, "Function calling").
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.core.events import ToolCalled, ToolResult, ToolTiming
from agent.errors import ProtocolError
from agent.ports import ToolSpec

MAX_TOOLS = 32
"""Tools one ``session.start`` may declare."""
MAX_DESCRIPTION_CHARS = 2048
MAX_PARAMETERS_CHARS = 16384
"""A tool's argument schema, as JSON text."""
MAX_SCHEMA_DEPTH = 32
"""Nesting of a tool's argument schema (objects and arrays within one another)."""
MAX_CALL_ID_CHARS = 256
NO_PARAMETERS = '{"type": "object", "properties": {}}'
_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}", re.ASCII)


def declared_tools(message: dict[str, Any]) -> tuple[ToolSpec, ...]:
    """The ``tools`` of a ``session.start`` (none when absent) as client-run ``ToolSpec``s, in their order.

    Each tool is ``{"name", "description", "parameters"}``, or OpenAI's ``{"type": "function", "name", ...}`` or
    ``{"type": "function", "function": {"name", ...}}``. Raises ``ProtocolError("bad_message")`` for anything
    else: a name that is not 1-64 letters, digits, ``_`` or ``-``, a name given twice, parameters that are not
    an object schema, more than ``MAX_TOOLS`` tools, or one over the size bounds above."""
    listed = message.get("tools")
    if listed is None:
        return ()
    if not isinstance(listed, list):
        raise ProtocolError("bad_message", "tools must be a list of function declarations")
    if len(listed) > MAX_TOOLS:
        raise ProtocolError("bad_message", f"at most {MAX_TOOLS} tools may be declared, got {len(listed)}")
    specs = tuple(_tool(i, tool) for i, tool in enumerate(listed))
    names = [spec.name for spec in specs]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise ProtocolError("bad_message", f"tools: the name {twice!r} is declared twice")
    return specs


def _tool(index: int, tool: Any) -> ToolSpec:
    where = f"tools[{index}]"
    if not isinstance(tool, dict):
        raise ProtocolError("bad_message", f"{where} must be an object with a name, a description and parameters")
    kind = tool.get("type", "function")
    if kind != "function":
        raise ProtocolError("bad_message", f"{where}: only tools of type 'function' are supported")
    inner = tool.get("function")
    if inner is not None:
        if not isinstance(inner, dict):
            raise ProtocolError("bad_message", f"{where}.function must be an object")
        tool, where = inner, f"{where}.function"
    name = tool.get("name")
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ProtocolError("bad_message", f"{where}.name must be 1-64 letters, digits, '_' or '-'")
    description = tool.get("description", "")
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_CHARS:
        raise ProtocolError(
            "bad_message", f"{where}.description must be a string of at most {MAX_DESCRIPTION_CHARS} characters"
        )
    _unicode(description, f"{where}.description")
    return ToolSpec(name, description, _parameters(tool.get("parameters"), where), runs_on="client")


def _parameters(schema: Any, where: str) -> str:
    """The argument schema as JSON text: an object schema (``{"type": "object", ...}``); none: no arguments."""
    if schema is None:
        return NO_PARAMETERS
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ProtocolError("bad_message", f'{where}.parameters must be a JSON schema of "type": "object"')
    if not isinstance(schema.get("properties", {}), dict):
        raise ProtocolError("bad_message", f"{where}.parameters.properties must be an object")
    if _too_deep(schema, MAX_SCHEMA_DEPTH):
        raise ProtocolError("bad_message", f"{where}.parameters nests deeper than {MAX_SCHEMA_DEPTH} levels")
    text = _json(schema, f"{where}.parameters")
    if len(text) > MAX_PARAMETERS_CHARS:
        raise ProtocolError("bad_message", f"{where}.parameters is over {MAX_PARAMETERS_CHARS} characters as JSON")
    return text


def _too_deep(value: Any, levels: int) -> bool:
    """``value`` nests objects and arrays more than ``levels`` deep (stops looking there: never recurses far)."""
    if not isinstance(value, dict | list):
        return False
    if levels == 0:
        return True
    children = value.values() if isinstance(value, dict) else value
    return any(_too_deep(child, levels - 1) for child in children)


def _json(value: Any, what: str) -> str:
    """``value`` as JSON text (strict: no NaN or infinities, no lone surrogates)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (ValueError, RecursionError):
        raise ProtocolError("bad_message", f"{what} must be plain JSON (no NaN or Infinity)") from None
    return _unicode(text, what)


def _unicode(text: str, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(
            "bad_message", f"{what} holds a lone surrogate (\\ud800-\\udfff): not valid Unicode"
        ) from None
    return text


def tool_result(message: dict[str, Any]) -> ToolResult:
    """A ``tool.result``: the client ran the call ``call_id``. ``output`` (a string, or any JSON, which the model
    is given as JSON text), or ``error`` (what went wrong, told to the model as a failed call); exactly one."""
    call_id = message.get("call_id")
    if not isinstance(call_id, str) or not 0 < len(call_id) <= MAX_CALL_ID_CHARS:
        raise ProtocolError("bad_message", f"tool.result needs the call's call_id: a string of 1-{MAX_CALL_ID_CHARS}")
    _unicode(call_id, "call_id")
    has_output, has_error = "output" in message, "error" in message
    if has_output == has_error:
        raise ProtocolError("bad_message", "tool.result needs exactly one of output (the result) and error")
    field = "output" if has_output else "error"
    value = message[field]
    text = _unicode(value, field) if isinstance(value, str) else _json(value, field)
    return ToolResult(call_id, text, ok=has_output)


def tool_call_body(event: ToolCalled) -> dict[str, Any]:
    """``tool.call``: ``arguments`` as the JSON object the model wrote, or as its text when it is not one."""
    call = event.call
    try:
        parsed = json.loads(call.arguments, parse_constant=_not_json)
    except (ValueError, RecursionError):
        parsed = None
    arguments = parsed if isinstance(parsed, dict) else call.arguments
    return {"type": "tool.call", "turn": event.turn, "call_id": call.call_id, "name": call.name, "arguments": arguments}


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def timings(tools: tuple[ToolTiming, ...]) -> list[dict[str, Any]]:
    """``turn.metrics``' ``tools``: each call the reply waited on, in order."""
    return [{"name": tool.name, "ms": tool.ms, "outcome": tool.outcome} for tool in tools]
