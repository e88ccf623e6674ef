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

Said over the agent, a transcript is an acknowledgement (``is_backchannel``: "uh-huh", "ja", "はい") or claims
the floor (``claims_floor``: "wait", "warte", "等一下", or several words).

Every rule reads the transcript in its language (``language``, an ISO 639-1 code, always given), with
that language's words (``agent.core.lexicon``). Chinese and Japanese, written without spaces, are matched
character by character; sentence-final "。？！" count like ".?!". A language without a lexicon gets the rules
that need no words: punctuation, digits and hums.

One reason to change: when a turn is over, or a sound over the agent takes the floor. Pure functions over text
and numbers; how text is cut into words and read with a lexicon is ``agent.core.wording``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum

from agent.core.lexicon.shared import NEUTRAL_SOUNDS
from agent.core.wording import (
    ASKS,
    COMMAS,
    DIGITS,
    HANGUL,
    PAUSES,
    STOPS,
    Rules,
    as_phrase,
    ends_in,
    ends_in_filler,
    ends_in_number,
    is_cjk,
    is_short_answer,
    open_ending,
    opens_clause,
    rules_for,
    squashed,
    tokens_of,
    word_count,
)

__all__ = [
    "BID_WORDS",
    "Acknowledgements",
    "Completeness",
    "EndpointPolicy",
    "claims_floor",
    "completeness",
    "is_backchannel",
    "no_bid",
    "normalise_phrase",
    "short_bid",
]


WORDS_TO_READ = 3
"""Words a transcript needs before the text model's "unfinished" holds the turn: it reads one or two out of
context poorly ("Two.", "Transfer.", "Invalid choice." score as low as fragments)."""


@dataclass(frozen=True, slots=True)
class Acknowledgements:
    """What said over the agent is no bid for the floor (``BargeInPolicy.acknowledging``).

    ``on``: each language's own acknowledgements and sounds (``agent.core.lexicon``; a language without a lexicon:
    hums, ``NEUTRAL_SOUNDS``) and the operator's ``extra`` ones, which count in every language. Off: nothing is an
    acknowledgement, in any language (any speech over the barge-in minimum interrupts)."""

    on: bool = True
    extra: tuple[str, ...] = ()


