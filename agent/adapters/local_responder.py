"""The offline stand-in for a language model: keyword rules, deterministic, and honest about what it is.

It lets the whole voice pipeline run with no model and no network. Replies are plain spoken text (no
markdown, numbers written out where that is easy) in the caller's language, and stream a word or so at a time,
like a real model. English is below; the nine other languages' lines and keywords are in
``local_responder_lines``. In each, the replies that describe the responder say that it only demonstrates the
speech pipeline, and what it does not understand it repeats back with the same admission. Offered the clock tool
(``get_time``), it calls it for the time rather than read its own clock (``local_responder_tools``), so the
function-calling path can be shown with no account.

Reason to change: the rules the responder answers by.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import AsyncGenerator, Callable, Sequence
from datetime import datetime

from agent.adapters.local_responder_lines import LINES, Lines
from agent.adapters.local_responder_tools import CLOCK_FAILED, clock_call, clock_result, clock_time, offers_clock
from agent.ports import ChatMessage, ToolCall, ToolChoice, ToolSpec

_ORDINALS = (
    *("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"),
    *("eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth"),
    *("eighteenth", "nineteenth", "twentieth", "twenty-first", "twenty-second", "twenty-third"),
    *("twenty-fourth", "twenty-fifth", "twenty-sixth", "twenty-seventh", "twenty-eighth", "twenty-ninth"),
    *("thirtieth", "thirty-first"),
)

_GREETING = (
    "Hello! I'm the offline demo responder. I can tell you the time or the date, tell a short story or a "
    "joke, or repeat back what you say. What would you like?"
)
_HELP = (
    "I'm a simple offline responder, not a real language model. I can tell you the time or today's date, "
    "tell a short story, tell a joke, or repeat what I heard, which is handy for testing the speech "
    "pipeline."
)
_WHO = (
    "I'm the offline demo responder of this voice agent. I follow a few simple rules instead of a language "
    "model, so the whole system can run on one computer with no network."
)
_STORY = (
    "Once upon a time, a small lighthouse stood at the edge of a quiet harbor. "
    "Every night its keeper, an old woman named Rosa, climbed the winding stairs to light the lamp. "
    "One stormy evening the power failed, and the great light went dark. "
    "Rosa could hear a fishing boat calling out somewhere in the fog. "
    "She gathered every candle and lantern in the house and set them in the tower window. "
    "The tiny flames were not bright, but together they made a steady golden glow. "
    "The fishermen followed it home and tied up safely at the dock just before midnight. "
    "Ever since, the harbor keeps one candle burning in that window on stormy nights."
)
_JOKE = "Why did the scarecrow win an award? Because he was outstanding in his field."
_THANKS = "You're welcome! Is there anything else I can do for you?"
_GOODBYE = "Goodbye! Thanks for talking with me, and have a great day."
_REPEAT = "Sorry, I didn't catch that. Could you say it again?"
_ECHO_TAIL = "I'm only the offline demo responder, so repeating it is the best I can do."

_EN_KEYWORDS: dict[str, tuple[str, ...]] = {
    "who": ("who are you", "your name", "what are you"),
    "help": ("help", "what can you do"),
    "story": ("story",),
    "joke": ("joke", "something funny"),
    "time": ("time", "what time", "whats the time"),
    "date": ("date", "what day", "which day", "day is it", "today", "todays"),
    "thanks": ("thanks", "thank you", "thank"),
    "goodbye": ("goodbye", "bye", "see you"),
    "greeting": ("hello", "hi", "hey", "good morning", "good afternoon", "good evening"),
}
"""English intents, in the order they are tried, and the phrases (in ``_words`` form) that ask for each."""
_EN_REPLIES = {
    "who": _WHO,
    "help": _HELP,
    "story": _STORY,
    "joke": _JOKE,
    "thanks": _THANKS,
    "goodbye": _GOODBYE,
    "greeting": _GREETING,
}


_TRAILING = " .!?,;:。！？、，：；…"
"""Punctuation dropped from the end of what the caller said before it is repeated back."""


def _pieces(text: str) -> list[str]:
    """``text`` cut after each run of white space or of Chinese/Japanese punctuation (text without spaces)."""
    return re.findall(r".+?(?:[。！？，、：；]+\s*|\s+|$)", text)


def _words(text: str) -> list[str]:
    """Lowercase words without punctuation (apostrophes dropped, so "what's" becomes "whats")."""
    return re.findall(r"[a-z0-9]+", text.lower().replace("'", "").replace("’", ""))


def _has_phrase(words: list[str], phrase: str) -> bool:
    target = phrase.split()
    n = len(target)
    return any(words[i : i + n] == target for i in range(len(words) - n + 1))


def _any(words: list[str], *phrases: str) -> bool:
    return any(_has_phrase(words, p) for p in phrases)


def _fold(text: str) -> str:
    """Lowercase, without accents, with "ß" as "ss": how spaced languages are matched (ASR may drop accents)."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _pattern_words(phrase: str) -> list[str]:
    return re.findall(r"\w+\*?", _fold(phrase))


