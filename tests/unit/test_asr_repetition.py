"""Whisper, given a short window, sometimes starts the utterance over; the adapter cuts that off."""

from __future__ import annotations

import pytest

from agent.adapters.faster_whisper_asr import cut_repetition


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Tell me a story. Tell me a", "Tell me a story."),
        ("Yes. Yes. Yes.", "Yes."),
        ("No, thank you. No", "No, thank you."),
        ("What can you do? What", "What can you do?"),
        ("Tell me a story Tell me a", "Tell me a story"),
        (
            "Please tell me what time it is. Please tell me what time it is. Please tell",
            "Please tell me what time it is.",
        ),
        # genuine speech is left alone
        ("Please tell me what time it is.", "Please tell me what time it is."),
        ("Bye bye", "Bye bye"),
        ("I said no, no way", "I said no, no way"),
        ("Go, go", "Go, go"),
        ("", ""),
    ],
)
def test_cut_repetition(said: str, kept: str) -> None:
    assert cut_repetition(said) == kept