ACKNOWLEDGE = Acknowledgements()
"""Each language's own acknowledgements, nothing added: the default."""


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
    fragment_words: int = 0
    """A transcript of at most this many words (not a short answer such as "Yes." or "No, thanks.") that does
    not trail off is a fragment: the caller is often only thinking ("I was thinking um", Whisper dropping the
    "um" and adding a period). 0: no such rule. Chinese and Japanese count two characters as a word."""
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
    words: bool = False
    """Ask the text end-of-turn model (``ScoreWords``) once each speculative transcript is back."""
    words_sure: float = 0.2
    """Text score at or above which the words read finished, whatever the rules for fragments say."""
    words_sure_ms: int = 0
    """The wait of a sentence the text model and the sound are both sure of (0: ``hangover_min_ms``)."""
    words_unsure_ms: int = 0
    """The wait of a sentence the text model reads unfinished but that sounds sure (0: ``hangover_max_ms``); an
    unsure sound waits ``hangover_max_ms``, in proportion between."""
    words_unsure: float = 0.015
    """Text score at or below which the words read unfinished ("The quick brown fox."): ``WORDS_TO_READ`` words or
    more wait longest, as words that trail off do, whatever the sound says (a phrase's fall sounds finished)."""
    words_doubt: float = 0.0
    """Text score at or below which the words read unfinished as at ``words_unsure``, but only where the sound is
    not sure either (below ``sure``) and the words ask nothing ("And so my fellow Americans." 0.07, sound 0.61):
    finished sentences the model also scores low ("Where's the station?", or a sure "I would like a coffee.") are
    left to the rules and the sound. 0 = off."""

    rescore_ms: int = 0
    """With ``acoustic``: the sound of a pause is scored again every ``rescore_ms`` of its silence after the first
    score, with all of the silence so far, while the turn waits (0: one score per pause). An ending's fall is
    often heard clearer 200-400 ms into the pause (the model hears the silence after it), and a hesitation's
    silence does not change what it sounds like: each new score replaces the last, and the wait is judged
    again from it."""
    rescores: int = 0
    """The most re-scores of one pause (what each costs: a Smart Turn call)."""

    def hangover_for(
        self, text: str | None, probability: float | None = None, *, language: str, words: float | None = None
    ) -> int:
        """The trailing silence that ends the turn, given its speculative transcript (``None``: not known yet)
        in ``language``, the acoustic model's probability that it is finished (``None``: no score: the text
        rules alone) and the text model's (``words``; ``None``: the rules alone read the words). Words that
        trail off by the rules ("for, um,") wait longest whatever the models say."""
        if text is None:
            return self.hangover_ms
        verdict = completeness(text, language=language)
        if verdict is Completeness.TRAILING:
            return self.hangover_max_ms
        rules = rules_for(language)
        fragment = self._fragment(text, rules)
        if words is not None and (words <= self.words_unsure or self._doubted(text, probability, words)):
            # The model reads the words unfinished: as sure a sign as "um," (a phrase's fall sounds finished).
            # A word or two out of context it reads poorly ("Two.", "Transfer."): the rules and the sound judge.
            if word_count(tokens_of(text, rules), rules) >= WORDS_TO_READ:
                if probability is None or not self.words_unsure_ms:
                    return self.hangover_max_ms
                return self._between(probability, self.words_unsure_ms, self.hangover_max_ms)
        elif words is not None and words >= self.words_sure:
            verdict, fragment = Completeness.COMPLETE, False
            if probability is not None and probability >= self.sure:
                return self.words_sure_ms or self.hangover_min_ms  # the words and the sound are sure
        fragment_ms = max(self.fragment_ms or self.hangover_max_ms, self.hangover_ms)
        if probability is None:
            if fragment:
                return fragment_ms
            return self.hangover_min_ms if verdict is Completeness.COMPLETE else self.hangover_ms
        if fragment:
            sure_ms = self.hangover_min_ms if self.sure_fragments else self.hangover_ms
            return self._between(probability, sure_ms, self.hangover_max_ms)
        return self._between(probability, self.hangover_min_ms, max(self.unsure_ms or fragment_ms, self.hangover_ms))

    def _doubted(self, text: str, probability: float | None, words: float) -> bool:
        """The words score at or below ``words_doubt``, the sound is not sure, and they ask nothing."""
        return words <= self.words_doubt and probability is not None and probability < self.sure and not _asks(text)

    def _between(self, probability: float, sure_ms: int, unsure_ms: int) -> int:
        """``sure_ms`` at or above ``sure``, ``unsure_ms`` at or below ``unsure``, in proportion between."""
        if probability >= self.sure:
            return sure_ms
        if probability <= self.unsure:
            return unsure_ms
        return round(sure_ms + (unsure_ms - sure_ms) * (self.sure - probability) / (self.sure - self.unsure))

    def _fragment(self, text: str, rules: Rules) -> bool:
        words = tokens_of(text, rules)
        stripped = text.strip()
        if not words or _asks(stripped) or is_short_answer(words, rules):
            return False  # a short answer, a greeting or a short question ("Where to?") is a whole turn
        if rules.lex is None:
            return self.fragment_numbers and DIGITS.search(stripped) is not None  # no words to judge
        if opens_clause(words, rules) and not any(mark in text for mark in COMMAS):
            return True  # a clause that opens with "if", "after", "because"... and has no main clause yet
        if self.fragment_numbers and ends_in_number(stripped, words, rules):
            return True
        return word_count(words, rules) <= self.fragment_words


# --- the caller's turn ------------------------------------------------------------------------------------------


