"""How a transcript is read: cut into words (Chinese and Japanese by characters), folded, and judged with one
language's words (``agent.core.lexicon``): fillers, trailing words, short answers, numbers. One tokenizer for
every language reads how the language is written from its table (``Lexicon.writing``).

Its one reason to change: how text becomes words and how a language's lexicon applies to them. The end-of-turn
and backchannel judgements built on it are ``agent.core.endpointing``. Pure functions over text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from agent.core.lexicon import Lexicon, answer_words, lexicon
from agent.core.lexicon.schema import Writing
from agent.core.lexicon.shared import CJK, SPACED

# --- how text is cut into words --------------------------------------------------------------------------------

_CJK_CHAR = re.compile(rf"[{CJK}]")
HANGUL = re.compile("[\uac00-\ud7a3]")
_FOLD = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "ё": "е", "〜": "ー", "～": "ー"})
_LONG_VOWEL = re.compile("ーー+")

PAUSES = ("...", "…", "‥", ",", "，", "、", ";", "；", ":", "：", "-", "—", "―")
"""A transcript ending in one of these trails off."""
ASKS = "?!？！"
STOPS = ".。．｡"
COMMAS = (",", "，", "、")
DIGITS = re.compile(r"\d[\d,.:]*[.。．]?$")


def _fold(text: str, writing: Writing) -> str:
    """``text`` as the rules compare it: NFC, lower case, one apostrophe, "е" for "ё", one long-vowel mark for a
    drawn-out one ("えーーと" = "えーと"); lower case only where the language's writing does not fold."""
    if not writing.folds:
        return text.lower()
    return _LONG_VOWEL.sub("ー", unicodedata.normalize("NFC", text).lower().translate(_FOLD))


def _tokens(text: str, writing: Writing) -> list[str]:
    """The words of ``text``, as ``writing`` cuts it (hyphens kept where its words hold them)."""
    return writing.word.findall(_fold(text, writing))


def is_cjk(token: str) -> bool:
    return _CJK_CHAR.match(token) is not None


def _join(tokens: list[str]) -> str:
    """Words of a compact language put back together: no space next to kana or ideographs."""
    out: list[str] = []
    for token in tokens:
        if out and not (is_cjk(token) or is_cjk(out[-1])):
            out.append(" ")
        out.append(token)
    return "".join(out)


def _phrase(text: str, writing: Writing, compact: bool) -> str:
    """Lower-case words with single spaces, no punctuation or hyphens (compact: no spaces between characters)."""
    return _entry(text.replace("-", " "), writing, compact)


def _entry(text: str, writing: Writing, compact: bool) -> str:
    """A table entry in the form ``tokens_of`` cuts text into (hyphens kept)."""
    tokens = _tokens(text, writing)
    return _join(tokens) if compact else " ".join(tokens)


# --- one language's rules --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rules:
    """One language's tables in the form the rules compare them with (``lex`` ``None``: no words known)."""

    lex: Lexicon | None
    writing: Writing = SPACED
    """How the language is written (no lexicon: any script, spaced)."""
    compact: bool = False
    fillers: frozenset[str] = frozenset()
    """Fillers that are words ("also", "значит", "那个"): trailing, unless the recogniser heard a question."""
    hums: frozenset[str] = frozenset()
    """Fillers that are sounds ("um", "ähm", "えーと"): trailing even before a question mark ("Is it, um?")."""
    squashed_fillers: frozenset[str] = frozenset()
    squashed_hums: frozenset[str] = frozenset()
    """``fillers`` and ``hums`` (with drawn words) squashed: a drawn-out word that squashes to one is one."""
    trailing: frozenset[str] = frozenset()
    open_words: frozenset[str] = frozenset()
    endings: tuple[str, ...] = ()
    subordinators: frozenset[str] = frozenset()
    answers: frozenset[str] = frozenset()
    numbers: frozenset[str] = frozenset()
    numeral_chars: str = ""
    stop_words: tuple[str, ...] = ()
    whole_only: frozenset[str] = frozenset()
    not_endings: tuple[str, ...] = ()
    span: int = 1
    """Words in the longest entry of ``fillers``, ``trailing`` and ``open_words``."""


