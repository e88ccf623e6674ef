"""The end-of-turn evaluation set, made at run time (``bench/end_of_turn.py``): no downloads, no audio committed.

Every utterance is said in parts joined by known silences, with known ground truth:

- ``complete``: a statement, one part;
- ``question``: a question, one part;
- ``internal_pause``: a sentence cut in two at a comma, joined by 150–300 ms of silence (a turn must not end
  there);
- ``thinking_pause``: a part that trails off ("um", "and", "so", "because", "like", a list item, a number, a
  preposition), 500–1000 ms of silence, then the rest of the sentence.

Voices: the bundled Piper voice (joe, at two speeds, without sampling noise, so it is the same every run) and
espeak-ng voices (en-us, en-gb, en-us+m3, en-us+f2) at 140, 175 and 210 words per minute. Each sentence is said
by ``renditions`` voices, rotating through them.

Layout of an utterance (16 kHz PCM16 mono): ``LEAD_MS`` of silence, the parts with their pauses, then
``TRAIL_MS`` of silence; optionally white noise at ``noise_dbfs`` (RMS) over all of it, so the VAD hears a
line that is never digitally silent.

**Where speech is audible** (the rule behind every time recorded here): a part is cut into 10 ms frames; a
frame is loud when its RMS is within ``AUDIBLE_DB`` (45 dB) of the part's loudest frame. Each part is trimmed
to its first..last loud frame, plus ``EDGE_MS`` of fade-in/fade-out, so a pause between parts is exactly the
silence asked for, measured from the end of the last loud frame to the start of the next. ``audible_end_ms``
is the end of the last loud frame of the final part; ``pauses`` are the audible gaps between parts. All
times are from the start of the utterance's audio.
"""

from __future__ import annotations

import functools
import itertools
import subprocess
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from agent.audio.wav import read_audio
from tests.speech import _voice as speech_voice

RATE = 16000
LEAD_MS = 300
TRAIL_MS = 2000
AUDIBLE_DB = 45.0
EDGE_MS = 10
PEAK = 0.7
"""Peak level of the speech in an utterance (all its parts scaled together), as a fraction of full scale."""
ANALYSIS_MS = 10

Category = Literal["complete", "question", "internal_pause", "thinking_pause", "short_answer"]
CATEGORIES: tuple[Category, ...] = ("complete", "question", "internal_pause", "thinking_pause", "short_answer")

INTERNAL_PAUSES_MS = (150, 200, 250, 300)
THINKING_PAUSES_MS = (500, 650, 800, 1000)

# "|" joins parts with a pause: 150–300 ms in internal_pause sentences, 500–1000 ms in thinking_pause ones.
SENTENCES: dict[Category, tuple[str, ...]] = {
    "complete": (
        "Please cancel my order.",
        "I'd like to book a table for two tonight.",
        "My name is Sarah and I live in Boston.",
        "That sounds great, thank you very much.",
        "The package arrived this morning.",
    ),
    "question": (
        "What time do you open tomorrow?",
        "Can you tell me the weather for the weekend?",
        "How much does the large pizza cost?",
        "Is there a pharmacy near the station?",
        "Could you send me the receipt by email?",
    ),
    "internal_pause": (
        "Hi, | I'd like to change my reservation.",
        "If it rains tomorrow, | we'll stay at home.",
        "Well, | I think the blue one is better.",
        "After the meeting, | please call my sister.",
        "Yes, | that works for me.",
        "Honestly, | I'm not sure about the price.",
    ),
    "thinking_pause": (
        "I was thinking um | maybe we could meet on Tuesday.",
        "I'd like the pasta and | a glass of red wine.",
        "We missed the train so | we'll be about an hour late.",
        "I can't come tomorrow because | my car is in the shop.",
        "It was like | the worst traffic I've ever seen.",
        "I need eggs, milk, | bread and some butter.",
        "It's four | hundred and twenty dollars a month.",
        "I want to book a flight to | Boston on Friday.",
    ),
    # Whole turns of one to three words: what a rule for fragments ("It's four.", "I was thinking.") must not
    # keep waiting after.
    "short_answer": (
        "Yes.",
        "No, thanks.",
        "Tuesday.",
        "Two.",
        "Sounds good.",
    ),
}


