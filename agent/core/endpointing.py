"""How long to wait before the caller's turn is over, judged from what they said and how it sounded.

Early in the trailing silence two looks are taken at the utterance so far: its speculative transcript (the
words) and, when an acoustic turn-completion model runs (``EndpointPolicy.acoustic``, Smart Turn), the
probability that the caller has finished, from the sound (pitch, rhythm, a drawn-out "um"). Together they set
the silence that ends the turn (``EndpointPolicy.hangover_for``):

- words that trail off ("and", "um", "for", a comma) wait longest, whatever the sound says;
- a sentence that reads finished ends at the minimum when the sound is sure, and waits longer the less sure
  it is; short answers, greetings and short questions ("Hi there.", "Where to?") are such sentences;
- a fragment ("It's four.", "After the meeting.") waits the default when the sound is sure (a comma's
  phrase-final fall sounds finished) and longest when it is not;
- with no sound score (model off, busy or failed) the words alone decide, as the text rules say.

Pure functions over text and numbers.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import Enum

# Words after which an English speaker is rarely finished, whatever punctuation the recogniser added.
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
# Words that end an unfinished clause unless the recogniser heard a question ("Where are you from?").
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

FILLERS: frozenset[str] = frozenset(["um", "uh", "er", "erm", "hmm"])
"""Sounds of thinking: a transcript ending in one trails off whatever its punctuation."""

BACKCHANNELS: tuple[str, ...] = (
    "uh-huh", "uh huh", "mm-hmm", "mm hmm", "mhm", "hmm", "mm", "yeah", "yep", "yes", "yup", "okay", "ok",
    "right", "sure", "i see", "got it", "alright", "all right", "cool", "nice", "ah", "oh",
)  # fmt: skip
# Sounds that are no words, so never a bid for the floor: what Whisper (tiny.en) writes for a real "uh-huh",
# "mm-hmm" or "hmm", whole or cut short (bench/backchannels.py: "Uh", "Uh-uh", "Uh-oh.", "Aha", "M-", "Em",
# "Um"). Accepted with any non-empty list of acknowledgements (configured lists name words, not these).
# Also a laugh, and what Whisper makes of a cough, a noise burst or a short sound: "A..." or "Uh." for a cough
# on a phone line; "You" and "Thank you.", its best-known hallucinations on sounds that are no speech (said
# over the agent, "thank you" is no bid either).
SOUNDS: tuple[str, ...] = (
    "uh", "um", "em", "er", "erm", "uh uh", "uh oh", "aha", "ah ha", "m hm", "m m",
    "a", "ha", "hah", "ha ha", "heh", "you", "thank you",
)  # fmt: skip


class Completeness(Enum):
    COMPLETE = "complete"
    TRAILING = "trailing"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class EndpointPolicy:
    """Hangovers (ms of trailing silence) by how finished the caller sounds.

    ``speculative_ms``: trailing silence after which a speculative transcript is requested (0 disables
    speculation, and every turn waits ``hangover_ms``).
    """

    speculative_ms: int = 120
    hangover_min_ms: int = 320
    hangover_ms: int = 420
    hangover_max_ms: int = 1500
    trailing_words: frozenset[str] = field(default=TRAILING_WORDS)
    fragment_words: int = 0
    """A transcript of at most this many words (not a short answer such as "Yes." or "No, thanks.") that does
    not trail off is a fragment: the caller is often only thinking ("I was thinking um", Whisper dropping the
    "um" and adding a period). 0: no such rule."""
    fragment_numbers: bool = False
    """A statement ending in a number is a fragment too ("It's four." of "It's four hundred and twenty"); a
    question is not ("Can you call me at 7:30?")."""
    fragment_ms: int = 0
    """The hangover of a fragment (0: ``hangover_max_ms``)."""
    acoustic: bool = False
    """Ask the acoustic turn-completion model (``ScoreTurn``) along with each speculative transcript."""
    sure: float = 0.7
    """Sound score at or above which a sentence that reads finished ends at ``hangover_min_ms`` (a fragment at
    ``hangover_ms``, or ``hangover_min_ms`` with ``sure_fragments``)."""
    unsure: float = 0.2
    """Sound score at or below which the caller sounds unfinished: a fragment waits ``hangover_max_ms``, a
    sentence that reads finished ``unsure_ms``. Between ``unsure`` and ``sure`` the wait goes in proportion
    from those down to what a sure score gets."""
    unsure_ms: int = 0
    """The wait of a sentence that reads finished but sounds unfinished (0: ``fragment_ms``)."""
    sure_fragments: bool = False
    """A sure sound ends a fragment at ``hangover_min_ms`` too ("Hello world."); off: it waits ``hangover_ms``."""

    def hangover_for(self, text: str | None, probability: float | None = None) -> int:
        """The trailing silence that ends the turn, given its speculative transcript (``None``: not known yet)
        and the acoustic model's probability that it is finished (``None``: no score: the text rules alone)."""
        if text is None:
            return self.hangover_ms
        verdict = completeness(text, self.trailing_words)
        if verdict is Completeness.TRAILING:
            return self.hangover_max_ms
        fragment = self._fragment(text)
        fragment_ms = max(self.fragment_ms or self.hangover_max_ms, self.hangover_ms)
        if probability is None:
            if fragment:
                return fragment_ms
            return self.hangover_min_ms if verdict is Completeness.COMPLETE else self.hangover_ms
        if fragment:
            sure_ms = self.hangover_min_ms if self.sure_fragments else self.hangover_ms
            return self._between(probability, sure_ms, self.hangover_max_ms)
        return self._between(probability, self.hangover_min_ms, max(self.unsure_ms or fragment_ms, self.hangover_ms))

    def _between(self, probability: float, sure_ms: int, unsure_ms: int) -> int:
        """``sure_ms`` at or above ``sure``, ``unsure_ms`` at or below ``unsure``, in proportion between."""
        if probability >= self.sure:
            return sure_ms
        if probability <= self.unsure:
            return unsure_ms
        return round(sure_ms + (unsure_ms - sure_ms) * (self.sure - probability) / (self.sure - self.unsure))

    def _fragment(self, text: str) -> bool:
        words = _WORD.findall(normalise_phrase(text))
        if not words or all(w in SHORT_ANSWER_WORDS for w in words) or text.strip().endswith("?"):
            return False  # a short answer, a greeting or a short question ("Where to?") is a whole turn
        if words[0] in SUBORDINATORS and "," not in text:
            return True  # a clause that opens with "if", "after", "because"... and has no main clause yet
        if self.fragment_numbers and _NUMBER.search(text.strip().lower()):
            return True
        return len(words) <= self.fragment_words


