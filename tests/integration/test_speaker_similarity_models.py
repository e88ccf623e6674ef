"""Speaker similarity with the real weights (resemblyzer's pretrained.pt, installed by make) on made speech: the
bundled Piper voice and espeak-ng voices, each saying two different sentences."""

from __future__ import annotations

import itertools
import subprocess

import numpy as np
import pytest

from agent.adapters.resemblyzer_similarity import VoiceEncoder, default_model_path, read_state_dict, similarity
from agent.audio.wav import read_audio
from testing.speech import speech_pcm16

pytestmark = pytest.mark.models

SENTENCES = (
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Please call me back tomorrow morning, I will be at the office.",
)


@pytest.fixture(scope="module")
def encoder() -> VoiceEncoder:
    return VoiceEncoder.load()


def espeak(text: str, voice: str) -> tuple[np.ndarray, int]:
    done = subprocess.run(["espeak-ng", "--stdout", "-v", voice, text], capture_output=True, check=True, timeout=60)
    return read_audio(done.stdout)


def test_the_installed_weights_are_the_three_layer_encoder() -> None:
    state = read_state_dict(default_model_path().read_bytes())
    assert state["lstm.weight_ih_l0"].shape == (1024, 40) and state["lstm.weight_hh_l2"].shape == (1024, 256)
    assert state["linear.weight"].shape == (256, 256) and "lstm.weight_ih_l3" not in state


def test_same_voice_scores_higher_than_other_voices(encoder: VoiceEncoder) -> None:
    embeds: dict[str, list[np.ndarray]] = {}
    embeds["piper"] = [encoder.embed(speech_pcm16(text, 22050), 22050) for text in SENTENCES]
    for voice in ("en-us", "en-us+f2"):  # a male and a female espeak-ng voice (others can be closer: bench)
        embeds[voice] = [encoder.embed(*espeak(text, voice)) for text in SENTENCES]
    for pair in embeds.values():
        assert pair[0].shape == (256,) and float(np.linalg.norm(pair[0])) == pytest.approx(1.0, abs=1e-5)
    same = {voice: similarity(first, second) for voice, (first, second) in embeds.items()}
    other = {
        (a, b): similarity(embeds[a][0], embeds[b][1]) for a, b in itertools.permutations(embeds, 2)
    }  # first sentence of one voice against the second of another: the words differ as in `same`
    assert min(same.values()) > max(other.values()), (same, other)
    assert min(same.values()) > 0.8