@dataclass(frozen=True, slots=True)
class Voice:
    """A way of saying text: ``engine`` piper (``speed`` = 1 / length_scale) or espeak (``speed`` = words
    per minute, ``name`` the espeak-ng voice)."""

    label: str
    engine: Literal["piper", "espeak"]
    name: str
    speed: float


# Ordered so that renditions 2k apart (see ``plan``) give every sentence one Piper rendition in three.
VOICES: tuple[Voice, ...] = (
    Voice("piper", "piper", "joe", 1.0),
    Voice("espeak en-us 175", "espeak", "en-us", 175),
    Voice("espeak en-gb 140", "espeak", "en-gb", 140),
    Voice("piper x0.85", "piper", "joe", 0.85),
    Voice("espeak en-us+m3 210", "espeak", "en-us+m3", 210),
    Voice("espeak en-us+f2 140", "espeak", "en-us+f2", 140),
)


@dataclass(frozen=True, slots=True)
class Utterance:
    """One test utterance: ``pcm`` (16 kHz PCM16 mono) and where its speech is audible, in ms from its start."""

    id: str
    category: Category
    text: str
    voice: str
    pcm: bytes
    audible_start_ms: float
    audible_end_ms: float
    pauses: tuple[tuple[float, float], ...]
    """Audible gaps between parts: (start, end) in ms."""

    @property
    def duration_ms(self) -> float:
        return len(self.pcm) / 2 / RATE * 1000

    def where(self, at_ms: float) -> str:
        """Where ``at_ms`` falls: "before speech", "pause N" (1-based), "speech after pause N", "speech" or
        "after speech"."""
        if at_ms < self.audible_start_ms:
            return "before speech"
        if at_ms >= self.audible_end_ms:
            return "after speech"
        after = 0
        for i, (start, end) in enumerate(self.pauses, 1):
            if start <= at_ms < end:
                return f"pause {i}"
            if at_ms >= end:
                after = i
        return f"speech after pause {after}" if after else "speech"

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "text": self.text,
            "voice": self.voice,
            "duration_ms": round(self.duration_ms),
            "audible_start_ms": round(self.audible_start_ms, 1),
            "audible_end_ms": round(self.audible_end_ms, 1),
            "pauses_ms": [[round(s, 1), round(e, 1)] for s, e in self.pauses],
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """An utterance to make: which sentence, said by which voice, with which pause."""

    id: str
    category: Category
    text: str
    voice: Voice
    pause_ms: int


