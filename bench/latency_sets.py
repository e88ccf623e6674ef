"""What the caller says in bench/latency.py (its utterance sets, their speech and which turn belongs to which
utterance): changes only with the caller's side of that bench.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from bench.speech import bundled_voice

if TYPE_CHECKING:
    pass


RATE = 16000
# "|" marks a short pause inside the sentence (``--pause-ms``): a turn must not end there.
SENTENCES: tuple[str, ...] = (
    "Hi, I'd like to book a table | for two tonight.",
    "What time do you open tomorrow morning?",
    "Please cancel my order.",
    "Can you tell me the weather forecast | for the weekend?",
    "How much does the large pizza cost?",
    "I need to change my flight | to Friday afternoon.",
    "Is there a pharmacy near the train station?",
    "Could you remind me | to call my sister at seven thirty?",
    "What's the difference between the basic plan | and the premium plan?",
    "Thanks, that's all for today.",
)

SHORT_UTTERANCES: tuple[str, ...] = (
    "Hello.",
    "Hi there.",
    "Thanks!",
    "What time is it?",
    "Yes please.",
    "Hello world.",
    "Good morning.",
    "Tuesday.",
    "Sounds good.",
    "No thanks.",
)
"""Short complete utterances (issue 20's short set): nine of one to three words, and "What time is it?"."""

UTTERANCE_SETS: dict[str, tuple[str, ...]] = {"short": SHORT_UTTERANCES, "long": SENTENCES}
SET_CHOICES: dict[str, tuple[str, ...]] = {"short": ("short",), "long": ("long",), "both": ("short", "long")}
# --- caller speech ------------------------------------------------------------------------------------


def _trim(audio: np.ndarray, rate: int, floor: float = 0.01) -> np.ndarray:
    """Drop leading and trailing near-silence, so a pause between phrases is exactly what we insert."""
    loud = np.flatnonzero(np.abs(audio) > floor)
    if loud.size == 0:
        return audio
    pad = rate // 100
    return audio[max(0, int(loud[0]) - pad) : int(loud[-1]) + pad]


def caller_speech(text: str, rate: int = RATE, pause_ms: int = 250) -> bytes:
    """``text`` spoken by Piper, PCM16 mono at ``rate``, peak at 0.9 of full scale.

    Each "|" in ``text`` becomes a pause of ``pause_ms`` inside the sentence.
    """
    voice = bundled_voice()
    pieces: list[np.ndarray] = []
    for i, phrase in enumerate(p.strip() for p in text.split("|")):
        audio = np.concatenate([c.audio_float_array for c in voice.synthesize(phrase)]).astype(np.float32)
        audio = resample(audio, int(voice.config.sample_rate), rate)
        if "|" in text:
            audio = _trim(audio, rate)
            if i:
                pieces.append(np.zeros(rate * pause_ms // 1000, dtype=np.float32))
        pieces.append(audio)
    joined = np.concatenate(pieces)
    joined *= 0.9 / max(float(np.max(np.abs(joined))), 1e-9)
    return float_to_pcm16(joined)


def utterance_plan(sets: Sequence[str], turns: int) -> list[tuple[str, str]]:
    """``turns`` (set name, text) pairs: the sets take turns (short, long, short, ...), each cycling through
    its own utterances in order."""
    cycles = {name: itertools.cycle(UTTERANCE_SETS[name]) for name in sets}
    return [(sets[i % len(sets)], next(cycles[sets[i % len(sets)]])) for i in range(turns)]


def utterance_of(sent_at: float | None, segment_ends: Sequence[float]) -> int | None:
    """Which utterance held the frame sent at ``sent_at``: the first whose last frame went out at or after it
    (``segment_ends``: when each utterance's last frame was sent, in order). None if none did."""
    if sent_at is None:
        return None
    i = bisect.bisect_left(segment_ends, sent_at)
    return i if i < len(segment_ends) else None


def values_by_set(
    samples: Iterable[tuple[float | None, float | None]], segment_ends: Sequence[float], labels: Sequence[str]
) -> dict[str, list[float]]:
    """Caller voice-to-voice values per set and in ``all``, from (last speech frame sent at, value) pairs.

    ``labels[i]`` is the set of utterance ``i``. Samples without a value, or whose speech frame falls in no
    utterance, are skipped.
    """
    values: dict[str, list[float]] = {name: [] for name in dict.fromkeys(labels)}
    values["all"] = []
    for sent_at, value in samples:
        i = utterance_of(sent_at, segment_ends)
        if value is None or i is None or i >= len(labels):
            continue
        values[labels[i]].append(float(value))
        values["all"].append(float(value))
    return values
