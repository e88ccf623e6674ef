"""The ``Lexicon`` type: the kinds of words the end-of-turn and backchannel rules read, and what each says.

One reason to change: a new kind of word the rules read (a language's words change in its own module). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Writing:
    """How a language is written, as the rules cut its transcripts into words (one tokenizer reads it:
    ``agent.core.wording.tokens_of``)."""

    word: re.Pattern[str]
    """One word of the text as compared (``folds``)."""
    repeats: re.Pattern[str]
    """A letter said longer ("mmm", "ähhh", "嗯嗯"): its first group is what it squashes to."""
    folds: bool = True
    """Text is compared folded: NFC, lower case, one apostrophe, "е" for "ё", one long-vowel mark for a drawn-out
    one; off: lower case only."""
    number: re.Pattern[str] | None = None
    """The end (lower case) of a transcript that ends in a number; ``None``: digits, or the table's ``numbers``
    and ``numeral_chars``."""


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's words, by what they say about the speaker's turn."""

    fillers: frozenset[str]
    """Sounds and words of thinking ("um", "ähm", "えーと"; "also", "значит", "那个"): a transcript ending in one
    trails off. Those that are also ``sounds`` do so whatever the punctuation (Whisper writes "Is it, um?"); the
    words not before a question mark ("Что это значит?")."""
    trailing: frozenset[str]
    """Conjunctions, articles, determiners: a transcript ending in one is unfinished unless it is a question."""
    open_words: frozenset[str]
    """Prepositions: an unfinished clause, unless the recogniser heard a question ("Where are you from?")."""
    backchannels: tuple[str, ...]
    """Acknowledgements said over a speaker that do not take the floor ("ja", "genau", "oui", "はい")."""
    sounds: tuple[str, ...]
    """Sounds that are no words (hums, grunts, a laugh) and what the recogniser writes for a noise or a
    cough: never a bid for the floor, accepted with any non-empty list of acknowledgements."""
    stop_words: tuple[str, ...]
    """Interjections that stop a speaker ("wait", "warte", "attends", "待って"): a short sound whose transcript
    begins with one claims the floor."""
    subordinators: frozenset[str]
    """Words opening a clause that needs a main clause after it ("if", "wenn", "如果"): such a transcript with
    no comma yet is a fragment."""
    short_answers: frozenset[str]
    """Words (compact languages: phrases) of short answers that are whole turns ("Yes.", "Nein, danke.")."""
    abbreviations: frozenset[str]
    """Short forms, lower case without their last full stop ("dr", "e.g"): in a reply, the full stop after one
    ends no sentence (``agent.core.chunker``)."""
    writing: Writing
    """How its transcripts are cut into words (``agent.core.lexicon.shared``: spaced or compact scripts)."""
    greetings: tuple[str, ...] = ()
    """Greetings and goodbyes, whole turns too ("Guten Morgen.", "你好")."""
    numbers: frozenset[str] = frozenset()
    """Number words: a statement ending in one may be a number still being said ("Es ist vier")."""
    numeral_chars: str = ""
    """Characters that spell numbers (Chinese, Japanese, Sino-Korean): a run of two or more ends in a number."""
    endings: tuple[str, ...] = ()
    """Endings of a word that leave its clause open (Korean connective endings and particles: "-지만", "-를")."""
    drawn: frozenset[str] = frozenset()
    """Short words that are a thinking sound only when drawn out (Portuguese "éééé", Spanish "eeee")."""
    compact: bool = False
    """Written without spaces between words (Chinese, Japanese): entries are matched character by character."""
    whole_only: frozenset[str] = field(default_factory=frozenset)
    """Compact languages: entries that also end ordinary words or sentences ("我要那个" = "I want that one"), so
    count only when they stand alone."""
    not_endings: tuple[str, ...] = ()
    """Complete endings that end in a listed entry: whole words of a compact language ("暖和" = "warm" ends in
    "和" = "and"), set phrases of another ("non c'è di che" ends in "che")."""
    hums: frozenset[str] | None = None
    """The ``fillers`` that trail off whatever the punctuation ("Is it, um?"); ``None``: those that are also
    ``sounds``."""
    drawn_fillers: bool = True
    """A filler said longer is that filler ("ähhh" = "äh"); off: only as written."""


def _words(phrases: Iterable[str]) -> frozenset[str]:
    """The words of ``phrases`` ("guten morgen" -> "guten", "morgen")."""
    return frozenset(word for phrase in phrases for word in phrase.split())


def answer_words(lex: Lexicon) -> frozenset[str]:
    """The words (compact languages: phrases) of ``lex``'s short answers and greetings."""
    if lex.compact:
        return lex.short_answers | frozenset(lex.greetings)
    return lex.short_answers | _words(lex.greetings)
