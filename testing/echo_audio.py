"""Echo scenes for tests and ``bench/echo.py``: the agent's reply leaking back into a caller's microphone.

Not a test module. A scene is built at run time (no audio files): the reply in the bundled Piper voice, played
to the caller; what the caller's microphone picks up is that reply delayed, smeared by a synthetic room
(``room_response``: a direct path and an exponentially decaying noise tail), at ``level_db`` relative to the
reply, plus a faint background, plus, if asked, the caller talking over it in another voice (espeak-ng) at a
normal level::

    scene = echo_scene(level_db=-15, delay_ms=120, talk_at_ms=2500)
    scene.near, scene.far                     # float32 at 16 kHz, in step (the same wall time, sample by sample)
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.audio.pcm import pcm16_to_float
from agent.audio.resample import resample
from agent.audio.wav import read_audio
from testing.speech import speech_pcm16

Floats = npt.NDArray[np.float32]
RATE = 16000

REPLY = (
    "Once upon a time, a small fox lived at the edge of a quiet forest. "
    "Every morning she walked to the river to watch the fish jump. "
    "One day she found a lost duckling crying under a willow tree."
)
TALK_OVER = "Wait, stop, I have a question about my order."
PEAK = 0.9


@functools.lru_cache(maxsize=16)
def espeak(text: str, voice: str = "en-us+f2", wpm: int = 170, rate: int = RATE) -> Floats:
    """``text`` said by espeak-ng (a voice unlike the agent's), float32 at ``rate``, peak at 0.9."""
    done = subprocess.run(
        ["espeak-ng", "--stdout", "-v", voice, "-s", str(wpm), text], capture_output=True, check=True, timeout=60
    )
    audio, source_rate = read_audio(done.stdout)
    audio = resample(audio, source_rate, rate) if source_rate != rate else audio
    return (audio * (PEAK / max(float(np.max(np.abs(audio))), 1e-9))).astype(np.float32)


def reply_speech(text: str = REPLY, rate: int = RATE, seed: int | None = None) -> Floats:
    """The agent's reply in the bundled Piper voice (``testing.speech``), float32 at ``rate``, peak 0.9; ``seed``
    picks another of Piper's renderings of it (None: the text's own)."""
    return pcm16_to_float(speech_pcm16(text, rate, seed))


def room_response(rt60_ms: float = 300.0, rate: int = RATE, seed: int = 7) -> Floats:
    """A speakerphone's room: the direct path, then a noise tail decaying 60 dB in ``rt60_ms`` (starting 6 dB
    down, 5 ms later); unit energy, so the echo's level is set by the gain alone."""
    rng = np.random.default_rng(seed)
    length = int(rate * rt60_ms / 1000)
    t = np.arange(length) / rate
    tail = rng.standard_normal(length) * np.exp(-6.9 * t / (rt60_ms / 1000)) * 0.5
    tail[: int(rate * 0.005)] = 0.0
    tail[0] = 1.0
    response: Floats = (tail / np.sqrt(np.sum(tail**2))).astype(np.float32)
    return response


def echo_of(far: Floats, level_db: float, delay_ms: float, rt60_ms: float = 300.0, rate: int = RATE) -> Floats:
    """What a microphone picks up of ``far`` played in the room: delayed, reverberant, ``level_db`` relative to
    ``far`` (RMS), the same length as ``far``."""
    wet = np.convolve(far, room_response(rt60_ms, rate))[: far.size]
    wet *= 10 ** (level_db / 20) * _rms(far) / max(_rms(wet), 1e-12)
    shift = int(rate * delay_ms / 1000)
    out = np.zeros_like(far)
    out[shift:] = wet[: far.size - shift]
    return out.astype(np.float32)


def background(samples: int, dbfs: float = -65.0, seed: int = 3) -> Floats:
    """White noise at ``dbfs`` RMS (a quiet room and a microphone's own noise)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(samples) * 10 ** (dbfs / 20)).astype(np.float32)


def _rms(x: Floats) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0


@dataclass(frozen=True)
class Scene:
    near: Floats  # the caller's microphone
    far: Floats  # what the caller's device played (the reference), in step with ``near``
    reply_at: int  # sample where the reply starts playing
    talk_at: int | None  # sample where the caller starts talking over it
    talk_samples: int


def echo_scene(
    level_db: float = -15.0,
    delay_ms: float = 120.0,
    *,
    rt60_ms: float = 300.0,
    talk_at_ms: float | None = None,
    talk: str = TALK_OVER,
    lead_ms: float = 500.0,
    tail_ms: float = 1500.0,
    reply: str = REPLY,
    echo: bool = True,
    seed: int | None = None,
) -> Scene:
    """The reply playing from ``lead_ms``, its echo in the microphone (``echo=False``: none, as with headphones),
    and the caller's talk-over from ``talk_at_ms`` (None: no talk-over); ``seed``: Piper's rendering of the
    reply (``reply_speech``)."""
    speech = reply_speech(reply, seed=seed)
    lead, tail = int(RATE * lead_ms / 1000), int(RATE * tail_ms / 1000)
    far = np.concatenate([np.zeros(lead, np.float32), speech, np.zeros(tail, np.float32)])
    near = background(far.size)
    if echo:
        near += echo_of(far, level_db, delay_ms, rt60_ms)
    talk_at: int | None = None
    talk_samples = 0
    if talk_at_ms is not None:
        voice = espeak(talk)
        talk_at = int(RATE * talk_at_ms / 1000)
        talk_samples = min(voice.size, near.size - talk_at)
        near[talk_at : talk_at + talk_samples] += voice[:talk_samples]
    return Scene(near.astype(np.float32), far, lead, talk_at, talk_samples)