@functools.cache
def rules_for(language: str) -> Rules:
    lex = lexicon(language)
    if lex is None:
        return Rules(None)
    compact, writing = lex.compact, lex.writing
    repeats = writing.repeats

    def entries(words: frozenset[str]) -> frozenset[str]:
        return frozenset(_entry(word, writing, compact) for word in words) - {""}

    fillers = entries(lex.fillers)
    hums = fillers & entries(frozenset(lex.sounds)) if lex.hums is None else entries(lex.hums)
    drawn = entries(lex.drawn)
    tables = (fillers, entries(lex.trailing), entries(lex.open_words))
    drawn_out = lex.drawn_fillers
    return Rules(
        lex,
        writing=writing,
        compact=compact,
        fillers=fillers,
        hums=hums,
        squashed_fillers=frozenset(repeats.sub(r"\1", word) for word in fillers | drawn if drawn_out),
        squashed_hums=frozenset(repeats.sub(r"\1", word) for word in hums | drawn if drawn_out),
        trailing=tables[1] | fillers,
        open_words=tables[2],
        endings=lex.endings,
        subordinators=entries(lex.subordinators),
        answers=entries(answer_words(lex)),
        numbers=entries(lex.numbers),
        numeral_chars=lex.numeral_chars,
        stop_words=tuple(dict.fromkeys(p for p in (_phrase(w, writing, compact) for w in lex.stop_words) if p)),
        whole_only=entries(lex.whole_only),
        not_endings=tuple(_entry(word, writing, compact) for word in lex.not_endings),
        span=1 if compact else max(len(entry.split()) for table in tables for entry in table),
    )


def tokens_of(text: str, rules: Rules) -> list[str]:
    """The words of ``text`` (compact languages: its runs of characters between spaces and punctuation)."""
    return _tokens(text, rules.writing)


def as_phrase(text: str, rules: Rules) -> str:
    """``text``'s words in lower case, single-spaced, without punctuation or hyphens (compact: no spaces between
    characters)."""
    return _phrase(text, rules.writing, rules.compact)


def squashed(phrase: str, rules: Rules) -> str:
    """Letters said longer are the same sound: "mmm hmmm" and "mm hmm" -> "m hm", "ahh" -> "ah", "嗯嗯" -> "嗯"."""
    return rules.writing.repeats.sub(r"\1", phrase)


def word_count(words: list[str], rules: Rules) -> int:
    """How many words ``words`` are (two Chinese or Japanese characters count as one)."""
    return sum((len(word) + 1) // 2 if is_cjk(word) else 1 for word in words)


def ends_in(words: list[str], table: frozenset[str], rules: Rules) -> bool:
    """``words`` end in an entry of ``table`` (of up to ``span`` words; compact: characters at the end)."""
    if not table:
        return False
    if rules.compact:
        chunk = words[-1]
        if chunk.endswith(rules.not_endings):
            return False
        return any(chunk == e or (chunk.endswith(e) and e not in rules.whole_only) for e in table)
    said = " ".join(words)
    if any(said == e or said.endswith(" " + e) for e in rules.not_endings):
        return False  # "non c'è di che", "не за что"
    return any(" ".join(words[-n:]) in table for n in range(1, min(rules.span, len(words)) + 1))


def ends_in_filler(words: list[str], fillers: frozenset[str], drawn: frozenset[str], rules: Rules) -> bool:
    """``words`` end in one of ``fillers``, or in a drawn-out word that squashes to one of ``drawn`` ("ähhh",
    "ééé", "nuuu")."""
    if ends_in(words, fillers, rules):
        return True
    if rules.compact or not drawn:
        return False
    last = squashed(words[-1], rules)
    return last != words[-1] and last in drawn


def open_ending(word: str, rules: Rules) -> bool:
    """``word`` ends in an ending that leaves its clause open (Korean "-지만", "-를")."""
    return any(word.endswith(ending) and len(word) > len(ending) for ending in rules.endings)


def is_short_answer(words: list[str], rules: Rules) -> bool:
    """``words`` are only short answers and greetings ("Yes.", "Nein, danke.", "好的，谢谢")."""
    if not rules.compact:
        return bool(rules.answers) and all(word in rules.answers for word in words)
    said = "".join(words)
    whole = [True] + [False] * len(said)  # whole[i]: said[:i] is made of answers
    for end in range(1, len(said) + 1):
        whole[end] = any(whole[end - len(a)] and said.endswith(a, 0, end) for a in rules.answers if len(a) <= end)
    return whole[-1]


def opens_clause(words: list[str], rules: Rules) -> bool:
    if rules.compact:
        return "".join(words).startswith(tuple(rules.subordinators))
    return words[0] in rules.subordinators


def ends_in_number(stripped: str, words: list[str], rules: Rules) -> bool:
    """``stripped`` ends in a number (digits or a number word), with at most a full stop after it."""
    if rules.writing.number is not None:
        return rules.writing.number.search(stripped.lower()) is not None
    if DIGITS.search(stripped):
        return True
    tail = _fold(stripped, rules.writing)
    tail = tail[:-1] if tail.endswith(tuple(STOPS)) else tail
    last = words[-1]
    if not tail.endswith(last):
        return False  # something other than a full stop follows the last word
    if last in rules.numbers or all(part in rules.numbers for part in last.split("-")):
        return True
    if not rules.numeral_chars:
        return False
    run = len(last) - len(last.rstrip(rules.numeral_chars))
    return run >= 2 or run == len(last)  # "一三八", "삼백"; a lone "一" ends words too ("唯一")
