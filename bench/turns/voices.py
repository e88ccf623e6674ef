"""How the end-of-turn sets are said: the Voice, the speech engines (Piper, espeak-ng) at the sets' rate, and the
coloured noise under them; changes only with how an utterance is voiced.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from agent.audio.resample import resample
from agent.audio.wav import read_audio
from bench.speech import piper_voice

RATE = 16000


@dataclass(frozen=True, slots=True)
class Voice:
    """A way of saying text: ``engine`` piper (``speed`` = 1 / length_scale; ``noise``: Piper's sampling noise
    on, seeded per utterance), espeak (``name`` the espeak-ng voice, ``speed`` words per minute, ``pitch`` 0–99,
    None = the voice's own) or recorded (a person, ``name`` the speaker; nothing to say with, ``speaker`` refuses
    it: ``bench/turns/recorded.py`` hands ``assemble`` the recorded parts)."""

    label: str
    engine: Literal["piper", "espeak", "recorded"]
    name: str
    speed: float
    pitch: int | None = None
    noise: bool = False


NoiseKind = Literal["white", "pink", "brown", "hum", "pink+hum"]
# --- speech engines -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _piper_quiet() -> Any:
    """The bundled Piper voice on one ONNX thread (``bench.speech``), for renderings without sampling noise (its
    seed does not matter then)."""
    return piper_voice(0)


def _piper_voice(voice: Voice, seed: int) -> Any:
    """The Piper model for one utterance. With sampling noise: a fresh session made right after
    ``onnxruntime.set_seed(seed)`` (ONNX Runtime seeds the generator the model draws from when a session is made,
    and runs it on from call to call, ``testing.speech.piper_voice``), so an utterance is the same every run whatever
    was said before it (``--limit``, ``--engine``). Graph optimisations off: the session is made in ~0.15 s
    instead of ~0.45 s, and synthesis is no slower."""
    if not voice.noise:
        return _piper_quiet()
    return piper_voice(seed, optimise=False)


def _piper(model: Any, text: str, voice: Voice) -> tuple[npt.NDArray[np.float32], int]:
    from piper.config import SynthesisConfig

    if voice.noise:  # Piper's own defaults
        config = SynthesisConfig(length_scale=1.0 / voice.speed, noise_scale=0.667, noise_w_scale=0.8)
    else:  # no sampling noise: the same rendering every run (timings and all)
        config = SynthesisConfig(length_scale=1.0 / voice.speed, noise_scale=0.0, noise_w_scale=0.0)
    chunks = [c.audio_float_array for c in model.synthesize(text, config)]
    if not chunks:
        raise ValueError(f"Piper produced no audio for {text!r}")
    return np.concatenate(chunks).astype(np.float32), int(model.config.sample_rate)


def espeak_command(text: str, voice: Voice) -> list[str]:
    command = ["espeak-ng", "--stdout", "-v", voice.name, "-s", str(round(voice.speed))]
    if voice.pitch is not None:
        command += ["-p", str(voice.pitch)]
    return [*command, text]


def _espeak(text: str, voice: Voice) -> tuple[npt.NDArray[np.float32], int]:
    done = subprocess.run(espeak_command(text, voice), capture_output=True, check=True, timeout=60)
    return read_audio(done.stdout)


def speaker(voice: Voice, seed: int) -> Callable[[str], npt.NDArray[np.float32]]:
    """Says text with ``voice`` (float32 at 16 kHz, untrimmed); one per utterance, its parts said in order."""
    if voice.engine == "recorded":
        raise ValueError(f"{voice.label} is a recording: there is nothing to say it with")
    model = _piper_voice(voice, seed) if voice.engine == "piper" else None

    def say(text: str) -> npt.NDArray[np.float32]:
        audio, rate = _piper(model, text, voice) if model is not None else _espeak(text, voice)
        return resample(audio, rate, RATE) if rate != RATE else audio

    return say


# --- noise ----------------------------------------------------------------------------------------------


def coloured_noise(kind: NoiseKind, samples: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """Unit-RMS noise: ``white``; ``pink`` (power 1/f) and ``brown`` (1/f²), both flat below 20 Hz; ``hum`` (mains
    at 50 or 60 Hz with its 2nd and 3rd harmonics at -6 and -12 dB, a little wow); ``pink+hum`` (equal power)."""
    if kind == "pink+hum":
        mix = coloured_noise("pink", samples, rng) + coloured_noise("hum", samples, rng)
        return mix / max(float(np.sqrt(np.mean(mix * mix))), 1e-12)
    if kind == "hum":
        t = np.arange(samples) / RATE
        mains = 50.0 if rng.random() < 0.5 else 60.0
        wobble = 1 + 0.002 * np.sin(2 * np.pi * 0.3 * t + rng.uniform(0, 2 * np.pi))
        out = sum(
            level * np.sin(2 * np.pi * mains * h * t * wobble + rng.uniform(0, 2 * np.pi))
            for h, level in ((1, 1.0), (2, 0.5), (3, 0.25))
        )
        noise = np.asarray(out, dtype=np.float64)
    else:
        noise = rng.standard_normal(samples)
        if kind != "white":
            spectrum = np.fft.rfft(noise)
            freqs = np.maximum(np.fft.rfftfreq(samples, 1 / RATE), 20.0)
            spectrum *= freqs ** (-0.5 if kind == "pink" else -1.0)
            noise = np.fft.irfft(spectrum, samples)
    noise = noise - float(np.mean(noise))
    return noise / max(float(np.sqrt(np.mean(noise * noise))), 1e-12)


def noise_rms(speech_rms: float, snr_db: float) -> float:
    """The RMS of noise ``snr_db`` below speech of RMS ``speech_rms``."""
    return speech_rms / 10 ** (snr_db / 20)
