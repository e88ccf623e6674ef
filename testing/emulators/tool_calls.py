"""What an emulated model's reply is made of when it may call tools: text, and the calls it makes.

A reply is a sequence of ``ReplyItem``: a ``str`` is a piece of text (one streamed delta), a ``Call`` a function
call (its arguments streamed in ``pieces`` fragments, as the services cut them mid-token). Each emulator writes
them in its own wire format (``testing.emulators.openai``, ``testing.emulators.bedrock``); a ``reply`` callable
given to an emulator returns them from the request, so a test can script a conversation over several requests
(first the call, then, once the request holds its result, the answer). ``last_results`` and ``user_text`` read a
request of either wire for that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Call:
    """A function call the emulated model makes. ``call_id``: ``None`` lets the emulator make one in its
    service's style (``call_…`` for OpenAI, ``tooluse_…`` for Bedrock)."""

    name: str
    arguments: str = "{}"
    call_id: str | None = None
    pieces: int = 3


ReplyItem = str | Call
Replier = Callable[[dict[str, Any]], Sequence[ReplyItem]]
"""Makes a reply from a valid request body."""


def split(text: str, pieces: int) -> list[str]:
    """``text`` cut into at most ``pieces`` consecutive non-empty parts (one part when it is short or empty)."""
    if pieces <= 1 or len(text) <= 1:
        return [text]
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)]


def last_results(body: dict[str, Any]) -> list[str]:
    """The texts of the tool results at the end of a request, of either wire (empty when it ends otherwise)."""
    messages = body.get("messages") or []
    if not messages or not isinstance(messages[-1], dict):
        return []
    last = messages[-1]
    if last.get("role") == "tool":  # OpenAI: one message per result
        results: list[str] = []
        for message in reversed(messages):
            if not isinstance(message, dict) or message.get("role") != "tool":
                break
            results.insert(0, str(message.get("content")))
        return results
    content = last.get("content")
    if last.get("role") == "user" and isinstance(content, list):  # Bedrock: toolResult blocks
        return [
            " ".join(str(part.get("text", "")) for part in block["toolResult"].get("content", []))
            for block in content
            if isinstance(block, dict) and "toolResult" in block
        ]
    return []


def user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a request, of either wire."""
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(str(b["text"]) for b in content if isinstance(b, dict) and "text" in b)
    return ""
