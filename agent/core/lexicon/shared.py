"""Sounds, characters and short forms that several languages share: hums, the sounds of no language, the
abbreviations replies hold, CJK numerals.

One reason to change: a sound or character common to several languages. Pure data.
"""

from __future__ import annotations

import re

from agent.core.lexicon.schema import Writing

HUMS: tuple[str, ...] = ("mhm", "m hm", "mm hmm", "m m", "mm", "hm", "hmm", "aha", "ah ha", "ha ha", "heh")
"""Hums and a laugh, the same in every language written in Latin letters (none of them a word there)."""

NEUTRAL_SOUNDS: tuple[str, ...] = (*HUMS, "uh huh", "uh", "ah", "oh")
"""What any language's caller may hum over the agent: the acknowledgements of a language the rules have no
words for (``lexicon`` gives ``None``)."""

ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "a.m", "p.m", "no", "approx"}
)
"""Short forms a reply in any of the languages may hold (titles and Latin ones, written as in English: replies
quote names like "Dr. Smith"): the full stop after one ends no sentence (``Lexicon.abbreviations``)."""

CJK_NUMERALS = "〇零一二三四五六七八九十百千万亿億两"
"""The characters that spell numbers in Chinese and Japanese (``Lexicon.numeral_chars``)."""

CJK = "\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Kana (with the long-vowel mark ー) and ideographs: the scripts written without spaces."""

WORD = re.compile(rf"[{CJK}]+|[^\W\d_{CJK}]+(?:['\-][^\W\d_{CJK}]+)*")
"""A word of any script (letters, inner apostrophes and hyphens: "d'accord", "fais-le", "что-то"), or a run of
kana and ideographs between spaces and punctuation."""

SPACED = Writing(WORD, re.compile(r"([^\W\d_])\1+"))
"""A script with spaces between words (Latin, Cyrillic, Hangul): a repeated letter is one ("ähhh")."""

COMPACT = Writing(WORD, re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaffー])\1+"))
"""Chinese and Japanese, written without spaces: drawn out is a repeated ideograph ("嗯嗯", "对对对") or long-vowel
mark. Kana stay ("ええ" is "yes", "え" is "huh?")."""
