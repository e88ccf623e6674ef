"""The espeak-ng fallback voice on the event loop: what it refuses before any work, and after it is closed."""

from __future__ import annotations

import pytest

from agent.adapters.espeak_tts import VOICE, EspeakTTS
from agent.errors import ProviderError, ProviderUnavailable


async def test_refused_before_any_work() -> None:
    espeak = EspeakTTS(22050, executable="/nonexistent/espeak-ng")
    try:
        with pytest.raises(ProviderError, match="no voice"):
            [chunk async for chunk in espeak.speak("Hallo.", "nl")]
        with pytest.raises(ProviderError, match="kanji"):
            [chunk async for chunk in espeak.speak("今は15時5分です。", "ja")]
        assert [chunk async for chunk in espeak.synthesize(" \n ", VOICE, language="de")] == []
    finally:
        espeak.close()
    with pytest.raises(ProviderUnavailable):
        [chunk async for chunk in espeak.speak("Hallo.", "de")]