_WORD = re.compile(r"[a-z']+")
_NUMBER = re.compile(
    r"(\d[\d,.:]*|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
    r"hundred|thousand|million))\.?$"
)
SUBORDINATORS = frozenset(
    ["if", "when", "whenever", "after", "before", "because", "although", "though", "while", "since", "until", "unless"]
)
"""Words that open a clause which needs a main clause after it ("If it rains tomorrow, ..."): such a transcript
with no comma yet is a fragment, however long ("After the meeting.", Whisper's period on a breath)."""

SHORT_ANSWER_WORDS = frozenset(
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


def completeness(text: str, trailing_words: frozenset[str] = TRAILING_WORDS) -> Completeness:
    """Does ``text`` end like a finished sentence?"""
    stripped = text.strip()
    if not stripped:
        return Completeness.UNKNOWN
    words = _WORD.findall(stripped.lower())
    if stripped.endswith(("...", "…", ",", ";", ":", "-", "—")):
        return Completeness.TRAILING
    if words and words[-1] in trailing_words and (stripped[-1] not in "?!" or words[-1] in FILLERS):
        return Completeness.TRAILING  # "Could you repeat that?" is a question, "Is it, um?" is not
    if words and words[-1] in OPEN_WORDS and stripped[-1] not in "?!":
        return Completeness.TRAILING
    if stripped[-1] in "?!":
        return Completeness.COMPLETE
    if stripped[-1] == "." and len(words) > 1:
        # Whisper ends almost any fragment with a period; one word ("Wait.", "Well.", "Okay.") is too little to
        # tell a whole turn from an opener followed by a pause, so it gets the default hangover.
        return Completeness.COMPLETE
    return Completeness.UNKNOWN


def normalise_phrase(text: str) -> str:
    return " ".join(_WORD.findall(text.lower().replace("-", " ")))


_REPEATS = re.compile(r"([a-z])\1+")


def _squashed(phrase: str) -> str:
    """Letters said longer are the same sound: "mmm hmmm" and "mm hmm" -> "m hm", "ahh" -> "ah"."""
    return _REPEATS.sub(r"\1", phrase)


def no_bid(text: str, phrases: tuple[str, ...] = BACKCHANNELS) -> bool:
    """Said while the agent talks, ``text`` does not claim the floor: no words at all, or acknowledgements."""
    return not normalise_phrase(text) or is_backchannel(text, phrases)


STOP_WORDS: tuple[str, ...] = (
    "wait", "stop", "no", "nope", "hold on", "hold it", "hang on", "sorry", "excuse me", "pardon", "what",
    "hey", "hello", "listen", "actually", "but", "cancel", "enough", "quiet", "shut up", "one moment",
    "one second", "just a second", "just a moment",
)  # fmt: skip
"""Interjections that stop a speaker. A sound shorter than a barge-in needs takes the floor only when its
transcript begins with one of these: Whisper makes words of coughs and clicks ("On.", "Ha!"), and a short
real interruption is almost always one of them."""


def short_bid(text: str) -> bool:
    """The transcript of a short sound made over the agent asks it to stop (``STOP_WORDS``)."""
    said = normalise_phrase(text)
    return any(said == word or said.startswith(word + " ") for word in STOP_WORDS)


BID_WORDS = 4
"""Words (of two letters or more, acknowledgements left out) that make a short sound over the agent a bid for the
floor even without an interjection ("bread and some butter"). tiny.en writes up to three for a hum or a short
acknowledgement ("And may Chen." for "mhm", "And then, um." for "mm-hmm": ``bench/backchannels.py``)."""


def claims_floor(text: str, phrases: tuple[str, ...] = BACKCHANNELS) -> bool:
    """Said over the agent by a sound too short to be sure of, ``text`` takes the floor: once any leading
    acknowledgements are left out ("yeah, but..."), it begins with an interjection (``short_bid``: "wait",
    "stop", "no", "but") or holds at least ``BID_WORDS`` words."""
    said = _after_acknowledgements(normalise_phrase(text), phrases)
    if not said:
        return False
    if short_bid(said):
        return True
    return sum(len(word) > 1 for word in said.split()) >= BID_WORDS


@functools.cache
def _acknowledgement_words(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``phrases`` and ``SOUNDS`` as squashed words, longest first."""
    found = {tuple(_squashed(normalise_phrase(p)).split()) for p in (*phrases, *SOUNDS)} - {()}
    return tuple(sorted(found, key=len, reverse=True))


def _after_acknowledgements(said: str, phrases: tuple[str, ...]) -> str:
    """``said`` (normalised) without the acknowledgements and sounds it begins with (matched with drawn-out
    letters squashed, "yeahhh" = "yeah"; the rest is returned as it was said)."""
    patterns = _acknowledgement_words(phrases)
    words = said.split()
    squashed = [_squashed(w) for w in words]
    start = 0
    while start < len(words):
        match = next((len(p) for p in patterns if tuple(squashed[start : start + len(p)]) == p), 0)
        if not match:
            break
        start += match
    return " ".join(words[start:])


def is_backchannel(text: str, phrases: tuple[str, ...] = BACKCHANNELS) -> bool:
    """True when ``text`` is only acknowledgements ("uh-huh", "yeah, okay"): not a bid for the floor.

    Matching ignores case, punctuation, hyphens ("Uh-huh." = "uh huh") and drawn-out letters ("Mmmm" = "mm",
    "Yeahhh" = "yeah"), and also accepts the ``SOUNDS`` Whisper writes for hums and grunts ("Uh", "Uh-uh",
    "M-"). The text may stop partway through an acknowledgement of several words ("Okay, got" of "okay, got
    it"; "All" of "all right"): a quick transcript is taken while the caller is still speaking. An empty
    ``phrases`` turns acknowledgements off (nothing is one)."""
    said = _squashed(normalise_phrase(text))
    if not said or not phrases:
        return False
    known = sorted({_squashed(normalise_phrase(p)) for p in (*phrases, *SOUNDS)} - {""}, key=len, reverse=True)
    while said:
        for phrase in known:
            if said == phrase or said.startswith(phrase + " "):
                said = said[len(phrase) :].strip()
                break
        else:
            # Cut short: what is left begins an acknowledgement of several words.
            return any(phrase.startswith(said + " ") for phrase in known)
    return True
