"""Our leak-free ``get_phonemes`` gives what piper's extension gives, and keeps no memory."""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from piper import espeakbridge
from piper.phonemize_espeak import EspeakPhonemizer

from agent.adapters import espeak_phonemes

TEXTS = [
    "Hello there.",
    "Is the museum open today? Yes, until six!",
    "First: the keys; then, the door.",
    "Numbers like 42 and 3.5 percent, dates like March 3rd",
    "Café naïve résumé — and emoji 🙂 too.",
    "",
    "   ",
    "One. Two. Three. Four. Five.",
    "Wait, what time is it now?",
]


@pytest.fixture(scope="module", autouse=True)
def espeak() -> None:
    EspeakPhonemizer()  # initializes espeak-ng (as PiperVoice does)
    espeakbridge.set_voice("en-us")


@pytest.mark.parametrize("text", TEXTS)
def test_the_same_clauses_as_the_extension(text: str) -> None:
    assert espeak_phonemes.get_phonemes(text) == espeak_phonemes.leaky(text)


def test_an_embedded_nul_is_refused_like_the_extension_does() -> None:
    with pytest.raises(ValueError):
        espeak_phonemes.leaky("a\x00b")
    with pytest.raises(ValueError):
        espeak_phonemes.get_phonemes("a\x00b")


def test_no_memory_is_kept_per_call() -> None:
    text = "Thanks for calling. I can help you with that, and it will only take a minute."
    for _ in range(50):
        espeak_phonemes.get_phonemes(text)
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(2000):
            espeak_phonemes.get_phonemes(text)
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept < 10_000  # the extension keeps about 570 bytes per call: over 1 MB here


def test_install_puts_it_where_piper_looks() -> None:
    espeak_phonemes.install()
    assert espeakbridge.get_phonemes is espeak_phonemes.get_phonemes
    phonemes = EspeakPhonemizer().phonemize("en-us", "Hello there. How are you?")
    assert len(phonemes) == 2 and phonemes[1][-1] == "?"