def completeness(text: str, *, language: str) -> Completeness:
    """Does ``text`` end like a finished sentence, by ``language``'s words (``agent.core.lexicon``; a language
    without a lexicon is judged by its punctuation alone)?"""
    stripped = text.strip()
    if not stripped:
        return Completeness.UNKNOWN
    rules = rules_for(language)
    words = tokens_of(stripped, rules)
    if stripped.endswith(PAUSES):
        return Completeness.TRAILING
    asks = stripped[-1] in ASKS
    if words and rules.lex is not None:
        if ends_in_filler(words, rules.hums, rules.squashed_hums, rules):
            return Completeness.TRAILING  # "Could you repeat that?" is a question, "Is it, um?" is not
        if not asks and (
            ends_in(words, rules.trailing, rules)
            or ends_in_filler(words, rules.fillers, rules.squashed_fillers, rules)
            or ends_in(words, rules.open_words, rules)
            or open_ending(words[-1], rules)
        ):
            return Completeness.TRAILING  # "Что это значит?" is a question, "Я думаю, значит" is not
    if asks:
        return Completeness.COMPLETE
    if stripped[-1] in STOPS and word_count(words, rules) > 1:
        # Whisper ends almost any fragment with a period; one word ("Wait.", "Well.", "Okay.") is too little to
        # tell a whole turn from an opener followed by a pause, so it gets the default hangover.
        return Completeness.COMPLETE
    return Completeness.UNKNOWN


# --- sounds made over the agent ---------------------------------------------------------------------------------


def normalise_phrase(text: str, *, language: str) -> str:
    """``text``'s words in lower case, single-spaced, without punctuation or hyphens (Chinese and Japanese: its
    characters without spaces); empty when it holds no words."""
    return as_phrase(text, rules_for(language))


@functools.cache
def _acknowledgements(acks: Acknowledgements, language: str) -> tuple[str, ...]:
    """What is no bid for the floor in ``language``, as squashed phrases, longest first: its acknowledgements and
    the operator's (``acks``), and its sounds (a language without a lexicon: hums, ``NEUTRAL_SOUNDS``). Off: its
    sounds alone (what ``claims_floor`` leaves out before it counts words; ``is_backchannel`` is false)."""
    rules = rules_for(language)
    lex = rules.lex
    own, sounds = ((), NEUTRAL_SOUNDS) if lex is None else (lex.backchannels, lex.sounds)
    said = (*own, *sounds, *acks.extra) if acks.on else sounds
    found = {squashed(as_phrase(p, rules), rules) for p in said} - {""}
    return tuple(sorted(found, key=lambda p: (-len(p), p)))


@functools.cache
def _acknowledgement_words(acks: Acknowledgements, language: str) -> tuple[tuple[str, ...], ...]:
    """``_acknowledgements`` as words, most words first."""
    found = {tuple(p.split()) for p in _acknowledgements(acks, language)}
    return tuple(sorted(found, key=lambda p: (-len(p), p)))


def _after_acknowledgements(said: str, acks: Acknowledgements, language: str) -> str:
    """``said`` (normalised) without the acknowledgements and sounds it begins with (matched with drawn-out
    letters squashed, "yeahhh" = "yeah"; the rest is returned as it was said)."""
    rules = rules_for(language)
    if rules.compact:
        known = set(_acknowledgements(acks, language))
        longest = max(map(len, known), default=0)
        start = 0
        while start < len(said):
            ends = range(min(len(said), start + 3 * longest), start, -1)
            end = next((e for e in ends if squashed(said[start:e], rules).strip() in known), 0)
            if not end:
                break
            start = end
        return said[start:].strip()
    patterns = _acknowledgement_words(acks, language)
    words = said.split()
    drawn = [squashed(w, rules) for w in words]
    start = 0
    while start < len(words):
        match = next((len(p) for p in patterns if tuple(drawn[start : start + len(p)]) == p), 0)
        if not match:
            break
        start += match
    return " ".join(words[start:])


