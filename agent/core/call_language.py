"""One call's language, owned by the session core: given by the client, or detected by the recogniser on the first
turn and kept unless a later turn is confidently in another.

One reason to change: how a call's language is chosen. ``CallLanguage`` is the choice (the session holds one and
its listening and speaking sides read it); ``hint`` is what the recogniser is asked for the next utterance, sent
with each ``Transcribe``; ``decide`` is the rule the recogniser applies to its probabilities when it may detect.
The shell only carries them: the hint to the recogniser, the transcript's language and probability back.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent.core.events import LanguageHeard
from agent.languages import LANGUAGES
from agent.ports import LanguageHint

CHANGE_PROBABILITY = 0.9
"""A call's detected language changes only when a turn is in another language with at least this probability
(among the ten): on a short clip the recogniser's guess is often wrong at 0.4-0.85 (a German partial
transcript of robotic speech came out English at 0.83), and a whole sentence in a language is 0.95-0.99."""
CHANGE_MIN_S = 2.0
"""...and only on a turn at least this long: a one-word turn ("okay", "Taxi") says little about the language."""


def decide(current: str | None, probabilities: Mapping[str, float], seconds: float) -> str | None:
    """The language to transcribe a turn in, from the recogniser's probabilities over the ten languages.

    The first turn of a call (``current`` is ``None``) takes the most probable language. Later turns keep
    ``current`` unless another language is at least ``CHANGE_PROBABILITY`` likely on a turn of at least
    ``CHANGE_MIN_S`` seconds. With no probabilities among the ten, ``current`` stays (``None``: still unknown).

    (Letting an unsure first guess give way to any surer later one was tried: on the espeak-ng bench it got no
    call's language more right, and it let a call's language flap between the partial transcripts of one
    utterance.)"""
    candidates = {code: p for code, p in probabilities.items() if code in LANGUAGES}
    if not candidates:
        return current
    top = max(candidates, key=lambda code: candidates[code])
    if current is None or top == current:
        return top
    if candidates[top] >= CHANGE_PROBABILITY and seconds >= CHANGE_MIN_S:
        return top
    return current


class CallLanguage:
    """One call's language. It starts in ``language``; with ``detect`` the recogniser may detect it (nothing was
    given: ``language`` is only what the call is answered in before anything was heard), else it is fixed.

    ``observe`` takes the language a transcript came back in (the recogniser applied ``decide``) and keeps it for
    the call; ``current`` is the language to answer in: the given one, else the last detected one, else the one
    it started in."""

    def __init__(self, language: str, *, detect: bool) -> None:
        self._given: str | None = None if detect else language
        self._detected: str | None = None
        self._fallback = language
        self.changes = 0
        """How many times a detected language was replaced by another (the first detection is not a change)."""

    @property
    def fixed(self) -> bool:
        """The client (or the server's settings) gave the language: the recogniser does not detect it."""
        return self._given is not None

    @property
    def detected(self) -> str | None:
        """The language detected so far (``None`` when given, or before the first transcript)."""
        return self._detected

    @property
    def current(self) -> str:
        return self._given or self._detected or self._fallback

    def hint(self) -> LanguageHint:
        """What to ask the recogniser for the next utterance."""
        if self._given is not None:
            return LanguageHint(self._given, detect=False)
        return LanguageHint(self._detected, detect=True)

    def observe(self, language: str, probability: float | None) -> bool:
        """A transcript came back in ``language``, detected with ``probability`` (``None``: not detected, e.g. a
        clip too short to run the recogniser on: it says nothing). Returns whether a detected language was
        replaced by another (a change, not the first detection)."""
        if self._given is not None or language not in LANGUAGES or probability is None:
            return False
        if language == self._detected:
            return False
        changed = self._detected is not None
        self.changes += changed
        self._detected = language
        return changed

    def set(self, given: str | None) -> None:
        """The client now gives ``given`` (or ``None``: detect from here on, starting from what was heard)."""
        if given is None and self._given is not None:
            self._detected = self._given
        self._given = given
        if given is not None:
            self._fallback = given

    def heard(self, language: str, probability: float | None) -> list[LanguageHeard]:
        """``observe``, as the session's effects: ``LanguageHeard`` when the call's language is now another."""
        was = self.current
        return self._moved(was, self.observe(language, probability))

    def choose(self, given: str | None) -> list[LanguageHeard]:
        """``set``, as the session's effects: ``LanguageHeard`` when the call's language is now another."""
        was = self.current
        self.set(given)
        return self._moved(was, change=False)

    def _moved(self, was: str, change: bool) -> list[LanguageHeard]:
        return [LanguageHeard(self.current, was, change)] if self.current != was else []
