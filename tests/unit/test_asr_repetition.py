"""Whisper, given a short window, sometimes starts the utterance over; the adapter cuts that off. And the text
Whisper is given as said before each utterance (its prompt)."""

from __future__ import annotations

import pytest

from agent.adapters.faster_whisper_asr import FILLER_PROMPT, FILLER_PROMPTS, asr_prompt, cut_repetition
from agent.config import AsrSettings


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
        # the last sentence said over (seen in a reply's transcript: 'Because he was outstanding...' twice)
        (
            "Why did the Scarecrow win an award? Because he was outstanding in his field. Because he was "
            "outstanding in his field. Because",
            "Why did the Scarecrow win an award? Because he was outstanding in his field.",
        ),
        ("Hi there. Call me later. Call me later.", "Hi there. Call me later."),
        # stopped at the token limit in the middle of a word (seen in German and Spanish, issue 21)
        (
            "Können Sie mir sagen, wo der nächste Bahnhof ist? Können Sie mir sagen, wo der nächste Bahnhof ist? Kön",
            "Können Sie mir sagen, wo der nächste Bahnhof ist?",
        ),
        (
            "Hola, me gusta esta mesa para esta noche. Hola, me gusta esta mesa para esta no",
            "Hola, me gusta esta mesa para esta noche.",
        ),
        ("Thanks. Th", "Thanks."),
        # genuine speech is left alone
        ("I said no. No.", "I said no. No."),
        ("Sure. Go on, go on", "Sure. Go on, go on"),
        ("Wait. What? What do you mean?", "Wait. What? What do you mean?"),
        ("Please tell me what time it is.", "Please tell me what time it is."),
        ("Bye bye", "Bye bye"),
        ("I said no, no way", "I said no, no way"),
        ("Go, go", "Go, go"),
        ("Go, g", "Go, g"),  # one word and a half: not a repeat
        ("I want to go. Now.", "I want to go. Now."),
        ("", ""),
    ],
)
def test_cut_repetition(said: str, kept: str) -> None:
    assert cut_repetition(said) == kept


@pytest.mark.parametrize(
    ("prompt", "language", "given"),
    [
        (None, "en", FILLER_PROMPT),  # unset: fillers written out, in the utterance's language
        (None, "de", FILLER_PROMPTS["de"]),  # another language's fillers are other words
        (None, "xx", ""),  # a language without a prompt: none
        ("", "en", ""),  # empty: no prompt, for every language
        ("", "ja", ""),
        ("  Acme, Zyrtec, Dr. Nguyen.  ", "en", "Acme, Zyrtec, Dr. Nguyen."),  # the operator's own words
        ("  Acme, Zyrtec, Dr. Nguyen.  ", "fr", "Acme, Zyrtec, Dr. Nguyen."),  # ... for every language
    ],
)
def test_asr_prompt(prompt: str | None, language: str, given: str) -> None:
    assert asr_prompt(AsrSettings(prompt=prompt), language) == given


def test_filler_prompt_writes_fillers_out_and_ends_a_sentence() -> None:
    words = FILLER_PROMPT.lower().replace(",", " ").replace(".", " ").split()
    assert {"um", "uh", "hmm"} <= set(words)
    assert FILLER_PROMPT.endswith(".")  # a prompt that trails off makes every transcript trail off
