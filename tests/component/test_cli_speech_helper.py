"""The test speech helper's Piper rendering (the real bundled voice)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from testing.speech import SPEECH_CACHE_ENV, _render, _speech_float, speech_pcm16, text_seed


@pytest.mark.models
def test_speech_pcm16_is_piper_speech_at_the_asked_rate() -> None:
    pcm = speech_pcm16("Please cancel my order.")
    assert speech_pcm16("Please cancel my order.") is pcm  # cached
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64) / 32768
    assert 0.8 < len(samples) / 16000 < 3.0
    assert np.max(np.abs(samples)) == pytest.approx(0.9, abs=0.01)
    pcm8k = speech_pcm16("Please cancel my order.", 8000)
    assert abs(len(pcm8k) * 2 - len(pcm)) <= 8


@pytest.mark.models
def test_a_rendering_is_shared_through_the_run_folder_and_read_back_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "A sentence only this test renders."
    monkeypatch.setenv(SPEECH_CACHE_ENV, str(tmp_path))
    _speech_float.cache_clear()
    made, rate = _speech_float(text)
    assert rate == 22050
    assert len(list(tmp_path.glob("*.npy"))) == 1  # written for the other processes
    _speech_float.cache_clear()  # as another process: from the folder
    read, read_rate = _speech_float(text)
    assert read_rate == rate
    np.testing.assert_array_equal(read, made)
    fresh, _ = _render(text, text_seed(text))  # what this process would have rendered itself
    np.testing.assert_array_equal(read, fresh)
