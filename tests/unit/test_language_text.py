"""The agent's own words per language: the reply instruction for a model and the fixed phrases."""

from __future__ import annotations

import re

import pytest

from agent.config import TurnSettings
from agent.core.language_text import DEFAULTS, TRANSLATIONS, phrase_text, reply_instruction
from agent.languages import LANGUAGES, NAMES

OTHERS = [code for code in LANGUAGES if code != "en"]
SETTING = {
    "apology": "apology_text",
    "idle_prompt": "idle_prompt_text",
    "hold": "hold_text",
    "goodbye": "goodbye_text",
    "no_voice": "no_voice_text",
}
SCRIPTS = {  # a letter each language's text must contain
    "zh": r"[\u4e00-\u9fff]",
    "ja": r"[\u3040-\u30ff]",  # kana
    "ko": r"[\uac00-\ud7a3]",
    "ru": r"[а-яё]",
}


def test_english_prompts_are_unchanged() -> None:
    assert reply_instruction("en") == ""
    assert reply_instruction("xx") == ""


def test_reply_instruction_names_the_language() -> None:
    assert reply_instruction("de") == "The caller speaks German. Always answer in German, in plain spoken sentences."
    for code in OTHERS:
        assert reply_instruction(code).count(NAMES[code]) == 2


def test_defaults_are_the_settings_defaults() -> None:
    settings = TurnSettings()
    assert {key: getattr(settings, field) for key, field in SETTING.items()} == dict(DEFAULTS)


@pytest.mark.parametrize("key", sorted(DEFAULTS))
def test_every_phrase_has_every_language(key: str) -> None:
    assert set(TRANSLATIONS[key]) == set(OTHERS)
    for code, text in TRANSLATIONS[key].items():
        assert text.strip() == text and text != DEFAULTS[key], (key, code)
        assert text[-1] in ".?!。？！", (key, code)  # a whole spoken sentence
        if code in SCRIPTS:
            assert re.search(SCRIPTS[code], text.lower()), (key, code)


@pytest.mark.parametrize("key", sorted(DEFAULTS))
@pytest.mark.parametrize("code", OTHERS)
def test_the_default_text_is_translated(key: str, code: str) -> None:
    assert phrase_text(key, DEFAULTS[key], code) == TRANSLATIONS[key][code]


def test_examples() -> None:
    assert phrase_text("hold", "One moment.", "de") == "Einen Moment, bitte."
    assert phrase_text("idle_prompt", "Are you still there?", "es") == "¿Sigue ahí?"
    assert phrase_text("apology", DEFAULTS["apology"], "zh") == "抱歉，我这边出了点问题。您能再说一遍吗？"


@pytest.mark.parametrize("key", sorted(DEFAULTS))
def test_english_and_an_unknown_language_keep_the_default(key: str) -> None:
    assert phrase_text(key, DEFAULTS[key], "en") == DEFAULTS[key]
    assert phrase_text(key, DEFAULTS[key], "xx") == DEFAULTS[key]


@pytest.mark.parametrize("code", [*LANGUAGES, "xx"])
def test_an_operators_own_text_is_kept_as_written(code: str) -> None:
    assert phrase_text("hold", "Hang on, checking.", code) == "Hang on, checking."
    assert phrase_text("apology", "Entschuldigung!", code) == "Entschuldigung!"
    assert phrase_text("goodbye", "", code) == ""  # emptied: the phrase is off in every language
    assert phrase_text("hold", "One moment", code) == "One moment"  # not exactly the default


def test_a_phrase_without_built_in_texts_is_as_configured() -> None:
    assert phrase_text("greeting", "Welcome to Acme.", "fr") == "Welcome to Acme."
    assert phrase_text("greeting", "", "ja") == ""
