"""The local responder's streamed replies, read on the event loop; its calls of the clock tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from agent.adapters.local_responder import LocalResponder
from agent.adapters.local_responder_lines import LINES
from agent.adapters.local_responder_tools import CLOCK_FAILED
from agent.languages import LANGUAGES
from agent.ports import ChatMessage, LanguageModel, ToolCall, ToolSpec
from tests.unit.test_local_responder import ASKED, _fixed


async def _texts(stream: AsyncIterator[str | ToolCall]) -> list[str]:
    """The deltas of a reply that calls nothing."""
    items = [item async for item in stream]
    texts = [item for item in items if isinstance(item, str)]
    assert texts == items, items
    return texts


async def test_stream_reply_yields_word_deltas() -> None:
    responder = LocalResponder(now=_fixed)
    history = [ChatMessage("user", "Tell me a story")]
    deltas = await _texts(responder.stream_reply(history, language="en"))
    assert "".join(deltas) == responder.reply_text(history, language="en")
    assert len(deltas) > 50
    assert all(len(d.split()) == 1 for d in deltas)


async def test_stream_reply_delta_size() -> None:
    responder = LocalResponder(now=_fixed, delta_words=3)
    history = [ChatMessage("user", "hello")]
    deltas = await _texts(responder.stream_reply(history, language="en"))
    assert "".join(deltas) == responder.reply_text(history, language="en")
    assert all(len(d.split()) == 3 for d in deltas[:-1])
    assert 1 <= len(deltas[-1].split()) <= 3


@pytest.mark.parametrize("language", sorted(LINES))
async def test_stream_reply_in_each_language(language: str) -> None:
    responder = LocalResponder(now=_fixed)
    history = [ChatMessage("user", ASKED[language][0][0])]
    deltas = await _texts(responder.stream_reply(history, language=language))
    assert "".join(deltas) == responder.reply_text(history, language=language)
    assert len(deltas) >= 3  # streamed in pieces, also where words have no spaces between them


async def test_text_without_spaces_streams_cut_after_punctuation() -> None:
    responder = LocalResponder(now=_fixed)
    deltas = await _texts(responder.stream_reply([ChatMessage("user", "你好")], language="zh"))
    assert deltas[0] == "您好！"
    assert all(d[-1] in "！，。？" for d in deltas), deltas


CLOCK_TOOLS = (ToolSpec("get_time", "The time now."), ToolSpec("get_weather", "The weather in a city."))
CLOCK_OUTPUT = '{"time":"14:05","date":"2026-12-05","weekday":"Saturday","timezone":"UTC","iso":"2026-12-05T14:05:00Z"}'
TIME_ASKED = {
    "en": ["What time is it?", "what's the time", "Tell me the time, please."],
    **{language: [text for text, intent in asked if intent == "time"] for language, asked in ASKED.items()},
}


def _stream(
    history: list[ChatMessage], language: str = "en", tools: tuple[ToolSpec, ...] = CLOCK_TOOLS, choice: str = "auto"
) -> AsyncIterator[str | ToolCall]:
    model: LanguageModel = LocalResponder(now=_fixed)  # it is a LanguageModel, tools and all
    return model.stream_reply(history, language=language, tools=tools, tool_choice=choice)


async def _said(
    history: list[ChatMessage], language: str = "en", tools: tuple[ToolSpec, ...] = CLOCK_TOOLS, choice: str = "auto"
) -> list[str | ToolCall]:
    return [item async for item in _stream(history, language, tools, choice)]


async def _spoken(
    history: list[ChatMessage], language: str = "en", tools: tuple[ToolSpec, ...] = CLOCK_TOOLS, choice: str = "auto"
) -> str:
    return "".join(await _texts(_stream(history, language, tools, choice)))


def _answered(output: str, *, failed: bool = False, asked: str = "What time is it?") -> list[ChatMessage]:
    call = ToolCall("call_1", "get_time", "{}")
    return [
        ChatMessage("user", asked),
        ChatMessage("assistant", "", calls=(call,)),
        ChatMessage("tool", output, call_id="call_1", failed=failed),
    ]


def test_every_language_asks_the_time_somehow() -> None:
    assert set(TIME_ASKED) == set(LANGUAGES) == set(CLOCK_FAILED)
    assert all(TIME_ASKED.values())


@pytest.mark.parametrize(("language", "text"), [(k, t) for k, v in TIME_ASKED.items() for t in v])
async def test_offered_the_clock_it_calls_it_for_the_time_and_says_nothing(language: str, text: str) -> None:
    [call] = await _said([ChatMessage("user", text)], language)
    assert isinstance(call, ToolCall)
    assert (call.name, call.arguments) == ("get_time", "{}")
    assert call.call_id.startswith("call_") and len(call.call_id) > 10


async def test_each_call_has_an_id_of_its_own() -> None:
    asked = [ChatMessage("user", "What time is it?")]
    ids = {call.call_id for _ in range(20) for call in await _said(asked) if isinstance(call, ToolCall)}
    assert len(ids) == 20


@pytest.mark.parametrize(
    ("tools", "choice"),
    [
        ((), "auto"),
        ((ToolSpec("get_weather"),), "auto"),
        (CLOCK_TOOLS, "none"),
        (CLOCK_TOOLS, "get_weather"),
    ],
)
async def test_without_the_clock_to_call_it_reads_its_own(tools: tuple[ToolSpec, ...], choice: str) -> None:
    assert await _spoken([ChatMessage("user", "What time is it?")], tools=tools, choice=choice) == ("It's 3:05 PM.")


@pytest.mark.parametrize("choice", ["auto", "required", "get_time"])
async def test_a_choice_that_allows_the_clock_calls_it(choice: str) -> None:
    [call] = await _said([ChatMessage("user", "What time is it?")], choice=choice)
    assert isinstance(call, ToolCall)


async def test_other_questions_are_answered_as_ever_with_tools_offered() -> None:
    for text in ("Tell me a joke", "What's the date?", "Hello", ""):
        history = [ChatMessage("user", text)]
        assert await _spoken(history) == LocalResponder(now=_fixed).reply_text(history, language="en")


@pytest.mark.parametrize("language", sorted(TIME_ASKED))
async def test_the_clocks_answer_is_spoken_as_the_time_in_the_calls_language(language: str) -> None:
    deltas = await _texts(_stream(_answered(CLOCK_OUTPUT, asked=TIME_ASKED[language][0]), language))
    expected = "It's 2:05 PM." if language == "en" else LINES[language].time(datetime(2026, 12, 5, 14, 5))
    assert "".join(deltas) == expected
    assert len(deltas) >= 2 or language in ("zh", "ja")  # streamed as any reply (a short one without spaces: whole)


@pytest.mark.parametrize("language", sorted(TIME_ASKED))
async def test_a_failed_call_is_an_apology_in_the_calls_language(language: str) -> None:
    assert await _spoken(_answered("the clock tool timed out", failed=True), language) == CLOCK_FAILED[language]
    assert CLOCK_FAILED["en"] == "Sorry, I couldn't read the clock."


@pytest.mark.parametrize(
    "output", ["not json", "{}", "[]", '{"time": 1405}', '{"time": "25:00"}', '{"time": "14h05"}', '"14:05"']
)
async def test_an_answer_without_a_time_is_an_apology_too(output: str) -> None:
    assert await _spoken(_answered(output)) == "Sorry, I couldn't read the clock."


async def test_a_result_is_answered_even_when_no_tool_is_offered_any_more() -> None:
    assert await _spoken(_answered('{"time": "9:30"}'), tools=()) == "It's 9:30 AM."


async def test_the_clocks_result_among_parallel_results_is_found() -> None:
    history = [
        ChatMessage("user", "What time is it?"),
        ChatMessage("assistant", "", calls=(ToolCall("c1", "get_time"), ToolCall("c2", "get_weather"))),
        ChatMessage("tool", CLOCK_OUTPUT, call_id="c1"),
        ChatMessage("tool", '{"sky": "sunny"}', call_id="c2"),
    ]
    assert await _spoken(history) == "It's 2:05 PM."


async def test_after_another_tools_result_it_never_calls_again() -> None:
    history = [
        ChatMessage("user", "What time is it?"),
        ChatMessage("assistant", "", calls=(ToolCall("c2", "get_weather"),)),
        ChatMessage("tool", '{"sky": "sunny"}', call_id="c2"),
    ]
    assert await _spoken(history) == "It's 3:05 PM."


async def test_a_later_question_calls_the_clock_again() -> None:
    history = [*_answered(CLOCK_OUTPUT), ChatMessage("assistant", "It's 2:05 PM."), ChatMessage("user", "And now?")]
    assert await _spoken(history)  # "And now?" does not ask the time: an answer, not a call
    [call] = await _said([*history, ChatMessage("user", "What time is it now?")])
    assert isinstance(call, ToolCall) and call.name == "get_time"
