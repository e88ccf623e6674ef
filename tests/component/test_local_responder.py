"""The local responder's streamed replies, read on the event loop."""

from __future__ import annotations

import pytest

from agent.adapters.local_responder import LocalResponder
from agent.adapters.local_responder_lines import LINES
from agent.ports import ChatMessage
from tests.unit.test_local_responder import ASKED, _fixed


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


@pytest.mark.parametrize("language", sorted(LINES))
async def test_stream_reply_in_each_language(language: str) -> None:
    responder = LocalResponder(now=_fixed)
    history = [ChatMessage("user", ASKED[language][0][0])]
    deltas = [d async for d in responder.stream_reply(history, language)]
    assert "".join(deltas) == responder.reply_text(history, language)
    assert len(deltas) >= 3  # streamed in pieces, also where words have no spaces between them


async def test_text_without_spaces_streams_cut_after_punctuation() -> None:
    responder = LocalResponder(now=_fixed)
    deltas = [d async for d in responder.stream_reply([ChatMessage("user", "你好")], "zh")]
    assert deltas[0] == "您好！"
    assert all(d[-1] in "！，。？" for d in deltas), deltas
