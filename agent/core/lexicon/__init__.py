"""The words of each language that the end-of-turn and backchannel rules read (``agent.core.endpointing``).

One reason to change: which languages have words. ``LEXICONS`` holds one ``Lexicon`` per language of
``agent.languages.LANGUAGES``; ``lexicon(code)`` looks one up (``None`` for any other language: the rules then
use punctuation and sounds only, never another language's words). Each language's words live in a module of
their own (``agent.core.lexicon.german``), the ``Lexicon`` type in ``agent.core.lexicon.schema``. The rules
themselves, and how text is cut into words, live in ``agent.core.endpointing``.

Entries are written as people write them (lower case, accents, apostrophes and hyphens as usual); the rules
normalise both sides the same way. Several words may form one entry ("o sea", "hold on"). Chinese and Japanese
are written without spaces (``compact``): their entries are matched as strings of characters, at the end of
what was said (``whole_only`` entries only where they stand alone, after a pause mark or at the start) or at
its start. Whatever the language, an entry does not count where the text ends in one of ``not_endings``.

A word belongs in ``fillers``, ``trailing`` or ``open_words`` only if a sentence rarely ends with it: "das",
"le", "una", "その" end whole sentences ("I like that", "take it", "I want one") and are left out. Pure data.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent.core.lexicon.chinese import CHINESE
from agent.core.lexicon.english import ENGLISH
from agent.core.lexicon.french import FRENCH
from agent.core.lexicon.german import GERMAN
from agent.core.lexicon.italian import ITALIAN
from agent.core.lexicon.japanese import JAPANESE
from agent.core.lexicon.korean import KOREAN
from agent.core.lexicon.portuguese import PORTUGUESE
from agent.core.lexicon.russian import RUSSIAN
from agent.core.lexicon.schema import Lexicon, answer_words
from agent.core.lexicon.shared import ABBREVIATIONS
from agent.core.lexicon.spanish import SPANISH

__all__ = [
    "CHINESE",
    "ENGLISH",
    "FRENCH",
    "GERMAN",
    "ITALIAN",
    "JAPANESE",
    "KOREAN",
    "LEXICONS",
    "PORTUGUESE",
    "RUSSIAN",
    "SPANISH",
    "Lexicon",
    "abbreviations",
    "answer_words",
    "lexicon",
]

LEXICONS: Mapping[str, Lexicon] = {
    "en": ENGLISH,
    "zh": CHINESE,
    "ja": JAPANESE,
    "ko": KOREAN,
    "de": GERMAN,
    "fr": FRENCH,
    "ru": RUSSIAN,
    "pt": PORTUGUESE,
    "es": SPANISH,
    "it": ITALIAN,
}
"""The ten languages' words, by ISO 639-1 code (``agent.languages.LANGUAGES``)."""


def lexicon(language: str) -> Lexicon | None:
    """The words of ``language`` (a code; a region is ignored: ``"de-AT"``); ``None`` for any other language."""
    return LEXICONS.get(language.strip().lower().replace("_", "-").split("-")[0])


def abbreviations(language: str) -> frozenset[str]:
    """The short forms a reply in ``language`` may hold (``Lexicon.abbreviations``); a language with no table:
    the ones replies in every language hold."""
    lex = lexicon(language)
    return ABBREVIATIONS if lex is None else lex.abbreviations