def is_backchannel(text: str, acks: Acknowledgements = ACKNOWLEDGE, *, language: str) -> bool:
    """True when ``text`` is only acknowledgements ("uh-huh", "yeah, okay"; "ja, genau"; "对对"): not a bid for
    the floor.

    Matching ignores case, punctuation, hyphens ("Uh-huh." = "uh huh") and drawn-out letters ("Mmmm" = "mm",
    "Yeahhh" = "yeah"), and also accepts the ``SOUNDS`` Whisper writes for hums and grunts ("Uh", "Uh-uh",
    "M-"). The text may stop partway through an acknowledgement of several words ("Okay, got" of "okay, got
    it"; "All" of "all right"): a quick transcript is taken while the caller is still speaking. ``acks`` off:
    nothing is one, in any language; see ``_acknowledgements`` for what counts in ``language``."""
    rules = rules_for(language)
    said = squashed(as_phrase(text, rules), rules)
    if not said or not acks.on:
        return False
    known = _acknowledgements(acks, language)
    gap = "" if rules.compact else " "
    while said:
        for phrase in known:
            if said == phrase or said.startswith(phrase + gap):
                said = said[len(phrase) :].strip()
                break
        else:
            # Cut short: what is left begins an acknowledgement of several words.
            return any(phrase.startswith(said + gap) for phrase in known)
    return True


def no_bid(text: str, acks: Acknowledgements = ACKNOWLEDGE, *, language: str) -> bool:
    """Said while the agent talks, ``text`` does not claim the floor: no words at all, or acknowledgements."""
    return not normalise_phrase(text, language=language) or is_backchannel(text, acks, language=language)


def _stops(said: str, rules: Rules) -> bool:
    """``said`` (normalised) begins with an interjection that stops a speaker."""
    if rules.compact:
        return said.startswith(rules.stop_words) if rules.stop_words else False
    return any(said == word or said.startswith(word + " ") for word in rules.stop_words)


def short_bid(text: str, *, language: str) -> bool:
    """The transcript of a short sound made over the agent asks it to stop: it begins with an interjection
    (``STOP_WORDS``; another language's: ``agent.core.lexicon``; none without a lexicon)."""
    return _stops(normalise_phrase(text, language=language), rules_for(language))


BID_WORDS = 4
"""Words (of two letters or more, acknowledgements left out) that make a short sound over the agent a bid for the
floor even without an interjection ("bread and some butter"). tiny.en writes up to three for a hum or a short
acknowledgement ("And may Chen." for "mhm", "And then, um." for "mm-hmm": ``bench/backchannels.py``). A Korean
word of one syllable counts; two Chinese or Japanese characters count as one word."""


def _bid_words(said: str, rules: Rules) -> int:
    return sum(
        (len(word) + 1) // 2 if is_cjk(word) else int(len(word) > 1 or HANGUL.match(word) is not None)
        for word in tokens_of(said, rules)
    )


def claims_floor(text: str, acks: Acknowledgements = ACKNOWLEDGE, *, language: str) -> bool:
    """Said over the agent by a sound too short to be sure of, ``text`` takes the floor: once any leading
    acknowledgements are left out ("yeah, but...", "ja, aber..."), it begins with an interjection
    (``short_bid``: "wait", "stop", "no", "but"; "warte", "attends", "待って") or holds at least ``BID_WORDS``
    words."""
    rules = rules_for(language)
    said = _after_acknowledgements(normalise_phrase(text, language=language), acks, language)
    if not said:
        return False
    if _stops(said, rules):
        return True
    return _bid_words(said, rules) >= BID_WORDS


def passes(text: str, speech_ms: int, acks: Acknowledgements, max_ms: int, *, language: str) -> bool:
    """Said while the agent talks, ``text`` (``speech_ms`` of speech) does not claim the floor: nothing, an
    acknowledgement (``no_bid``), or a sound shorter than ``max_ms`` (``BargeInPolicy.backchannel_max_ms``) that
    does not claim the floor (an interjection such as "wait" or "stop", or several words: ``claims_floor``).
    tiny.en writes words for hums and short acknowledgements ("And may Chen." for "mhm", "Amen." for "mm"), so a
    word or three are no bid; a caller who means to take the floor says "wait", says more, or goes on
    (``bench/backchannels.py``)."""
    if no_bid(text, acks, language=language):
        return True
    return acks.on and speech_ms < max_ms and not claims_floor(text, acks, language=language)


def _asks(text: str) -> bool:
    """The words end as a question (an ASCII or a full-width question mark)."""
    return text.strip().endswith(("?", "？"))