def _matches(words: list[str], phrase: str) -> bool:
    """Whether ``phrase`` (words; one ending in ``*`` matches any word it begins) occurs in ``words``."""
    target = _pattern_words(phrase)
    n = len(target)

    def word_matches(word: str, pattern: str) -> bool:
        return word.startswith(pattern[:-1]) if pattern.endswith("*") else word == pattern

    return any(all(word_matches(words[i + k], target[k]) for k in range(n)) for i in range(len(words) - n + 1))


def _english_intent(words: list[str]) -> str | None:
    return next((intent for intent, phrases in _EN_KEYWORDS.items() if _any(words, *phrases)), None)


def _asks_time(text: str, language: str) -> bool:
    """``text`` asks what time it is (the reply to it would be the time), in ``language``."""
    lines = LINES.get(language)
    if lines is not None:
        return re.search(r"\w", text) is not None and _intent(lines, text) == "time"
    return _english_intent(_words(text)) == "time"


def _last_user_text(history: Sequence[ChatMessage]) -> str:
    return next((m.text for m in reversed(history) if m.role == "user"), "").strip()


def _intent(lines: Lines, text: str) -> str | None:
    """The first intent of ``lines.keywords`` (in order) that ``text`` asks for."""
    if lines.spaced:
        words = re.findall(r"\w+", _fold(text))
        for intent, phrases in lines.keywords.items():
            if any(_matches(words, phrase) for phrase in phrases):
                return intent
        return None
    squeezed = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))
    for intent, phrases in lines.keywords.items():
        if any(re.sub(r"\s+", "", phrase) in squeezed for phrase in phrases):
            return intent
    return None


def _spoken_time(now: datetime) -> str:
    hour = now.hour % 12 or 12
    suffix = "AM" if now.hour < 12 else "PM"
    return f"It's {hour}:{now.minute:02d} {suffix}."


def _spoken_date(now: datetime) -> str:
    return f"Today is {now:%A}, {now:%B} {_ORDINALS[now.day - 1]}, {now.year}."


class LocalResponder:
    """``LanguageModel`` that answers by keyword rules on the last user message.

    ``now`` is the clock used for time and date answers (inject a fixed one in tests). ``delta_words`` is
    how many words each streamed delta holds. ``stream_reply`` never fails and never sleeps; the deltas
    concatenate to the full reply. Offered the clock tool (``get_time``), a question for the time is answered
    by a call of it instead, and the call's result by the time it holds.
    """

    def __init__(self, now: Callable[[], datetime] = datetime.now, delta_words: int = 1) -> None:
        if delta_words < 1:
            raise ValueError(f"delta_words must be at least 1, got {delta_words}")
        self._now = now
        self._delta_words = delta_words

    def reply_text(self, history: Sequence[ChatMessage], *, language: str) -> str:
        """The whole reply to the last user message in ``history`` (an empty history asks to repeat), in
        ``language`` (an ``agent.languages`` code; one it has no lines for gets English)."""
        text = _last_user_text(history)
        lines = LINES.get(language)
        if lines is not None:
            return self._reply_in(lines, text)
        words = _words(text)
        if not words:
            return _REPEAT
        intent = _english_intent(words)
        if intent == "time":
            return _spoken_time(self._now())
        if intent == "date":
            return _spoken_date(self._now())
        if intent is not None:
            return _EN_REPLIES[intent]
        said = text.rstrip(" .!?,;:")
        return f"You said: {said}. {_ECHO_TAIL}"

    def _reply_in(self, lines: Lines, text: str) -> str:
        if not re.search(r"\w", text):
            return lines.repeat
        intent = _intent(lines, text)
        if intent == "time":
            return lines.time(self._now())
        if intent == "date":
            return lines.date(self._now())
        if intent is not None:
            reply: str = getattr(lines, intent)
            return reply
        return lines.echo.format(said=text.rstrip(_TRAILING))

    def clock_reply(self, result: ChatMessage, *, language: str) -> str:
        """What the responder says to the clock tool's ``result`` (a ``tool`` message): the time it holds as the
        responder says a time in ``language``, or an apology when the call failed or holds no time."""
        when = None if result.failed else clock_time(result.text)
        if when is None:
            return CLOCK_FAILED.get(language, CLOCK_FAILED["en"])
        lines = LINES.get(language)
        return _spoken_time(when) if lines is None else lines.time(when)

    async def stream_reply(
        self,
        history: Sequence[ChatMessage],
        *,
        language: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> AsyncGenerator[str | ToolCall, None]:
        """Yield the reply in deltas of ``delta_words`` words (each with its following space). Text without
        spaces (Chinese, Japanese) streams a few characters at a time, cut after punctuation where it can.

        With ``get_time`` among ``tools`` (and ``tool_choice`` allowing it), a question for the time is answered
        by one ``ToolCall`` of it and nothing else; a history that ends with that call's result is answered with
        the time it holds (``clock_reply``). No other tool is ever called."""
        result = clock_result(history)
        if result is not None:
            text = self.clock_reply(result, language=language)
        elif (
            offers_clock(tools, tool_choice)
            and history
            and history[-1].role != "tool"
            and _asks_time(_last_user_text(history), language)
        ):
            yield clock_call()
            return
        else:
            text = self.reply_text(history, language=language)
        pieces = _pieces(text)
        step = self._delta_words
        for i in range(0, len(pieces), step):
            yield "".join(pieces[i : i + step])
