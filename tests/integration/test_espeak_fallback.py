"""The local voice in other languages: the bundled Piper voice (English) hands other languages to espeak-ng.

Real Piper model and the real ``espeak-ng`` program (CI and the image install it). Marked ``models``.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from agent.adapters.espeak_tts import VOICE, VOICES, EspeakTTS
from agent.adapters.local_responder_lines import LINES
from agent.adapters.piper_tts import LOCAL_VOICE, PiperTTS
from agent.audio.pcm import pcm16_to_float, rms_dbfs
from agent.config import TtsSettings
from agent.errors import ProviderError, ProviderUnavailable, UnknownVoice
from agent.languages import LANGUAGES

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="the espeak-ng program is not installed"),
]

GERMAN = "Guten Tag! Ich bin die Offline-Demo. Wie kann ich Ihnen helfen?"


WRAPPER = """#!/bin/sh
# espeak-ng as the adapter runs it, noting the voice of each run (its -v argument) first.
prev=""
for arg in "$@"; do
    if [ "$prev" = "-v" ]; then echo "$arg" >> '{log}'; fi
    prev="$arg"
done
exec '{real}' "$@"
"""


@pytest.fixture(scope="module")
def espeak_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """For the module, the ``espeak-ng`` on ``PATH`` is a wrapper of the real program that writes the voice of
    every run to this file: which languages espeak-ng spoke, seen from outside the adapter."""
    real = shutil.which("espeak-ng")
    assert real is not None
    bin_dir = tmp_path_factory.mktemp("bin")
    log = bin_dir / "runs.log"
    script = bin_dir / "espeak-ng"
    script.write_text(WRAPPER.format(log=log, real=real))
    script.chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        yield log


@pytest.fixture(scope="module")
def tts(espeak_log: Path) -> Iterator[PiperTTS]:
    engine = PiperTTS.load(TtsSettings(max_concurrency=1, cpu_threads=1))
    yield engine
    engine.close()


@pytest.fixture
def espeak_calls(espeak_log: Path) -> Callable[[], list[str]]:
    """The languages espeak-ng has been run for since the test began (it still speaks)."""
    espeak_log.write_text("")
    language = {voice: code for code, voice in VOICES.items()}

    def calls() -> list[str]:
        return [language[voice] for voice in espeak_log.read_text().split()]

    return calls


async def _say(tts: PiperTTS | EspeakTTS, text: str, language: str | None, voice: str = LOCAL_VOICE) -> bytes:
    return b"".join([chunk async for chunk in tts.synthesize(text, voice, language=language)])


def _assert_speech(pcm: bytes, rate: int, min_s: float = 0.5) -> None:
    assert len(pcm) / 2 / rate >= min_s
    assert rms_dbfs(pcm) > -35.0  # not silence
    x = pcm16_to_float(pcm)
    assert float(np.abs(x).max()) < 1.0  # not clipped to full scale
    window = rate // 50  # 20 ms windows: speech rises and falls, a tone or noise would not
    frames = x[: x.size // window * window].reshape(-1, window)
    levels = np.sqrt(np.mean(np.square(frames), axis=1))
    assert float(np.std(levels)) > 0.3 * float(np.mean(levels))


async def test_german_is_spoken_by_espeak_ng(tts: PiperTTS, espeak_calls: Callable[[], list[str]]) -> None:
    assert tts.language == "en"
    pcm = await _say(tts, GERMAN, "de")
    _assert_speech(pcm, tts.sample_rate, min_s=2.0)
    assert espeak_calls() == ["de"]


async def test_without_espeak_ng_other_languages_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """No ``espeak-ng`` on ``PATH`` (a real missing program): English is still spoken, German is refused."""
    monkeypatch.setenv("PATH", str(tmp_path))
    caplog.set_level(logging.WARNING, logger="agent.adapters.piper_tts")
    local = PiperTTS.load(TtsSettings(max_concurrency=1, cpu_threads=1))
    try:
        _assert_speech(await _say(local, "Hello, how can I help you?", "en"), local.sample_rate)
        with pytest.raises(ProviderError, match="espeak-ng is not installed"):
            await _say(local, GERMAN, "de")
    finally:
        local.close()
    assert "espeak-ng is not installed: the local voice can speak en only" in caplog.text


async def test_the_voices_own_language_stays_with_piper(tts: PiperTTS, espeak_calls: Callable[[], list[str]]) -> None:
    for language in (None, "en"):
        _assert_speech(await _say(tts, "Hello, how can I help you?", language), tts.sample_rate)
    assert espeak_calls() == []


async def test_the_fallback_is_logged_once_per_language(
    espeak_calls: Callable[[], list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent.adapters.piper_tts")
    tts = PiperTTS.load(TtsSettings(max_concurrency=1, cpu_threads=1))
    try:
        for _ in range(2):
            await _say(tts, "Привет! Который час?", "ru")
            await _say(tts, "¿Qué hora es?", "es")
    finally:
        tts.close()
    notes = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO and "espeak-ng" in r.getMessage()]
    assert notes == [
        "the local voice speaks en only: speaking ru with espeak-ng's voice",
        "the local voice speaks en only: speaking es with espeak-ng's voice",
    ]
    assert espeak_calls() == ["ru", "es", "ru", "es"]


@pytest.mark.parametrize("language", [code for code in LANGUAGES if code not in ("en", "ja")])
async def test_every_other_language_gets_audio(
    tts: PiperTTS, language: str, espeak_calls: Callable[[], list[str]]
) -> None:
    pcm = await _say(tts, LINES[language].thanks, language)
    _assert_speech(pcm, tts.sample_rate)
    assert espeak_calls() == [language]


async def test_japanese_is_read_from_kana_only(tts: PiperTTS) -> None:
    _assert_speech(await _say(tts, "どういたしまして！", "ja"), tts.sample_rate)
    with pytest.raises(ProviderError, match="kanji"):
        await _say(tts, LINES["ja"].greeting, "ja")


async def test_whitespace_is_nothing_and_a_closed_voice_refuses(espeak_calls: Callable[[], list[str]]) -> None:
    local = PiperTTS.load(TtsSettings(max_concurrency=1, cpu_threads=1))
    assert await _say(local, "  ", "de") == b""
    local.close()
    with pytest.raises(ProviderUnavailable):
        await _say(local, GERMAN, "de")
    assert espeak_calls() == []


async def test_espeak_alone_at_another_rate() -> None:
    narrow = EspeakTTS(16000, max_concurrency=1)
    wide = EspeakTTS(22050, max_concurrency=1)
    try:
        assert await narrow.resolve_voice(None) == VOICE
        with pytest.raises(UnknownVoice):
            await narrow.resolve_voice("alice")
        at16 = await _say(narrow, GERMAN, "de", VOICE)
        at22 = await _say(wide, GERMAN, "de", VOICE)
        _assert_speech(at16, 16000, min_s=2.0)
        assert abs(len(at16) / 16000 - len(at22) / 22050) < 0.01  # the same speech, resampled
        english = await _say(wide, "Hello there.", None, VOICE)  # no language: English
        _assert_speech(english, 22050)
        with pytest.raises(ProviderError, match="no voice"):
            await _say(wide, "Hallo.", "nl", VOICE)
    finally:
        narrow.close()
        wide.close()


async def test_closing_early_stops_the_process() -> None:
    espeak = EspeakTTS(22050, max_concurrency=1)
    try:
        speech = espeak.synthesize("Dies ist ein langer Satz. " * 500, VOICE, language="de")
        first = await anext(speech)
        assert first
        await speech.aclose()
        assert await _say(espeak, "Noch einmal.", "de", VOICE)  # the worker is free again
    finally:
        espeak.close()


async def test_a_missing_program_is_a_provider_error() -> None:
    espeak = EspeakTTS(22050, executable="/nonexistent/espeak-ng", max_concurrency=1)
    try:
        with pytest.raises(ProviderError, match="cannot run"):
            await _say(espeak, "Hallo.", "de", VOICE)
    finally:
        espeak.close()
