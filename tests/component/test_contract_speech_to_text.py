"""The ``SpeechToText`` contract, run against every recogniser: faster-whisper tiny.en (bundled) and Whisper base
(installed by ``make whisper-base-model``; these cases fail, saying so, when it is missing).

What every recogniser does: it says which languages it hears, transcribes a known sentence (Piper's voice,
``testing.speech``) word for word and says in which language, answers a clip too short to hold a word with an
empty transcript without running the model, and refuses audio that is not whole PCM16 samples with
``AudioFormatError``. Where they legitimately differ, the case says so: tiny.en hears English only and answers
in English whatever language it is asked for, while base transcribes in a language it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from agent.adapters.faster_whisper_asr import FasterWhisperASR
from agent.config import AsrSettings
from agent.errors import AudioFormatError
from agent.languages import LANGUAGES
from agent.ports import LanguageHint, SpeechToText
from testing.speech import silence, speech_pcm16, wer

pytestmark = pytest.mark.models

SENTENCE = "Please cancel my order for tomorrow."


@dataclass(frozen=True, slots=True)
class AsrCase:
    """One recogniser under the contract: ``languages``, what it must say it hears; ``given_german``, the
    language it answers in when a call's language is given as German (it hears German, or it does not);
    ``detects``: whether it detects the language of speech when the language asked for is not one of the ten."""

    stt: SpeechToText
    languages: tuple[str, ...]
    given_german: str
    detects: bool


@pytest.fixture(scope="module", params=["tiny.en", "base"])
def case(request: pytest.FixtureRequest) -> Iterator[AsrCase]:
    if request.param == "tiny.en":
        engine = FasterWhisperASR.load(AsrSettings())
        expected = AsrCase(engine, ("en",), "en", detects=False)
    else:
        engine = FasterWhisperASR.load(AsrSettings(model="base"))  # ConfigError "... run make" when not installed
        expected = AsrCase(engine, LANGUAGES, "de", detects=True)
    yield expected
    engine.close()


def test_says_which_languages_it_hears(case: AsrCase) -> None:
    assert case.stt.languages == case.languages
    assert case.stt.languages[0] == "en"


async def test_transcribes_a_known_sentence(case: AsrCase) -> None:
    heard = await case.stt.transcribe(silence(300) + speech_pcm16(SENTENCE) + silence(300))
    assert wer(SENTENCE, heard.text) == 0.0, heard.text
    assert heard.language == "en"


async def test_a_given_language_is_answered_in_one_it_hears(case: AsrCase) -> None:
    heard = await case.stt.transcribe(speech_pcm16(SENTENCE), hint=LanguageHint("de", detect=False))
    assert heard.language == case.given_german
    assert heard.language in case.stt.languages
    assert heard.language_probability is None  # given, not detected


async def test_a_language_outside_the_ten_is_not_used(case: AsrCase) -> None:
    heard = await case.stt.transcribe(speech_pcm16(SENTENCE), hint=LanguageHint("nl", detect=False))
    assert heard.language == "en"  # Dutch is none of the ten: detected (base), or the one it hears (tiny.en)
    assert (heard.language_probability is not None) is case.detects


async def test_a_clip_too_short_for_a_word_is_an_empty_transcript(case: AsrCase) -> None:
    heard = await case.stt.transcribe(silence(50))
    assert heard.text == "" and heard.language in case.stt.languages


async def test_audio_that_is_not_whole_samples_is_refused(case: AsrCase) -> None:
    with pytest.raises(AudioFormatError):
        await case.stt.transcribe(speech_pcm16(SENTENCE)[:-1])