def plan(renditions: int = 3) -> list[Plan]:
    """Every sentence said by ``renditions`` voices (1–6), in an order that mixes categories and voices, so
    the first few utterances (``--limit``) already cover all five categories."""
    if not 1 <= renditions <= len(VOICES):
        raise ValueError(f"renditions must be 1..{len(VOICES)}, got {renditions}")
    # Round-robin over the categories, so the sentence list interleaves them.
    by_category = [list(SENTENCES[c]) for c in CATEGORIES]
    sentences: list[tuple[Category, int, str]] = []
    for j in range(max(len(s) for s in by_category)):
        sentences += [(c, j, s[j]) for c, s in zip(CATEGORIES, by_category, strict=True) if j < len(s)]
    plans: list[Plan] = []
    for k in range(renditions):
        for i, (category, j, text) in enumerate(sentences):
            voice = VOICES[(i + i // 4 + 2 * k + k // 3) % len(VOICES)]
            pauses = THINKING_PAUSES_MS if category == "thinking_pause" else INTERNAL_PAUSES_MS
            pause = pauses[(j + k) % len(pauses)] if "|" in text else 0
            plans.append(Plan(f"u{len(plans) + 1:03d}", category, text, voice, pause))
    return plans


# --- speech engines -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _piper_voice() -> Any:
    """The bundled Piper voice on one ONNX thread, as the tests' speech has it (``tests.speech``); its seed does
    not matter here, the corpus draws no noise."""
    return speech_voice(0)


def _piper(text: str, speed: float) -> tuple[npt.NDArray[np.float32], int]:
    from piper.config import SynthesisConfig

    voice = _piper_voice()
    # No sampling noise: Piper then says a text the same way every run (timings and all), so runs compare.
    config = SynthesisConfig(length_scale=1.0 / speed, noise_scale=0.0, noise_w_scale=0.0)
    chunks = [c.audio_float_array for c in voice.synthesize(text, config)]
    if not chunks:
        raise ValueError(f"Piper produced no audio for {text!r}")
    return np.concatenate(chunks).astype(np.float32), int(voice.config.sample_rate)


def _espeak(text: str, voice: str, wpm: float) -> tuple[npt.NDArray[np.float32], int]:
    done = subprocess.run(
        ["espeak-ng", "--stdout", "-v", voice, "-s", str(round(wpm)), text],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return read_audio(done.stdout)


def say(text: str, voice: Voice) -> npt.NDArray[np.float32]:
    """``text`` said by ``voice``: float32 at 16 kHz, untrimmed."""
    if voice.engine == "piper":
        audio, rate = _piper(text, voice.speed)
    else:
        audio, rate = _espeak(text, voice.name, voice.speed)
    return resample(audio, rate, RATE) if rate != RATE else audio


# --- assembling utterances ------------------------------------------------------------------------------


def loud_span(audio: npt.NDArray[np.float32]) -> tuple[int, int]:
    """Sample range [start, end) from the first to the last loud ``ANALYSIS_MS`` frame (see the module doc)."""
    hop = RATE * ANALYSIS_MS // 1000
    frames = audio[: audio.size - audio.size % hop].reshape(-1, hop).astype(np.float64)
    if frames.size == 0:
        raise ValueError("no audio")
    level = 10 * np.log10(np.mean(frames * frames, axis=1) + 1e-20)
    loud = np.flatnonzero(level >= float(np.max(level)) - AUDIBLE_DB)
    return int(loud[0]) * hop, (int(loud[-1]) + 1) * hop


def _trimmed(audio: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The loud span of ``audio`` with ``EDGE_MS`` of linear fade on each side."""
    start, end = loud_span(audio)
    edge = RATE * EDGE_MS // 1000
    padded = np.concatenate([np.zeros(edge, np.float32), audio, np.zeros(edge, np.float32)])
    piece = padded[start : end + 2 * edge].copy()
    ramp = np.linspace(0.0, 1.0, edge, endpoint=False, dtype=np.float32)
    piece[:edge] *= ramp
    piece[-edge:] *= ramp[::-1]
    return piece


def build(item: Plan, noise_dbfs: float | None) -> Utterance:
    """Say ``item``'s parts, join them with its pause and lay it out (see the module doc)."""
    parts = [_trimmed(say(p.strip(), item.voice)) for p in item.text.split("|")]
    edge = RATE * EDGE_MS // 1000
    gap = np.zeros(max(0, RATE * item.pause_ms // 1000 - 2 * edge), np.float32)
    pieces = [np.zeros(RATE * LEAD_MS // 1000, np.float32)]
    spans: list[tuple[float, float]] = []  # audible (start, end) of each part, in samples
    at = pieces[0].size
    for i, part in enumerate(parts):
        if i:
            pieces.append(gap)
            at += gap.size
        spans.append((at + edge, at + part.size - edge))
        pieces.append(part)
        at += part.size
    pieces.append(np.zeros(RATE * TRAIL_MS // 1000, np.float32))
    audio = np.concatenate(pieces)
    audio *= PEAK / max(float(np.max(np.abs(audio))), 1e-9)
    if noise_dbfs is not None:
        rng = np.random.default_rng(zlib.crc32(item.id.encode()))
        audio += (10 ** (noise_dbfs / 20) * rng.standard_normal(audio.size)).astype(np.float32)
    ms = 1000 / RATE
    return Utterance(
        id=item.id,
        category=item.category,
        text=item.text.replace(" |", ""),
        voice=item.voice.label,
        pcm=float_to_pcm16(audio),
        audible_start_ms=spans[0][0] * ms,
        audible_end_ms=spans[-1][1] * ms,
        pauses=tuple((a[1] * ms, b[0] * ms) for a, b in itertools.pairwise(spans)),
    )


def corpus(
    plans: list[Plan], noise_dbfs: float | None = -60.0, progress: Callable[[str], None] | None = None
) -> Iterator[Utterance]:
    """Make each planned utterance in turn; ``progress`` is told about each one."""
    for n, item in enumerate(plans, 1):
        if progress is not None:
            progress(f"corpus: utterance {n}/{len(plans)} ({item.category}, {item.voice.label})")
        yield build(item, noise_dbfs)
