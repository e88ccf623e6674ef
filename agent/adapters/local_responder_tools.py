"""The offline responder's one tool, the clock: when it calls ``get_time``, and how it reads the clock's answer.

``LocalResponder`` (``agent.adapters.local_responder``) calls ``get_time`` when it is offered and the caller asks
the time, and speaks the time from the tool's output (``{"time": "14:05", ...}``: the clock tool of
``agent.adapters.clock_tools``), or the apology here, in the caller's language, when the call failed. Pure
functions and data; no I/O.

Reason to change: how the demo responder uses the clock tool, or what it says when the clock fails.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime

from agent.ports import ChatMessage, ToolCall, ToolChoice, ToolSpec

CLOCK_TOOL = "get_time"

CLOCK_FAILED: Mapping[str, str] = {
    "en": "Sorry, I couldn't read the clock.",
    "de": "Entschuldigung, ich konnte die Uhr nicht lesen.",
    "fr": "Pardon, je n'ai pas pu lire l'horloge.",
    "es": "Lo siento, no pude leer el reloj.",
    "it": "Mi dispiace, non riesco a leggere l'orologio.",
    "pt": "Desculpe, não consegui ler o relógio.",
    "ru": "Извините, не удалось узнать время.",
    "zh": "抱歉，我没能读到时钟。",
    "ja": "すみません、時計を読み取れませんでした。",
    "ko": "죄송합니다, 시계를 읽지 못했습니다.",
}
"""Said when the clock tool failed, timed out, or answered something that holds no time."""

_HH_MM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)", re.ASCII)


def offers_clock(tools: Sequence[ToolSpec], tool_choice: ToolChoice) -> bool:
    """``get_time`` is among ``tools`` and ``tool_choice`` lets the model call it."""
    allowed = tool_choice in ("auto", "required", CLOCK_TOOL)
    return allowed and any(tool.name == CLOCK_TOOL for tool in tools)


def clock_call() -> ToolCall:
    """A call of the clock, with an id of its own."""
    return ToolCall(call_id=f"call_{uuid.uuid4().hex[:24]}", name=CLOCK_TOOL, arguments="{}")


def clock_result(history: Sequence[ChatMessage]) -> ChatMessage | None:
    """The result of a ``get_time`` call among the tool messages that end ``history`` (the latest one), or
    ``None`` when the history does not end with one."""
    called = {call.call_id for m in history if m.role == "assistant" for call in m.calls if call.name == CLOCK_TOOL}
    for message in reversed(history):
        if message.role != "tool":
            return None
        if message.call_id in called:
            return message
    return None


def clock_time(output: str) -> datetime | None:
    """The time in the clock's output (its ``"time"``, ``"HH:MM"``) as a ``datetime`` of that hour and minute
    (the day is arbitrary: only the time is spoken); ``None`` when the output holds no time."""
    try:
        answer = json.loads(output)
    except (ValueError, RecursionError):
        return None
    time = answer.get("time") if isinstance(answer, dict) else None
    found = _HH_MM.fullmatch(time.strip()) if isinstance(time, str) else None
    if found is None:
        return None
    return datetime(2000, 1, 1, int(found[1]), int(found[2]))
