"""The test-speech helper ``testing/speech.py``: silence, number-aware WER, and Piper speech."""

from __future__ import annotations

import pytest

from testing.speech import normalize, silence, wer


def test_silence() -> None:
    assert silence(20) == bytes(640)
    assert silence(1000, 8000) == bytes(16000)
    assert silence(10, 22050) == bytes(2 * 220)


@pytest.mark.parametrize(
    ("reference", "hypothesis"),
    [
        ("Your table for two is booked at seven thirty tonight.", "your table for 2 is booked at 7:30 tonight"),
        ("seven thirty", "7.30"),
        ("seven thirty", "730"),
        ("It costs one thousand two hundred dollars.", "It costs $1,200."),
        ("twenty-one people", "21 people"),
        ("two hundred thirty seven", "237"),
        ("I'd like two p.m.", "id like 2 PM"),
        ("Please cancel my order.", "please cancel my order"),
        ("", ""),
    ],
)
def test_wer_equal_after_normalisation(reference: str, hypothesis: str) -> None:
    assert wer(reference, hypothesis) == 0.0


def test_wer_counts_real_errors() -> None:
    assert wer("please cancel my order", "please cancel my border") == pytest.approx(0.25)
    assert wer("seven thirty", "seven forty") == pytest.approx(1.0)  # "730" vs "740": one token
    assert wer("hello", "") == 1.0
    assert wer("", "hello") == 1.0
    assert normalize("Tell me a joke, please!") == "tell me a joke please"
