"""What the chat-model adapters share about tools: a history's calls paired with their results, a spec's schema.

Reason to change: what the chat wires (OpenAI ``tool_calls`` and ``tool`` messages, Bedrock ``toolUse`` and
``toolResult`` blocks) both require of the port's tool vocabulary. Both refuse a request in which a call has no
result right after it, or a result answers no call just before it; a history of the server's may hold either (a
call cut short by a barge-in, a result whose call was trimmed off the front of a long history, a caller who spoke
while a tool ran). ``paired`` gives each call its result, directly after the message that made it, so that one
bad turn can never make every later request of the conversation fail.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent.errors import ProviderError
from agent.ports import ChatMessage, ToolCall, ToolSpec

NO_RESULT = "no result: the call did not finish"
"""What a call whose result is missing from the history is said to have answered (a failed result)."""

EMPTY_RESULT = "(no output)"
"""What an empty result is sent as: both wires refuse an empty result of a failed call, and some models any."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of ``call``, as the history's ``tool`` message gave it (``failed``: the tool failed)."""

    call: ToolCall
    text: str
    failed: bool = False


Item = ChatMessage | ToolResult
"""A history message (``system``, ``user``, ``assistant``) or the result of a call of the assistant before it."""


def paired(history: Sequence[ChatMessage]) -> list[Item]:
    """The history with every ``tool`` message turned into the ``ToolResult`` of the call it answers.

    Each assistant message with calls is followed at once by one result per call, in the calls' order: a
    ``tool`` message answers the call of the same ``call_id`` when it stands after the call and before the next
    assistant message (so a user message between a call and its result moves after the result); a call without
    one gets a failed ``NO_RESULT``. A ``tool`` message that answers no such call (its call was trimmed off, or it
    is answered twice) becomes a user message saying what it was, so its content still reaches the model. Empty
    results read ``EMPTY_RESULT``. Pure; the input is not changed.
    """
    messages = list(history)
    placed: set[int] = set()
    items: list[Item] = []
    for i, message in enumerate(messages):
        if message.role == "tool":
            if i not in placed:
                items.append(ChatMessage("user", f"[result of an earlier tool call: {_result_text(message)}]"))
            continue
        items.append(message)
        if message.role != "assistant" or not message.calls:
            continue
        answers: list[int] = []
        for j in range(i + 1, len(messages)):
            if messages[j].role == "assistant":
                break
            if messages[j].role == "tool":
                answers.append(j)
        for call in message.calls:
            found = next((j for j in answers if j not in placed and messages[j].call_id == call.call_id), None)
            if found is None:
                items.append(ToolResult(call, NO_RESULT, failed=True))
                continue
            placed.add(found)
            items.append(ToolResult(call, _result_text(messages[found]), messages[found].failed))
    return items


def _result_text(message: ChatMessage) -> str:
    return message.text.strip() or EMPTY_RESULT


def parameters_schema(spec: ToolSpec, provider: str) -> dict[str, Any]:
    """The spec's parameters as a JSON object; ``ProviderError(provider)`` if they are not one (a request that
    cannot be made)."""
    try:
        schema = json.loads(spec.parameters)
    except ValueError as exc:
        raise ProviderError(provider, f"tool {spec.name!r}: its parameters are not JSON") from exc
    if not isinstance(schema, dict):
        raise ProviderError(provider, f"tool {spec.name!r}: its parameters are not a JSON object schema")
    return schema
