"""The ten languages a call may be in, and how a call's language is chosen: given, detected, kept, changed.

Qwen3-TTS speaks ten languages; so does this server. A language is named here by its ISO 639-1 code
(``"de"``); ``NAMES`` gives the English name (the one the Qwen3-TTS endpoint and a language model take) and
``NATIVE`` the name a caller reads. ``parse_language`` accepts what clients send (``"de"``, ``"de-DE"``,
``"German"``, ``"auto"``).

``LanguageChoice`` is one call's language: fixed when the client gave one, else detected by the recogniser
on the first turn and kept for the call unless a later turn is confidently in another language (``decide``).
Pure: no I/O, no clock, no threads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

LANGUAGES: tuple[str, ...] = ("en", "zh", "ja", "ko", "de", "fr", "ru", "pt", "es", "it")
"""The ten languages, as ISO 639-1 codes (English first: the default)."""

NAMES: Mapping[str, str] = {
    "en": "English",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "de": "German",
    "fr": "French",
    "ru": "Russian",
    "pt": "Portuguese",
    "es": "Spanish",
    "it": "Italian",
}
"""English names: what the Qwen3-TTS endpoint's ``language`` field takes, and what a language model is told."""

NATIVE: Mapping[str, str] = {
    "en": "English",
    "zh": "中文",
    "ja": "日本語",
    "ko": "한국어",
    "de": "Deutsch",
    "fr": "Français",
    "ru": "Русский",
    "pt": "Português",
    "es": "Español",
    "it": "Italiano",
}
"""Each language's name for itself (a caller's language picker)."""

AUTO = "auto"
DEFAULT = "en"

CHANGE_PROBABILITY = 0.9
"""A call's detected language changes only when a turn is in another language with at least this probability
(among the ten): on a short clip the recogniser's guess is often wrong at 0.4-0.85 (a German partial
transcript of robotic speech came out English at 0.83), and a whole sentence in a language is 0.95-0.99."""
CHANGE_MIN_S = 2.0
"""...and only on a turn at least this long: a one-word turn ("okay", "Taxi") says little about the language."""

_ALIASES = {"cmn": "zh", "yue": "zh", "jp": "ja", "kr": "ko", "ger": "de", "deu": "de", "fra": "fr", "spa": "es"}


def parse_language(value: str | None) -> str | None:
    """A client's language (``"de"``, ``"de-DE"``, ``"pt_BR"``, ``"German"``, ``"deutsch"``) as a code of
    ``LANGUAGES``; ``None`` for unset, empty or ``"auto"`` (detect it). Raises ``ValueError`` (with the languages
    it takes) for anything else."""
    if value is None:
        return None
    text = value.strip().lower()
    if not text or text == AUTO:
        return None
    for code in LANGUAGES:
        if text in (NAMES[code].lower(), NATIVE[code].lower()):
            return code
    primary = re.split(r"[-_]", text, maxsplit=1)[0]
    primary = _ALIASES.get(primary, primary)
    if primary in LANGUAGES:
        return primary
    raise ValueError(f"language must be 'auto' or one of {', '.join(LANGUAGES)}, got {value[:40]!r}")


def decide(current: str | None, probabilities: Mapping[str, float], seconds: float) -> str:
    """The language to transcribe a turn in, from the recogniser's probabilities over the ten languages.

    The first turn of a call (``current`` is ``None``) takes the most probable language. Later turns keep
    ``current`` unless another language is at least ``CHANGE_PROBABILITY`` likely on a turn of at least
    ``CHANGE_MIN_S`` seconds. With no probabilities, ``current`` (or the default) stays.

    (Letting an unsure first guess give way to any surer later one was tried: on the espeak-ng bench it got no
    call's language more right, and it let a call's language flap between the partial transcripts of one
    utterance.)"""
    candidates = {code: p for code, p in probabilities.items() if code in LANGUAGES}
    if not candidates:
        return current or DEFAULT
    top = max(candidates, key=lambda code: candidates[code])
    if current is None or top == current:
        return top
    if candidates[top] >= CHANGE_PROBABILITY and seconds >= CHANGE_MIN_S:
        return top
    return current


@dataclass(frozen=True, slots=True)
class LanguageHint:
    """What the recogniser is asked for one utterance: ``language`` to transcribe in (``None``: not known yet),
    and whether it may detect another (``detect``; ``False``: the language was given, use it)."""

    language: str | None
    detect: bool


class LanguageChoice:
    """One call's language. ``given`` (a code) fixes it; ``None`` lets the recogniser detect it.

    ``hint`` is what to ask the recogniser for the next utterance; ``observe`` takes the language a transcript
    came back in (the recogniser applied ``decide``) and keeps it for the call. ``current`` is the language to
    answer in: the given one, else the last detected one, else ``fallback`` before anything was heard."""

    def __init__(self, given: str | None, fallback: str = DEFAULT) -> None:
        self._given = given
        self._detected: str | None = None
        self._fallback = given or fallback
        self.changes = 0
        """How many times a detected language was replaced by another (the first detection is not a change)."""

    @property
    def fixed(self) -> bool:
        return self._given is not None

    @property
    def given(self) -> str | None:
        return self._given

    @property
    def detected(self) -> str | None:
        """The language detected so far (``None`` when given, or before the first transcript)."""
        return self._detected

    @property
    def current(self) -> str:
        return self._given or self._detected or self._fallback

    def hint(self) -> LanguageHint:
        if self._given is not None:
            return LanguageHint(self._given, detect=False)
        return LanguageHint(self._detected, detect=True)

    def observe(self, language: str, probability: float | None) -> bool:
        """A transcript came back in ``language``, detected with ``probability`` (``None``: not detected, e.g. a
        clip too short to run the recogniser on: it says nothing). Returns whether the call's language changed."""
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
