"""The offline responder: one test per intent, a fixed clock, streamed deltas."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from agent.adapters.local_responder import LocalResponder
from agent.ports import ChatMessage

CLOCK = datetime(2025, 3, 4, 15, 5)  # Tuesday, 4 March 2025, 3:05 PM


def _fixed() -> datetime:
    return CLOCK


def _reply(text: str, now: datetime = CLOCK) -> str:
    return LocalResponder(now=lambda: now).reply_text([ChatMessage("user", text)])


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


@pytest.mark.parametrize("text", ["Hello", "hi there!", "Hey.", "Good morning", "HELLO?!"])
def test_greeting_says_what_it_can_do(text: str) -> None:
    reply = _reply(text)
    assert reply.startswith("Hello!")
    assert "time" in reply
    assert "story" in reply


@pytest.mark.parametrize("text", ["What time is it?", "time please", "What's the time"])
def test_time_comes_from_the_injected_clock(text: str) -> None:
    assert _reply(text) == "It's 3:05 PM."


@pytest.mark.parametrize(
    ("now", "spoken"),
    [
        (datetime(2025, 1, 1, 0, 0), "It's 12:00 AM."),
        (datetime(2025, 1, 1, 9, 30), "It's 9:30 AM."),
        (datetime(2025, 1, 1, 12, 1), "It's 12:01 PM."),
        (datetime(2025, 1, 1, 23, 59), "It's 11:59 PM."),
    ],
)
def test_time_formatting(now: datetime, spoken: str) -> None:
    assert _reply("what time is it", now) == spoken


@pytest.mark.parametrize("text", ["What's the date?", "What day is it today", "today's date please"])
def test_date(text: str) -> None:
    assert _reply(text) == "Today is Tuesday, March fourth, 2025."


def test_date_ordinals() -> None:
    assert _reply("date", datetime(2024, 12, 31)) == "Today is Tuesday, December thirty-first, 2024."
    assert _reply("date", datetime(2024, 2, 22)) == "Today is Thursday, February twenty-second, 2024."


@pytest.mark.parametrize("text", ["Tell me a story", "story time? no, a story!"])
def test_story_is_several_sentences(text: str) -> None:
    reply = _reply("Tell me a story")
    assert 6 <= len(_sentences(reply)) <= 8
    assert _reply(text) == reply


@pytest.mark.parametrize("text", ["help", "What can you do?"])
def test_help_lists_capabilities(text: str) -> None:
    reply = _reply(text)
    assert "offline" in reply
    assert "story" in reply
    assert "joke" in reply


@pytest.mark.parametrize("text", ["thanks", "Thank you!", "thanks a lot"])
def test_thanks(text: str) -> None:
    assert _reply(text).startswith("You're welcome")


@pytest.mark.parametrize("text", ["bye", "Goodbye.", "OK bye now"])
def test_goodbye(text: str) -> None:
    assert _reply(text).startswith("Goodbye")


def test_joke() -> None:
    assert "scarecrow" in _reply("Tell me a joke")


@pytest.mark.parametrize("text", ["Who are you?", "what's your name"])
def test_who_are_you_is_honest(text: str) -> None:
    reply = _reply(text)
    assert "offline demo responder" in reply
    assert "language model" in reply


@pytest.mark.parametrize("text", ["", "   ", "?!", "..."])
def test_empty_text_asks_to_repeat(text: str) -> None:
    assert _reply(text) == "Sorry, I didn't catch that. Could you say it again?"


def test_anything_else_is_echoed() -> None:
    reply = _reply("Please cancel my order.")
    assert reply.startswith("You said: Please cancel my order. ")
    assert len(_sentences(reply)) == 2


def test_words_inside_other_words_do_not_trigger() -> None:
    assert _reply("this is whistling").startswith("You said: this is whistling.")


def test_replies_are_plain_spoken_text() -> None:
    texts = ["hello", "help", "story", "joke", "who are you", "thanks", "bye", "time", "date", "", "xyz"]
    for text in texts:
        reply = _reply(text)
        assert not re.search(r"[*#_`\[\]<>|]", reply), reply
        assert reply.endswith((".", "?", "!")), reply


def test_uses_only_the_last_user_message() -> None:
    history = [
        ChatMessage("system", "be nice"),
        ChatMessage("user", "tell me a joke"),
        ChatMessage("assistant", "Why did the scarecrow..."),
        ChatMessage("user", "what time is it"),
        ChatMessage("assistant", "hmm"),
    ]
    assert LocalResponder(now=_fixed).reply_text(history) == "It's 3:05 PM."
    assert LocalResponder(now=_fixed).reply_text([]).startswith("Sorry")


def test_is_deterministic() -> None:
    responder = LocalResponder(now=_fixed)
    history = [ChatMessage("user", "tell me a story")]
    assert responder.reply_text(history) == responder.reply_text(history)


async def test_stream_reply_yields_word_deltas() -> None:
    responder = LocalResponder(now=_fixed)
    history = [ChatMessage("user", "Tell me a story")]
    deltas = [d async for d in responder.stream_reply(history)]
    assert "".join(deltas) == responder.reply_text(history)
    assert len(deltas) > 50
    assert all(len(d.split()) == 1 for d in deltas)


async def test_stream_reply_delta_size() -> None:
    responder = LocalResponder(now=_fixed, delta_words=3)
    history = [ChatMessage("user", "hello")]
    deltas = [d async for d in responder.stream_reply(history)]
    assert "".join(deltas) == responder.reply_text(history)
    assert all(len(d.split()) == 3 for d in deltas[:-1])
    assert 1 <= len(deltas[-1].split()) <= 3


def test_delta_words_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LocalResponder(delta_words=0)
