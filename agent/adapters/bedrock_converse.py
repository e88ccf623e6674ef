"""The shapes of Bedrock's Converse wire: a history as ``system`` and ``messages``, the ``toolConfig``, streamed calls.

Reason to change: the ConverseStream request and event format (the ``bedrock-runtime`` service model). Pure: no
I/O (the client is ``agent.adapters.bedrock_llm``).

Bedrock wants the messages to start with a user message and alternate roles; a call is a ``toolUse`` block of an
assistant message, its result a ``toolResult`` block of the user message after it (``llm_tools.paired`` puts
it there; ``status`` ``error`` for a failed result). Bedrock refuses ``toolUse`` / ``toolResult`` blocks in a
request without a ``toolConfig``, and has no ``none`` tool choice: when no tools are offered (or the choice is
``none``) the request has no ``toolConfig`` and a history's past calls and results are written as text instead
(``[called get_weather {"city": "Paris"}]``, ``[result of get_weather: 18 °C]``, ``[get_weather failed: ...]``),
so the model still knows what happened.

A call's ``toolUse.input`` must be a JSON object: arguments that are not one (the model wrote broken JSON) are
sent as ``{"_raw": "<what it wrote>"}``, so the model sees its own mistake next to the result that says what
went wrong. Call ids are sent as they are when Bedrock's pattern allows them (``[a-zA-Z0-9_.:-]``, at most 64),
else as a stable digest of them (the same in the call and its result).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.adapters.llm_tools import ToolResult, paired, parameters_schema
from agent.errors import ProviderError
from agent.ports import ChatMessage, ToolCall, ToolChoice, ToolSpec

PROVIDER = "bedrock"

ConverseMessage = dict[str, Any]
Block = dict[str, Any]

_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")


def to_converse(
    history: Sequence[ChatMessage], tools_offered: bool = False
) -> tuple[list[dict[str, str]], list[ConverseMessage]]:
    """Split a history into Converse ``system`` blocks and ``messages``.

    Leading messages before the first user message are dropped (with the results of their calls); consecutive
    messages of one role are merged into one, their blocks in order, two texts that meet joined by a blank line
    (so a history without calls has one text block per message, as before tools).
    Empty texts are skipped. ``tools_offered``: the request has a ``toolConfig``, so calls and results are
    ``toolUse`` / ``toolResult`` blocks; otherwise they are written as text. Raises ``ProviderError`` if no user
    message remains.
    """
    system = [{"text": m.text} for m in history if m.role == "system" and m.text.strip()]
    turns: list[tuple[str, list[Block]]] = []
    for item in paired(history):
        if isinstance(item, ToolResult):
            role, blocks = "user", [_result_block(item) if tools_offered else {"text": result_as_text(item)}]
        elif item.role == "system":
            continue
        else:
            role = "user" if item.role == "user" else "assistant"
            blocks = [{"text": item.text.strip()}] if item.text.strip() else []
            calls = item.calls if role == "assistant" else ()
            blocks += [_use_block(call) if tools_offered else {"text": call_as_text(call)} for call in calls]
        if not blocks or (not turns and (role != "user" or isinstance(item, ToolResult))):
            continue
        if not turns or turns[-1][0] != role:
            turns.append((role, []))
        for block in blocks:
            _merge(turns[-1][1], block)
    if not turns:
        raise ProviderError(PROVIDER, "the conversation has no user message")
    return system, [{"role": role, "content": blocks} for role, blocks in turns]


def _merge(into: list[Block], block: Block) -> None:
    """Add ``block`` to a message's content: a text after a text joins it, after a blank line."""
    if into and set(into[-1]) == {"text"} and set(block) == {"text"}:
        into[-1] = {"text": f"{into[-1]['text']}\n\n{block['text']}"}
    else:
        into.append(block)


def call_as_text(call: ToolCall) -> str:
    """A past call written as text, for a request that offers no tools."""
    return f"[called {call.name} {call.arguments}]"


