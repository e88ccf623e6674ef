"""English words of the turn rules: ``ENGLISH`` (``agent.core.lexicon``).

One reason to change: what English speakers say. Pure data.
"""

from __future__ import annotations

import re

from agent.core.lexicon.schema import Lexicon, Writing
from agent.core.lexicon.shared import ABBREVIATIONS

TRAILING_WORDS: frozenset[str] = frozenset(
    [
        "and",
        "or",
        "but",
        "so",
        "because",
        "um",
        "uh",
        "er",
        "erm",
        "hmm",
        "the",
        "a",
        "an",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "its",
        "if",
        "when",
        "then",
        "that",
        "which",
        "while",
        "although",
        "though",
        "since",
        "unless",
        "until",
        "whether",
        "than",
    ]
)
"""Words after which an English speaker is rarely finished, whatever punctuation the recogniser added."""

OPEN_WORDS: frozenset[str] = frozenset(
    [
        "to",
        "of",
        "for",
        "with",
        "in",
        "on",
        "at",
        "from",
        "about",
        "into",
        "onto",
        "over",
        "under",
        "after",
        "before",
        "between",
        "as",
        "like",
    ]
)
"""Words that end an unfinished clause unless the recogniser heard a question ("Where are you from?")."""

FILLERS: frozenset[str] = frozenset(["um", "uh", "er", "erm", "hmm"])
"""Sounds of thinking: a transcript ending in one trails off whatever its punctuation."""

BACKCHANNELS: tuple[str, ...] = (
    "uh-huh", "uh huh", "mm-hmm", "mm hmm", "mhm", "hmm", "mm", "yeah", "yep", "yes", "yup", "okay", "ok", "right",
    "sure", "i see", "got it", "alright", "all right", "cool", "nice", "ah", "oh",
)  # fmt: skip
"""English acknowledgements: the default of the configured list (``agent.config``)."""

SOUNDS: tuple[str, ...] = (
    "uh", "um", "em", "er", "erm", "uh uh", "uh oh", "aha", "ah ha", "m hm", "m m", "a", "ha", "hah", "ha ha", "heh",
    "you", "thank you",
)  # fmt: skip
"""Sounds that are no words, so never a bid for the floor: what Whisper (tiny.en) writes for a real "uh-huh",
"mm-hmm" or "hmm", whole or cut short (bench/backchannels.py: "Uh", "Uh-uh", "Uh-oh.", "Aha", "M-", "Em",
"Um"). Accepted with any non-empty list of acknowledgements (configured lists name words, not these). Also a
laugh, and what Whisper makes of a cough, a noise burst or a short sound: "A..." or "Uh." for a cough on a
phone line; "You" and "Thank you.", its best-known hallucinations on sounds that are no speech (said over the
agent, "thank you" is no bid either)."""

STOP_WORDS: tuple[str, ...] = (
    "wait", "stop", "no", "nope", "hold on", "hold it", "hang on", "sorry", "excuse me", "pardon", "what", "hey",
    "hello", "listen", "actually", "but", "cancel", "enough", "quiet", "shut up", "one moment", "one second",
    "just a second", "just a moment",
)  # fmt: skip
"""Interjections that stop a speaker. A sound shorter than a barge-in needs takes the floor only when its
transcript begins with one of these: Whisper makes words of coughs and clicks ("On.", "Ha!"), and a short
real interruption is almost always one of them."""

SUBORDINATORS: frozenset[str] = frozenset(
    ["if", "when", "whenever", "after", "before", "because", "although", "though", "while", "since", "until", "unless"]
)
"""Words that open a clause which needs a main clause after it ("If it rains tomorrow, ..."): such a transcript
with no comma yet is a fragment, however long ("After the meeting.", Whisper's period on a breath)."""

SHORT_ANSWER_WORDS: frozenset[str] = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "yup",
        "no",
        "nope",
        "nah",
        "sure",
        "okay",
        "ok",
        "fine",
        "right",
        "correct",
        "exactly",
        "absolutely",
        "definitely",
        "maybe",
        "please",
        "thanks",
        "thank",
        "you",
        "bye",
        "goodbye",
        "hello",
        "hi",
        "hey",
        "great",
        "perfect",
        "cool",
        "alright",
        "not",
        "really",
        "of",
        "course",
        "there",
        "good",
        "morning",
        "afternoon",
        "evening",
        "night",
        "welcome",
    ]
)
"""Words of short answers and greetings that are whole turns ("Yes.", "No, thanks.", "Good morning."): never
fragments."""

# fmt: off
ENGLISH_NUMBERS: frozenset[str] = frozenset(
    [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty",
        "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million",
    ]
)

WRITING = Writing(
    re.compile(r"[a-z']+"),
    re.compile(r"([a-z])\1+"),
    folds=False,
    number=re.compile(r"(\d[\d,.:]*|\b(?:" + "|".join(sorted(ENGLISH_NUMBERS, key=lambda w: (-len(w), w))) + r"))\.?$"),
)
"""English as the rules read it: ASCII letters and apostrophes in lower case (as they always have), and a number
at the end in digits or words ("at seven.")."""

ENGLISH = Lexicon(
    fillers=FILLERS,
    trailing=TRAILING_WORDS,
    open_words=OPEN_WORDS,
    backchannels=BACKCHANNELS,
    sounds=SOUNDS,
    stop_words=STOP_WORDS,
    subordinators=SUBORDINATORS,
    short_answers=SHORT_ANSWER_WORDS,
    greetings=(
        "hello", "hi", "hey", "hi there", "hello there", "good morning", "good afternoon", "good evening", "good night",
        "bye", "goodbye", "thank you",
    ),
    numbers=ENGLISH_NUMBERS,
    abbreviations=ABBREVIATIONS,
    writing=WRITING,
    hums=FILLERS,
    drawn_fillers=False,
)
# fmt: on
