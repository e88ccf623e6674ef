"""Cutting streamed reply text into speakable sentences.

``SentenceChunker.push(delta)`` returns the sentences completed by that delta; ``flush()`` returns what is
left when the reply ends. With ``first_min_chars`` the *first* chunk may end early at a clause boundary
(a comma, semicolon, colon or dash after at least that many characters), so the first audio does not
wait for a long first sentence; later chunks end at sentences. A sentence ends at ``.``, ``!``, ``?``
or ``…`` followed by white space, except after one of the reply language's abbreviations ("Dr.", "e.g.": its
table's ``abbreviations``, ``agent.core.lexicon``) and inside numbers ("3.5"). Very short sentences are merged
with the next one, and over-long ones are cut at a comma or a space, so each synthesis request stays small.
"""

from __future__ import annotations

import re

_END = re.compile(r"[.!?…]+[\"')\]]*(?=\s)|[。！？]+[」』”）)]*")
"""A sentence ends at a stop before a space, or at a full-width stop (Chinese and Japanese write no space)."""
_CLAUSE = re.compile(r"(?:[,;:]|\s[-–—])(?=\s)|[，、；：]")


class SentenceChunker:
    def __init__(
        self, abbreviations: frozenset[str], min_chars: int = 8, max_chars: int = 250, first_min_chars: int = 0
    ) -> None:
        """``abbreviations``: the reply language's short forms, lower case without their last full stop."""
        self._abbreviations = abbreviations
        self._min_chars = min_chars
        self._max_chars = max_chars
        self._first_min_chars = first_min_chars
        self._first = True
        self._buffer = ""
        self._scan_from = 0

    def push(self, delta: str) -> list[str]:
        self._buffer += delta
        out: list[str] = []
        while True:
            cut = self._next_cut()
            if cut is None:
                break
            sentence, self._buffer = self._buffer[:cut].strip(), self._buffer[cut:]
            self._scan_from = 0
            if sentence:
                out.append(sentence)
                self._first = False
        return out

    def flush(self) -> list[str]:
        out = self.push(" ")  # the end of the stream ends the last sentence too
        rest, self._buffer, self._scan_from = self._buffer.strip(), "", 0
        return out + (self._split_long(rest) if rest else [])

    def _next_cut(self) -> int | None:
        if self._first and self._first_min_chars:
            clause = self._first_clause()
            if clause is not None:
                return clause
        for match in _END.finditer(self._buffer, self._scan_from):
            end = match.end()
            if match.group().startswith(".") and self._is_abbreviation(match.start()):
                continue
            if len(self._buffer[:end].strip()) < self._min_chars:
                continue
            return end
        self._scan_from = max(0, len(self._buffer) - 4)  # a terminator may still arrive before the space
        if len(self._buffer) > self._max_chars:
            return self._soft_cut()
        return None

    def _first_clause(self) -> int | None:
        first_end = _END.search(self._buffer)
        for match in _CLAUSE.finditer(self._buffer):
            if first_end is not None and match.start() > first_end.start():
                return None  # a sentence ends first: the normal rule applies
            if len(self._buffer[: match.end()].strip()) >= self._first_min_chars:
                return match.end()
        return None

    def _is_abbreviation(self, dot: int) -> bool:
        word = re.search(r"([\w.]+)$", self._buffer[:dot])
        return word is not None and word.group(1).lower() in self._abbreviations

    def _soft_cut(self) -> int:
        window = self._buffer[: self._max_chars]
        for sep in (", ", "; ", ": ", " "):
            pos = window.rfind(sep)
            if pos > self._max_chars // 3:
                return pos + len(sep)
        return self._max_chars

    def _split_long(self, text: str) -> list[str]:
        parts: list[str] = []
        while len(text) > self._max_chars:
            self._buffer = text
            cut = self._soft_cut()
            parts.append(text[:cut].strip())
            text = text[cut:].strip()
        self._buffer = ""
        if text:
            parts.append(text)
        return parts
