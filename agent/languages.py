"""The ten languages a call may be in: their codes, names and the names clients send.

Qwen3-TTS speaks ten languages; so does this server. A language is named here by its ISO 639-1 code
(``"de"``); ``NAMES`` gives the English name (the one the Qwen3-TTS endpoint and a language model take) and
``NATIVE`` the name a caller reads. ``parse_language`` accepts what clients send (``"de"``, ``"de-DE"``,
``"German"``, ``"auto"``).

How one call's language is chosen (given, detected, kept, changed) is the session core's
(``agent.core.call_language``); this module is only the table. Pure: no I/O, no clock, no threads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

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
"""What a client or the settings say to have the language detected."""
DEFAULT = "en"
"""The language of a call nobody named and nothing was heard in yet, and of an English-only recogniser."""

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
