from __future__ import annotations

import pytest

from agent.core.chunker import SentenceChunker
from agent.core.lexicon import LEXICONS, abbreviations

EN = abbreviations("en")


def run(deltas: list[str], **kw: int) -> list[str]:
    chunker = SentenceChunker(EN, **kw)
    out: list[str] = []
    for d in deltas:
        out += chunker.push(d)
    return out + chunker.flush()


def test_sentences_cut_as_they_complete() -> None:
    chunker = SentenceChunker(EN)
    assert chunker.push("Hello there, friend") == []
    assert chunker.push(".") == []  # the terminator needs the following space to be sure
    assert chunker.push(" How are you? I") == ["Hello there, friend.", "How are you?"]
    assert chunker.flush() == ["I"]


def test_word_by_word_stream_equals_whole() -> None:
    text = "Once upon a time, there was a fox. It was quick! Was it brown? Yes. The end."
    words = [w + " " for w in text.split(" ")]
    assert run(words) == run([text])
    assert run([text]) == ["Once upon a time, there was a fox.", "It was quick!", "Was it brown?", "Yes. The end."]


def test_abbreviations_and_decimals_do_not_split() -> None:
    assert run(["Dr. Smith paid 3.5 dollars, e.g. a lot. Then he left."]) == [
        "Dr. Smith paid 3.5 dollars, e.g. a lot.",
        "Then he left.",
    ]


def test_short_sentences_merge() -> None:
    assert run(["Hi. Ok. Now. That is all for today."]) == ["Hi. Ok. Now.", "That is all for today."]


def test_long_text_without_punctuation_is_cut_at_commas_or_spaces() -> None:
    text = ", ".join(["word " * 10] * 20)
    parts = run([text], max_chars=120)
    assert all(len(p) <= 120 for p in parts)
    assert " ".join(parts).split() == text.split()


def test_empty_and_whitespace() -> None:
    assert run(["", "   ", "\n"]) == []


def test_full_width_stops_end_sentences_without_a_space() -> None:
    chunker = SentenceChunker(abbreviations("zh"), min_chars=2)
    assert chunker.push("你好。今天天气很好！明天") == ["你好。", "今天天气很好！"]
    assert chunker.flush() == ["明天"]


@pytest.mark.parametrize("language", [*LEXICONS, "nl"])
def test_each_languages_abbreviations_come_from_its_table(language: str) -> None:
    chunker = SentenceChunker(abbreviations(language))
    assert chunker.push("Dr. Smith kommt um 3.5 Uhr. Dann") == ["Dr. Smith kommt um 3.5 Uhr."]
    lex = LEXICONS.get(language)
    assert lex is None or abbreviations(language) is lex.abbreviations


def test_a_full_stop_after_a_word_not_in_the_table_ends_a_sentence() -> None:
    chunker = SentenceChunker(frozenset({"e.g"}))
    assert chunker.push("Please ask Dr. Smith, e.g. today. Then") == ["Please ask Dr.", "Smith, e.g. today."]