def result_as_text(result: ToolResult) -> str:
    """A past result written as text, for a request that offers no tools."""
    if result.failed:
        return f"[{result.call.name} failed: {result.text}]"
    return f"[result of {result.call.name}: {result.text}]"


def tool_use_id(call_id: str) -> str:
    """``call_id`` as Bedrock accepts a ``toolUseId``: itself when its pattern allows, else a stable digest."""
    if _TOOL_USE_ID.fullmatch(call_id):
        return call_id
    return "call_" + hashlib.sha256(call_id.encode()).hexdigest()[:32]


def tool_input(arguments: str) -> dict[str, Any]:
    """A call's arguments as ``toolUse.input``: the JSON object they are, ``{}`` when empty, else
    ``{"_raw": arguments}``."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def _use_block(call: ToolCall) -> Block:
    return {"toolUse": {"toolUseId": tool_use_id(call.call_id), "name": call.name, "input": tool_input(call.arguments)}}


def _result_block(result: ToolResult) -> Block:
    return {
        "toolResult": {
            "toolUseId": tool_use_id(result.call.call_id),
            "content": [{"text": result.text}],
            "status": "error" if result.failed else "success",
        }
    }


def tool_config(tools: Sequence[ToolSpec], tool_choice: ToolChoice) -> dict[str, Any] | None:
    """The request's ``toolConfig``, or ``None`` when no tools are offered or the choice is ``none``.

    ``required`` is ``{"any": {}}``, a tool's name ``{"tool": {"name": ...}}``; ``auto`` sends no ``toolChoice``
    (it is Bedrock's default, and some models refuse the field). Raises ``ProviderError`` for a spec whose
    parameters are not a JSON object schema.
    """
    if not tools or tool_choice == "none":
        return None
    specs: list[dict[str, Any]] = []
    for spec in tools:
        body: dict[str, Any] = {"name": spec.name}
        if spec.description:  # Bedrock refuses an empty description
            body["description"] = spec.description
        body["inputSchema"] = {"json": parameters_schema(spec, PROVIDER)}
        specs.append({"toolSpec": body})
    config: dict[str, Any] = {"tools": specs}
    if tool_choice == "required":
        config["toolChoice"] = {"any": {}}
    elif tool_choice != "auto":
        config["toolChoice"] = {"tool": {"name": tool_choice}}
    return config


@dataclass(slots=True)
class _Open:
    tool_use_id: str
    name: str
    input: list[str] = field(default_factory=list)


class ToolUseBlocks:
    """Puts a stream's ``toolUse`` content blocks together into calls.

    ``start`` takes a ``contentBlockStart`` event (blocks of other kinds are not ours), ``delta`` a
    ``contentBlockDelta``'s index and ``toolUse.input`` piece, ``stop`` a ``contentBlockStop``'s index and returns
    the finished call (``None`` for a block that was no tool use). ``unfinished``: a call was started and not
    stopped. Raises ``ProviderError`` for a malformed start or input for a block that did not start as one.
    """

    def __init__(self) -> None:
        self._open: dict[int, _Open] = {}

    def start(self, event: dict[str, Any]) -> None:
        use = (event.get("start") or {}).get("toolUse")
        if use is None:
            return
        tool_use_id, name = use.get("toolUseId"), use.get("name")
        if not isinstance(tool_use_id, str) or not tool_use_id or not isinstance(name, str) or not name:
            raise ProviderError(PROVIDER, f"malformed toolUse start: {str(use)[:120]!r}")
        self._open[int(event.get("contentBlockIndex", 0))] = _Open(tool_use_id, name)

    def delta(self, index: int, piece: object) -> None:
        block = self._open.get(index)
        if block is None or not isinstance(piece, str):
            raise ProviderError(PROVIDER, f"toolUse input for block {index}, which is no tool use")
        block.input.append(piece)

    def stop(self, index: int) -> ToolCall | None:
        block = self._open.pop(index, None)
        if block is None:
            return None
        return ToolCall(block.tool_use_id, block.name, "".join(block.input) or "{}")

    @property
    def unfinished(self) -> bool:
        return bool(self._open)
