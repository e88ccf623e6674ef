"""The caller's sounds in bench/yield_latency.py (talk-over, cough, uh-huh) and its question: changes only with what
the caller says or makes over the reply.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from bench.turns.corpus import _trimmed
from bench.turns.voices import Voice, speaker
from testing.speech import cough as speech_cough

RATE = 16000
PEAK = 0.8
QUESTION = "Please tell me a long story."
TALK_OVER = "Stop. What time is it?"
PIPER = Voice("piper", "piper", "joe", 1.0)
TALK_OVER_VOICES = (PIPER, Voice("en-us+m3 175", "espeak", "en-us+m3", 175), Voice("en-gb 160", "espeak", "en-gb", 160))
UH_HUHS = (
    ("Uh-huh.", PIPER),
    ("Mm-hmm.", Voice("en-us 175", "espeak", "en-us", 175)),
    ("Yeah.", PIPER),
    ("Uh-huh.", Voice("en-us+f3 175", "espeak", "en-us+f3", 175)),
    ("Mm-hmm.", PIPER),
    ("Yeah.", Voice("en-gb 140", "espeak", "en-gb", 140)),
)
SOUNDS = ("talk-over", "cough", "uh-huh")


@dataclass(frozen=True, slots=True)
class Sound:
    kind: str
    label: str
    pcm16k: bytes  # PCM16 mono at 16 kHz

    def pcm(self, rate: int) -> bytes:
        if rate == RATE:
            return self.pcm16k
        audio = np.frombuffer(self.pcm16k, dtype=np.int16).astype(np.float32) / 32768
        return float_to_pcm16(resample(audio, RATE, rate))


def spoken(text: str, voice: Voice) -> bytes:
    """``text`` said by ``voice``, trimmed to its audible span (10 ms fades), peak ``PEAK``, 16 kHz PCM16."""
    audio = _trimmed(speaker(voice, 0)(text))
    return float_to_pcm16((audio * (PEAK / max(float(np.max(np.abs(audio))), 1e-9))).astype(np.float32))


def cough() -> bytes:
    """200 ms of voice with a quick fade in and out (``testing.speech.cough``, as in the tests)."""
    return speech_cough(RATE)


def make_sounds(kind: str, trials: int) -> list[Sound]:
    """One sound per trial, rotating through the voices and phrases of ``kind``."""
    if kind == "cough":
        return [Sound(kind, "burst 200 ms", cough())] * trials
    if kind == "talk-over":
        made = [Sound(kind, f"{TALK_OVER!r} {v.label}", spoken(TALK_OVER, v)) for v in TALK_OVER_VOICES]
    else:
        made = [Sound(kind, f"{text!r} {v.label}", spoken(text, v)) for text, v in UH_HUHS]
    return [made[i % len(made)] for i in range(trials)]


@functools.lru_cache(maxsize=4)
def speech_question(rate: int) -> bytes:
    """The caller's request for a story, at ``rate``."""
    return Sound("question", QUESTION, spoken(QUESTION, PIPER)).pcm(rate)


# --- rows ---------------------------------------------------------------------------------------------
