"""How a transcript is read: cut into words (Chinese and Japanese by characters), folded, and judged with one
language's words (``agent.core.lexicon``): fillers, trailing words, short answers, numbers.

Its one reason to change: how text becomes words and how a language's lexicon applies to them. The end-of-turn
and backchannel judgements built on it are ``agent.core.endpointing``. Pure functions over text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from agent.core.lexicon import Lexicon, answer_words, lexicon
from agent.core.lexicon.english import ENGLISH, FILLERS, OPEN_WORDS, STOP_WORDS, SUBORDINATORS, TRAILING_WORDS

# --- how text is cut into words --------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z']+")
"""An English word (the English rules see ASCII letters only, as they always have)."""
_CJK = "\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Kana (with the long-vowel mark ー) and ideographs: the scripts written without spaces."""
TOKEN = re.compile(rf"[{_CJK}]+|[^\W\d_{_CJK}]+(?:['\-][^\W\d_{_CJK}]+)*")
"""A word of any other script (letters, inner apostrophes and hyphens: "d'accord", "fais-le", "что-то"), or a
run of kana and ideographs between spaces and punctuation."""
_CJK_CHAR = re.compile(rf"[{_CJK}]")
HANGUL = re.compile("[\uac00-\ud7a3]")
_FOLD = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "ё": "е", "〜": "ー", "～": "ー"})
_LONG_VOWEL = re.compile("ーー+")
_REPEATS = re.compile(r"([a-z])\1+")
_REPEATS_WIDE = re.compile(r"([^\W\d_])\1+")
_REPEATS_CJK = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaffー])\1+")
"""Drawn out in Chinese and Japanese: a repeated ideograph ("嗯嗯", "对对对") or long-vowel mark. Kana stay
("ええ" is "yes", "え" is "huh?")."""

PAUSES = ("...", "…", "‥", ",", "，", "、", ";", "；", ":", "：", "-", "—", "―")
"""A transcript ending in one of these trails off."""
ASKS = "?!？！"
STOPS = ".。．｡"
COMMAS = (",", "，", "、")
DIGITS = re.compile(r"\d[\d,.:]*[.。．]?$")
_NUMBER = re.compile(r"(\d[\d,.:]*|\b(?:" + "|".join(sorted(ENGLISH.numbers, key=lambda w: (-len(w), w))) + r"))\.?$")


def _fold(text: str) -> str:
    """``text`` as the rules of languages other than English compare it: NFC, lower case, one apostrophe, "е"
    for "ё", one long-vowel mark for a drawn-out one ("えーーと" = "えーと")."""
    return _LONG_VOWEL.sub("ー", unicodedata.normalize("NFC", text).lower().translate(_FOLD))


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


def as_phrase(text: str, english: bool, compact: bool) -> str:
    """Lower-case words with single spaces, no punctuation or hyphens (compact: no spaces between characters)."""
    if english:
        return " ".join(_WORD.findall(text.lower().replace("-", " ")))
    tokens = TOKEN.findall(_fold(text).replace("-", " "))
    return _join(tokens) if compact else " ".join(tokens)


def _entry(text: str, compact: bool) -> str:
    """A table entry in the form ``tokens_of`` cuts text into (hyphens kept)."""
    tokens = TOKEN.findall(_fold(text))
    return _join(tokens) if compact else " ".join(tokens)


# --- one language's rules --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rules:
    """One language's tables in the form the rules compare them with (``lex`` ``None``: no words known)."""

    lex: Lexicon | None
    english: bool = False
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
    repeats: re.Pattern[str] = _REPEATS_WIDE


@functools.cache
def rules_for(language: str) -> Rules:
    lex = lexicon(language)
    if lex is None:
        return Rules(None)
    if lex is ENGLISH:
        return Rules(
            lex,
            english=True,
            hums=FILLERS,
            trailing=TRAILING_WORDS,
            open_words=OPEN_WORDS,
            subordinators=SUBORDINATORS,
            answers=answer_words(lex),
            stop_words=STOP_WORDS,
            repeats=_REPEATS,
        )
    compact = lex.compact
    repeats = _REPEATS_CJK if compact else _REPEATS_WIDE

    def entries(words: frozenset[str]) -> frozenset[str]:
        return frozenset(_entry(word, compact) for word in words) - {""}

    fillers = entries(lex.fillers)
    hums = fillers & entries(frozenset(lex.sounds))
    drawn = entries(lex.drawn)
    tables = (fillers, entries(lex.trailing), entries(lex.open_words))
    return Rules(
        lex,
        compact=compact,
        fillers=fillers,
        hums=hums,
        squashed_fillers=frozenset(repeats.sub(r"\1", word) for word in fillers | drawn),
        squashed_hums=frozenset(repeats.sub(r"\1", word) for word in hums | drawn),
        trailing=tables[1] | fillers,
        open_words=tables[2],
        endings=lex.endings,
        subordinators=entries(lex.subordinators),
        answers=entries(answer_words(lex)),
        numbers=entries(lex.numbers),
        numeral_chars=lex.numeral_chars,
        stop_words=tuple(dict.fromkeys(p for p in (as_phrase(w, False, compact) for w in lex.stop_words) if p)),
        whole_only=entries(lex.whole_only),
        not_endings=tuple(_entry(word, compact) for word in lex.not_endings),
        span=1 if compact else max(len(entry.split()) for table in tables for entry in table),
        repeats=repeats,
    )


def tokens_of(text: str, rules: Rules) -> list[str]:
    """The words of ``text`` (compact languages: its runs of characters between spaces and punctuation)."""
    if rules.english:
        return _WORD.findall(text.lower())
    return TOKEN.findall(_fold(text))


def word_count(words: list[str], rules: Rules) -> int:
    """How many words ``words`` are (two Chinese or Japanese characters count as one)."""
    if rules.english:
        return len(words)
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


def ends_in_filler(words: list[str], fillers: frozenset[str], squashed: frozenset[str], rules: Rules) -> bool:
    """``words`` end in one of ``fillers``, or in a drawn-out word that squashes to one of ``squashed`` ("ähhh",
    "ééé", "nuuu")."""
    if ends_in(words, fillers, rules):
        return True
    if rules.compact or not squashed:
        return False
    last = rules.repeats.sub(r"\1", words[-1])
    return last != words[-1] and last in squashed


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
    if rules.english:
        return _NUMBER.search(stripped.lower()) is not None
    if DIGITS.search(stripped):
        return True
    tail = _fold(stripped)
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
