"""What the language-model tool tests ask with, for every backend: the tools offered, the question, the
arguments a call to ``get_weather`` carries, and ``collect`` (a whole reply, text deltas and calls in order)."""

from __future__ import annotations

from agent.ports import ChatMessage, LanguageModel, ToolCall, ToolChoice, ToolSpec

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city now.",
    '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}',
)
CLOCK = ToolSpec("get_time")
ASK = (ChatMessage("system", "Be brief."), ChatMessage("user", "What is the weather in Paris?"))
PARIS = '{"city": "Paris"}'


async def collect(
    llm: LanguageModel,
    history: tuple[ChatMessage, ...] = ASK,
    tools: tuple[ToolSpec, ...] = (WEATHER,),
    tool_choice: ToolChoice = "auto",
) -> list[str | ToolCall]:
    """Everything ``llm`` streams for ``history`` in English, offered ``tools``."""
    return [item async for item in llm.stream_reply(history, language="en", tools=tools, tool_choice=tool_choice)]
