"""The caller's audio in bench/backchannels.py (each phrase said over room noise, at the path's rate) and the levels it
is made at: changes only with what the caller sounds like.
"""

from __future__ import annotations

import hashlib
import wave
from pathlib import Path

import numpy as np

from agent.audio import mulaw
from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from bench.turns.corpus import _trimmed
from bench.turns.voices import Voice, speaker

RATE = 16000
OUTPUT_RATE = 24000
LEAD_MS = 1000
TRAIL_MS = 1500
PEAK = 0.7
NOISE_DBFS = -60.0
REPLY_S = 20
INTERRUPTIONS: tuple[str, ...] = ("wait", "stop", "no, I meant", "hold on", "what about tomorrow")
# --- audio ------------------------------------------------------------------------------------------


def caller_pcm(phrase: str, voice: Voice, path: str) -> tuple[bytes, int, float]:
    """The caller's audio for ``phrase`` on ``path``: (PCM16 at the path's rate, that rate, audible ms)."""
    spoken = _trimmed(speaker(voice, 0)(phrase))
    audible_ms = spoken.size / RATE * 1000
    audio = np.concatenate(
        [np.zeros(RATE * LEAD_MS // 1000, np.float32), spoken, np.zeros(RATE * TRAIL_MS // 1000, np.float32)]
    )
    audio *= PEAK / max(float(np.max(np.abs(audio))), 1e-9)
    seed = int(hashlib.sha1(f"{phrase}|{voice.label}".encode()).hexdigest()[:8], 16)
    audio += (10 ** (NOISE_DBFS / 20) * np.random.default_rng(seed).standard_normal(audio.size)).astype(np.float32)
    if path == "twilio":
        narrow = float_to_pcm16(resample(audio, RATE, 8000))
        return mulaw.decode(mulaw.encode(narrow)), 8000, audible_ms
    return float_to_pcm16(audio), RATE, audible_ms


def write_wav(folder: Path, name: str, pcm: bytes, rate: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    safe = name.replace(" ", "_").replace(",", "").replace("+", "")
    with wave.open(str(folder / f"{safe}.wav"), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm)
