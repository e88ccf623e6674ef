"""Sounds and characters that several languages' words share: hums, the sounds of no language, CJK numerals.

One reason to change: a sound or character common to several languages. Pure data.
"""

from __future__ import annotations

HUMS: tuple[str, ...] = ("mhm", "m hm", "mm hmm", "m m", "mm", "hm", "hmm", "aha", "ah ha", "ha ha", "heh")
"""Hums and a laugh, the same in every language written in Latin letters (none of them a word there)."""

NEUTRAL_SOUNDS: tuple[str, ...] = (*HUMS, "uh huh", "uh", "ah", "oh")
"""What any language's caller may hum over the agent: the acknowledgements of a language the rules have no
words for (``lexicon`` gives ``None``)."""

CJK_NUMERALS = "〇零一二三四五六七八九十百千万亿億两"
"""The characters that spell numbers in Chinese and Japanese (``Lexicon.numeral_chars``)."""
