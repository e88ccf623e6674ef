"""The test speech helper's Piper rendering (the real bundled voice)."""

from __future__ import annotations

import numpy as np
import pytest

from testing.speech import speech_pcm16


@pytest.mark.models
def test_speech_pcm16_is_piper_speech_at_the_asked_rate() -> None:
    pcm = speech_pcm16("Please cancel my order.")
    assert speech_pcm16("Please cancel my order.") is pcm  # cached
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64) / 32768
    assert 0.8 < len(samples) / 16000 < 3.0
    assert np.max(np.abs(samples)) == pytest.approx(0.9, abs=0.01)
    pcm8k = speech_pcm16("Please cancel my order.", 8000)
    assert abs(len(pcm8k) * 2 - len(pcm)) <= 8
