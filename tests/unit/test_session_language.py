"""The session core owns the call's language: it asks the recogniser for it (the hint on every ``Transcribe``),
takes what the recogniser detected, and the call's language goes into the reply request, the history's system
message, every sentence to speak and the fixed phrases. Synchronous, simulated clock."""

from __future__ import annotations

from agent.core.events import (
    GenerateReply,
    LanguageHeard,
    ReplyDelta,
    ReplyEnded,
    SpeechEnded,
    StageFailed,
    Synthesize,
    Tick,
    Transcribe,
    TranscriptReady,
    TranscriptText,
)
from agent.core.language_text import phrase_text
from agent.core.policies import Phrases
from agent.ports import LanguageHint
from tests.session_driver import Driver, events, of, requests, utter

APOLOGY_EN = "Sorry, something went wrong on my side. Could you say that again?"


def heard(d: Driver, text: str, language: str, probability: float | None = 0.97) -> GenerateReply:
    """One turn whose transcript came back in ``language``, detected with ``probability``."""
    (req,) = requests(utter(d))
    ask: GenerateReply
    (ask,) = of(d.at(0.1, TranscriptReady(req, text, language, probability)), GenerateReply)
    return ask


def test_a_german_transcript_asks_for_a_german_reply() -> None:
    d = Driver(detect_language=True)
    ask = heard(d, "Wie spät ist es?", "de")
    assert ask.language == "de"
    system = ask.history[0]
    assert system.role == "system" and system.text.startswith("sys")
    assert "German" in system.text  # told in words too, for a model that reads only the prompt
    assert ask.history[-1].text == "Wie spät ist es?"


def test_english_prompts_are_unchanged() -> None:
    d = Driver(detect_language=True)
    ask = heard(d, "What time is it?", "en")
    assert ask.language == "en"
    assert ask.history[0].text == "sys"


def test_the_transcript_event_says_its_language() -> None:
    d = Driver(detect_language=True)
    (req,) = requests(utter(d))
    (notice,) = [
        e for e in events(d.at(0.1, TranscriptReady(req, "안녕하세요", "ko", 0.99))) if isinstance(e, TranscriptText)
    ]
    assert notice.language == "ko"


def test_reply_sentences_are_spoken_in_the_callers_language() -> None:
    d = Driver(detect_language=True)
    ask = heard(d, "Erzähl mir etwas.", "de")
    effects = d.at(0.1, ReplyDelta(ask.turn, "Es war einmal ein Leuchtturm. "))
    effects += d.at(0.1, ReplyEnded(ask.turn))
    sentences = of(effects, Synthesize)
    assert sentences and all(s.language == "de" for s in sentences)


def test_the_apology_is_said_in_the_callers_language() -> None:
    d = Driver(detect_language=True, phrases=Phrases(apology=APOLOGY_EN))
    ask = heard(d, "Bonjour, quelle heure est-il ?", "fr")
    effects = d.at(0.1, StageFailed(ask.turn, "llm", "llm_failed", "boom"))
    (apology,) = [s for s in of(effects, Synthesize) if s.phrase == "apology"]
    assert apology.language == "fr"
    assert apology.text == phrase_text("apology", APOLOGY_EN, "fr") != APOLOGY_EN


def test_an_operators_own_phrase_is_kept_as_written() -> None:
    mine = "Entschuldigung, bitte noch einmal."
    d = Driver(detect_language=True, phrases=Phrases(apology=mine))
    ask = heard(d, "Hallo?", "de")
    effects = d.at(0.1, StageFailed(ask.turn, "llm", "llm_failed", "boom"))
    (apology,) = [s for s in of(effects, Synthesize) if s.phrase == "apology"]
    assert apology.text == mine


def test_the_session_follows_a_change_of_language() -> None:
    d = Driver(detect_language=True)
    first = heard(d, "Hallo.", "de")
    d.at(0.1, ReplyEnded(first.turn))
    d.at(0.1, SpeechEnded(first.turn))
    d.at(5.0, Tick())
    assert d.session.language == "de"
    second = heard(d, "Actually, English please.", "en")
    assert second.language == "en" and d.session.language == "en"
    assert second.history[0].text == "sys"


def test_each_transcription_asks_for_the_calls_language_and_whether_to_detect_it() -> None:
    d = Driver(detect_language=True)
    (ask,) = of(utter(d), Transcribe)
    assert ask.hint == LanguageHint(None, detect=True)  # nothing heard yet: detect
    effects = d.at(0.1, TranscriptReady(ask.request, "Hallo.", "de", 0.6))
    assert of(effects, LanguageHeard) == [LanguageHeard("de", "en", change=False)]  # the first detection
    again = of(utter(d), Transcribe)
    assert again and {a.hint for a in again} == {LanguageHint("de", detect=True)}  # kept unless sure of another


def test_a_given_language_is_asked_for_and_no_transcript_changes_it() -> None:
    d = Driver()
    (ask,) = of(utter(d), Transcribe)
    assert ask.hint == LanguageHint("en", detect=False)
    effects = d.at(0.1, TranscriptReady(ask.request, "Hallo.", "de", 0.99))
    assert not of(effects, LanguageHeard) and d.session.language == "en"
    assert of(effects, GenerateReply)[0].language == "en"


def test_a_transcript_not_detected_says_nothing_of_the_language() -> None:
    d = Driver(detect_language=True)
    ask = heard(d, "Hallo.", "de", probability=None)  # a clip too short to run the detector on
    assert ask.language == "en" and d.session.language == "en"


def test_a_change_is_told_as_one() -> None:
    d = Driver(detect_language=True)
    first = heard(d, "Hallo.", "de")
    d.at(0.1, ReplyEnded(first.turn))
    d.at(0.1, SpeechEnded(first.turn))
    (req,) = requests(utter(d))
    effects = d.at(0.1, TranscriptReady(req, "Actually, English please.", "en", 0.99))
    assert of(effects, LanguageHeard) == [LanguageHeard("en", "de", change=True)]


def test_the_client_can_give_the_language_mid_call() -> None:
    d = Driver(detect_language=True)
    assert d.session.choose_language("ja") == [LanguageHeard("ja", "en", change=False)]
    (ask,) = of(utter(d), Transcribe)
    assert ask.hint == LanguageHint("ja", detect=False)
    assert d.session.choose_language(None) == []  # detect from here on, starting from Japanese
    d.at(0.1, TranscriptReady(ask.request, "はい。", "ja", None))
    again = of(utter(d), Transcribe)
    assert again and {a.hint for a in again} == {LanguageHint("ja", detect=True)}
