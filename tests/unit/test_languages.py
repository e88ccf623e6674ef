"""A call's language: parsed from what clients send (``agent.languages``); given, detected, kept, changed
(``agent.core.call_language``)."""

from __future__ import annotations

import pytest

from agent.core.call_language import CHANGE_MIN_S, CHANGE_PROBABILITY, CallLanguage, decide
from agent.languages import LANGUAGES, NAMES, parse_language
from agent.ports import LanguageHint


@pytest.mark.parametrize(
    ("given", "code"),
    [
        ("de", "de"),
        ("DE", "de"),
        ("de-DE", "de"),
        ("pt_BR", "pt"),
        ("German", "de"),
        ("deutsch", "de"),
        ("한국어", "ko"),
        ("zh-Hans", "zh"),
        ("cmn", "zh"),
        ("Korean", "ko"),
        (" en ", "en"),
    ],
)
def test_parse_language_takes_codes_tags_and_names(given: str, code: str) -> None:
    assert parse_language(given) == code


@pytest.mark.parametrize("given", [None, "", "auto", "AUTO", "  "])
def test_parse_language_auto_is_none(given: str | None) -> None:
    assert parse_language(given) is None


@pytest.mark.parametrize("given", ["xx", "nl", "Klingon", "de;drop", "a" * 300])
def test_parse_language_refuses_what_the_voice_cannot_speak(given: str) -> None:
    with pytest.raises(ValueError, match="auto"):
        parse_language(given)


def test_the_ten_languages_have_the_names_the_endpoint_takes() -> None:
    assert len(LANGUAGES) == 10
    assert {NAMES[c] for c in LANGUAGES} == {
        "Chinese",
        "English",
        "Japanese",
        "Korean",
        "German",
        "French",
        "Russian",
        "Portuguese",
        "Spanish",
        "Italian",
    }


def test_first_turn_takes_the_most_probable_language() -> None:
    assert decide(None, {"de": 0.41, "en": 0.39, "nl": 0.9}, 1.0) == "de"  # nl is not one of the ten


def test_a_known_language_is_kept_when_detection_is_unsure() -> None:
    assert decide("de", {"en": CHANGE_PROBABILITY - 0.01, "de": 0.1}, 3.0) == "de"


def test_a_known_language_is_kept_on_a_short_turn() -> None:
    assert decide("de", {"en": 0.99}, CHANGE_MIN_S - 0.1) == "de"


def test_a_confident_long_turn_changes_the_language() -> None:
    assert decide("de", {"en": CHANGE_PROBABILITY, "de": 0.05}, CHANGE_MIN_S) == "en"


def test_no_probabilities_keep_what_is_known() -> None:
    assert decide("ko", {}, 3.0) == "ko"
    assert decide(None, {}, 3.0) is None  # still unknown: the call keeps answering in its starting language


def test_a_given_language_is_fixed() -> None:
    choice = CallLanguage("ko", detect=False)
    assert choice.fixed and choice.current == "ko"
    assert choice.hint() == LanguageHint("ko", detect=False)
    assert not choice.observe("en", 0.99)
    assert choice.current == "ko" and choice.changes == 0


def test_an_undetected_call_asks_for_detection_and_answers_in_the_fallback() -> None:
    choice = CallLanguage("en", detect=True)
    assert not choice.fixed
    assert choice.hint() == LanguageHint(None, detect=True)
    assert choice.current == "en"


def test_the_first_detection_sticks_and_is_not_a_change() -> None:
    choice = CallLanguage("en", detect=True)
    assert not choice.observe("de", 0.4)
    assert choice.current == "de" and choice.detected == "de"
    assert choice.hint() == LanguageHint("de", detect=True)  # the recogniser keeps it unless sure (decide)
    assert not choice.observe("de", 0.9)
    assert choice.changes == 0


def test_a_transcript_without_detection_says_nothing_of_the_language() -> None:
    choice = CallLanguage("en", detect=True)
    assert not choice.observe("en", None)  # a clip too short to run the model on, or an English-only model
    assert choice.detected is None and choice.hint() == LanguageHint(None, detect=True)


def test_a_later_language_is_a_change() -> None:
    choice = CallLanguage("en", detect=True)
    choice.observe("de", 0.9)
    assert choice.observe("fr", 0.85)
    assert choice.current == "fr" and choice.changes == 1


def test_a_language_outside_the_ten_is_ignored() -> None:
    choice = CallLanguage("en", detect=True)
    assert not choice.observe("nl", 0.99)
    assert choice.current == "en" and choice.detected is None


def test_a_client_can_fix_the_language_later_and_let_go_again() -> None:
    choice = CallLanguage("en", detect=True)
    choice.observe("de", 0.9)
    choice.set("ja")
    assert choice.fixed and choice.current == "ja"
    choice.set(None)  # detect from here on, starting from the language it had
    assert choice.hint() == LanguageHint("ja", detect=True)


def test_a_language_the_recogniser_does_not_hear_is_refused_with_a_reason() -> None:
    from agent.errors import ProtocolError
    from agent.runtime.call.prestart import heard_language
    from agent.wires.phone.opening import phone_language

    assert heard_language("de", LANGUAGES) == "de"
    assert heard_language(None, ("en",)) is None
    with pytest.raises(ProtocolError) as caught:
        heard_language("de", ("en",))  # tiny.en
    assert caught.value.code == "unsupported_language" and "AGENT_ASR__MODEL=base" in caught.value.message
    # a phone call is never refused for it: the language is dropped (logged)
    assert phone_language("de", "twilio call CA1", ("en",)) is None
    assert phone_language("xx", "twilio call CA1", LANGUAGES) is None
    assert phone_language("de-DE", "twilio call CA1", LANGUAGES) == "de"
