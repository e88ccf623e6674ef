"""The shapes of the OpenAI chat-completions wire: a history as ``messages``, the tools offered, streamed calls.

Reason to change: the chat-completions request and chunk format, as OpenAI documents it and vLLM, Ollama and
llama.cpp serve it. Pure: no I/O (the HTTP client is ``agent.adapters.openai_compat_llm``).

A history is written as OpenAI asks (``llm_tools.paired`` first puts every result right after its call): an
assistant message with calls is ``{"role": "assistant", "content": text or null, "tool_calls": [...]}``, a result
is ``{"role": "tool", "tool_call_id": ..., "content": text}``; the wire has no status for a failed result, so
its text is prefixed ``error: ``. A stream's ``choices[0].delta.tool_calls`` fragments are put together by
``index`` (``ToolCallFragments``): the id and the name come in a call's first fragment, its arguments in pieces.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.adapters.llm_tools import ToolResult, paired, parameters_schema
from agent.errors import ProviderError
from agent.ports import ChatMessage, ToolCall, ToolChoice, ToolSpec

PROVIDER = "openai"
CHOICES = ("auto", "none", "required")
"""The ``tool_choice`` values sent as they are; any other is the name of the one tool the model must call."""

FAILED_PREFIX = "error: "


def chat_messages(history: Sequence[ChatMessage], system_prompt: str = "") -> list[dict[str, Any]]:
    """The ``messages`` of a request for ``history``; ``system_prompt`` leads when the history has no system
    message. Messages with no text are left out, except an assistant message that made calls (its ``content`` is
    then ``null``) and tool results."""
    messages: list[dict[str, Any]] = []
    for item in paired(history):
        if isinstance(item, ToolResult):
            text = FAILED_PREFIX + item.text if item.failed else item.text
            messages.append({"role": "tool", "tool_call_id": item.call.call_id, "content": text})
        elif item.role == "assistant" and item.calls:
            messages.append(
                {
                    "role": "assistant",
                    "content": item.text if item.text.strip() else None,
                    "tool_calls": [_wire_call(call) for call in item.calls],
                }
            )
        elif item.text.strip():
            messages.append({"role": item.role, "content": item.text})
    if system_prompt.strip() and not any(m.role == "system" for m in history):
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def _wire_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def tool_fields(tools: Sequence[ToolSpec], tool_choice: ToolChoice) -> dict[str, Any]:
    """The request's ``tools`` and ``tool_choice``, or nothing when no tools are offered (a server may refuse a
    ``tool_choice`` without ``tools``). Raises ``ProviderError`` for a spec whose parameters are not a JSON object
    schema."""
    if not tools:
        return {}
    functions: list[dict[str, Any]] = []
    for spec in tools:
        function: dict[str, Any] = {"name": spec.name}
        if spec.description:
            function["description"] = spec.description
        function["parameters"] = parameters_schema(spec, PROVIDER)
        functions.append({"type": "function", "function": function})
    choice: str | dict[str, Any] = tool_choice
    if tool_choice not in CHOICES:
        choice = {"type": "function", "function": {"name": tool_choice}}
    return {"tools": functions, "tool_choice": choice}


@dataclass(slots=True)
class _Partial:
    index: int
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _malformed(what: str, fragment: object) -> ProviderError:
    return ProviderError(PROVIDER, f"malformed tool call fragment ({what}): {str(fragment)[:120]!r}")


class ToolCallFragments:
    """Puts the ``delta.tool_calls`` fragments of one streamed reply together into calls.

    ``feed`` each chunk's ``delta.get("tool_calls")`` (``None`` is nothing); ``finish`` when the stream says the
    calls are complete (a ``finish_reason``, or ``[DONE]``): it returns them in ``index`` order and forgets them.
    A fragment with an id other than the one its index already has starts a new call (Ollama gives every call of a
    parallel batch index 0); a call with no id gets a made-up one (``call_`` and 24 hex digits, unique), one with
    no arguments ``{}``. Raises ``ProviderError`` for a malformed fragment or a call without a name.
    """

    def __init__(self) -> None:
        self._calls: list[_Partial] = []
        self._by_index: dict[int, _Partial] = {}

    def feed(self, fragments: object) -> None:
        if fragments is None:
            return
        if not isinstance(fragments, list):
            raise _malformed("not a list", fragments)
        for fragment in fragments:
            if not isinstance(fragment, dict):
                raise _malformed("not an object", fragment)
            index = fragment.get("index")
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise _malformed("no index", fragment)
            call_id = fragment.get("id") or ""
            function = fragment.get("function") or {}
            if not isinstance(call_id, str) or not isinstance(function, dict):
                raise _malformed("id or function", fragment)
            name = function.get("name") or ""
            arguments = function.get("arguments") or ""
            if not isinstance(name, str) or not isinstance(arguments, str):
                raise _malformed("name or arguments", fragment)
            call = self._by_index.get(index)
            if call is None or (call_id and call.call_id and call_id != call.call_id):
                call = _Partial(index)
                self._calls.append(call)
                self._by_index[index] = call
            call.call_id = call.call_id or call_id
            call.name = call.name or name
            if arguments:
                call.arguments.append(arguments)

    def finish(self) -> list[ToolCall]:
        calls = sorted(self._calls, key=lambda call: call.index)  # stable: a reused index keeps arrival order
        self._calls, self._by_index = [], {}
        done: list[ToolCall] = []
        for call in calls:
            if not call.name:
                raise ProviderError(PROVIDER, f"a streamed tool call (index {call.index}) has no function name")
            call_id = call.call_id or f"call_{uuid.uuid4().hex[:24]}"
            done.append(ToolCall(call_id, call.name, "".join(call.arguments) or "{}"))
        return done
