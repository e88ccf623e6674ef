"""The end-of-turn evaluation sets, made at run time (``bench/end_of_turn.py``): no downloads, no audio committed.

**Two sets.** ``dev`` is the set every threshold and text rule of the end of turn is chosen on (it grew out of the
87 utterances the rules were first tuned on). ``test`` is only ever scored, never tuned on: other sentences (no
sentence of one is in the other), other voices (no voice of one is in the other), other pauses and room noise.
A change that moves a threshold reports both, side by side; a gain on dev that does not show on test is a fit to
dev, not an improvement.

**Categories** (the same five on both sets; "|" in a sentence joins its parts with a pause):

- ``short``: whole turns of one to three words, or four short ones ("Hello.", "Two.", "What time is it?"), what a
  rule for fragments ("It's four.") must not keep waiting after;
- ``long``: a statement, one part;
- ``question``: a question, one part;
- ``breath``: a sentence cut mid-way at a comma, joined by a short pause (dev 175–375 ms, test 150–400 ms:
  both span the range issue 20 names, at other values): the turn must not end there;
- ``thinking``: a part that trails off (a filler "um"/"uh", a conjunction, a preposition, an article, a list
  item, half a number "four hundred | and twenty", a name being spelled "J, O, | H, N"), a long pause (dev
  550–1400 ms, test 500–1500 ms), then the rest.

**Voices.** dev: the bundled Piper voice (joe) at two speeds with no sampling noise, and espeak-ng en-us, en-gb,
en-us+m3, en-us+f2 at 140, 175 and 210 words per minute. test: the same Piper voice at three other speeds
(length_scale 0.8, 0.9, 1.3) *with* its sampling noise (Piper's defaults, noise_scale 0.667 and noise_w 0.8),
seeded per utterance so every run makes the same audio; and one espeak-ng voice for each English variant dev does
not use (en-029, en-gb-scotland, en-gb-x-gbclan, en-gb-x-gbcwmd, en-gb-x-rp, en-us-nyc; the MBROLA voices it also
lists need the mbrola program, which is not installed), each with a variant
(+m5, +f3, +croak, +m1, +f4, +klatt), its own pitch (``-p``) and rate (``-s``). These accents are harder for
Whisper tiny.en than dev's (clean, six test sentences each: 24-44 % WER; espeak-ng en-us about 10 %), so test's
transcripts are worse too, as a real caller's may be. No other text-to-speech voice is installed with the project
(``piper-tts`` ships only its phonemizer data; the Kokoro packages of ``reference/local-models.md`` are not
dependencies, and too large to add), and no package installed in the virtual environment ships recorded human
speech (no .wav/.flac/.mp3/.ogg file in it), so both sets are synthetic: neither measures real callers.

**Noise.** dev: white noise at ``noise_dbfs`` (RMS, -60 dBFS by default) over the whole utterance, so the VAD
hears a line that is never digitally silent. test: room noise at 20, 25, 30 or 35 dB below the speech (SNR over
the audible speech), pink, brown, a mains hum (50 or 60 Hz and two harmonics) or pink noise with a hum, seeded
per utterance.

**German** (``plan(split, languages=("de",))``, ids ``dde001``/``tde001``; the English plan is unchanged by default):
the sentences and espeak-ng voices of ``bench/turns/german.py`` (the same five categories and pause ranges; other
sentences and voice variants for dev and test), ``language="de"`` on the utterances; test adds the same room noise
as the English test. Recorded human speech (``source="human"``) is ``bench/turns/recorded.py``.

Each sentence is said by ``renditions`` voices of its set (3 by default), rotating through them so that every
sentence gets exactly one Piper rendition and the first utterances (``--limit``) cover every category.

Layout of an utterance (16 kHz PCM16 mono): ``LEAD_MS`` of silence, the parts with their pauses, then
``TRAIL_MS`` of silence, the noise over all of it.

**Where speech is audible** (the rule behind every time recorded here): a part is cut into 10 ms frames; a
frame is loud when its RMS is within ``AUDIBLE_DB`` (45 dB) of the part's loudest frame. Each part is trimmed
to its first..last loud frame, plus ``EDGE_MS`` of fade-in/fade-out, so a pause between parts is exactly the
silence asked for, measured from the end of the last loud frame to the start of the next. ``audible_end_ms``
is the end of the last loud frame of the final part; ``pauses`` are the audible gaps between parts. All
times are from the start of the utterance's audio, and are taken from the clean speech, before any noise.

This module changes only with how the sets are planned and assembled; their text is ``bench/turns/sentences.py``
(German: ``bench/turns/german.py``), their voices, speech engines and noise ``bench/turns/voices.py``.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.audio.pcm import float_to_pcm16
from bench.turns.german import SENTENCES_DE, VOICES_DE
from bench.turns.sentences import CATEGORIES, SENTENCES, Category, Source, Split
from bench.turns.voices import RATE, NoiseKind, Voice, coloured_noise, noise_rms, speaker

LEAD_MS = 300
TRAIL_MS = 2000
AUDIBLE_DB = 45.0
OVER_NOISE_DB = 6.0
"""Recorded speech: a loud frame is also this far above the recording's own room noise (``loud_span``)."""
EDGE_MS = 10
PEAK = 0.7
"""Peak level of the speech in an utterance (all its parts scaled together), as a fraction of full scale."""
ANALYSIS_MS = 10


PAUSES_MS: dict[Split, dict[Category, tuple[int, ...]]] = {
    "dev": {"breath": (175, 225, 300, 375), "thinking": (550, 800, 1100, 1400)},
    "test": {"breath": (150, 250, 325, 400), "thinking": (500, 750, 1000, 1250, 1500)},
}


# Ordered so that renditions ``step`` apart (see ``plan``) give every sentence one Piper rendition in three.
VOICES: dict[Split, tuple[Voice, ...]] = {
    "dev": (
        Voice("piper", "piper", "joe", 1.0),
        Voice("espeak en-us 175", "espeak", "en-us", 175),
        Voice("espeak en-gb 140", "espeak", "en-gb", 140),
        Voice("piper x0.85", "piper", "joe", 0.85),
        Voice("espeak en-us+m3 210", "espeak", "en-us+m3", 210),
        Voice("espeak en-us+f2 140", "espeak", "en-us+f2", 140),
    ),
    "test": (
        Voice("piper x1.25 noisy", "piper", "joe", 1.25, noise=True),
        Voice("piper x1.11 noisy", "piper", "joe", 1 / 0.9, noise=True),
        Voice("piper x0.77 noisy", "piper", "joe", 1 / 1.3, noise=True),
        Voice("espeak en-029+m5 160 p40", "espeak", "en-029+m5", 160, 40),
        Voice("espeak en-gb-scotland+f3 150 p65", "espeak", "en-gb-scotland+f3", 150, 65),
        Voice("espeak en-gb-x-gbclan+croak 185 p35", "espeak", "en-gb-x-gbclan+croak", 185, 35),
        Voice("espeak en-gb-x-gbcwmd+m1 170 p45", "espeak", "en-gb-x-gbcwmd+m1", 170, 45),
        Voice("espeak en-gb-x-rp+f4 200 p70", "espeak", "en-gb-x-rp+f4", 200, 70),
        Voice("espeak en-us-nyc+klatt 135 p45", "espeak", "en-us-nyc+klatt", 135, 45),
    ),
}
STEP: dict[Split, int] = {"dev": 2, "test": 3}
"""Voice-index distance between a sentence's renditions: ``len(VOICES[split]) / STEP[split]`` = 3, and the
Piper voices fill one residue class each mod ``STEP``, so every sentence gets exactly one Piper rendition."""

ROOM_NOISES: tuple[NoiseKind, ...] = ("pink", "brown", "hum", "pink+hum")
ROOM_SNRS_DB: tuple[float, ...] = (20.0, 25.0, 30.0, 35.0)


@dataclass(frozen=True, slots=True)
class RoomNoise:
    """Noise under a test utterance: ``kind`` at ``snr_db`` below the RMS of the audible speech."""

    kind: NoiseKind
    snr_db: float

    @property
    def label(self) -> str:
        return f"{self.kind} {self.snr_db:g} dB SNR"


@dataclass(frozen=True, slots=True)
class Utterance:
    """One test utterance: ``pcm`` (16 kHz PCM16 mono) and where its speech is audible, in ms from its start."""

    id: str
    split: Split
    category: Category
    text: str
    voice: str
    noise: str
    pcm: bytes
    audible_start_ms: float
    audible_end_ms: float
    pauses: tuple[tuple[float, float], ...]
    """Audible gaps between parts: (start, end) in ms."""
    source: Source = "synthetic"
    """Who said it: a speech engine (``synthetic``) or a person, recorded (``human``)."""
    language: str = "en"
    """The language it is said in (ISO 639-1)."""

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
            "set": self.split,
            "category": self.category,
            "text": self.text,
            "voice": self.voice,
            "noise": self.noise,
            "duration_ms": round(self.duration_ms),
            "audible_start_ms": round(self.audible_start_ms, 1),
            "audible_end_ms": round(self.audible_end_ms, 1),
            "pauses_ms": [[round(s, 1), round(e, 1)] for s, e in self.pauses],
            "source": self.source,
            "language": self.language,
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """An utterance to make: which sentence, said by which voice, with which pause and noise."""

    id: str
    split: Split
    category: Category
    text: str
    voice: Voice
    pause_ms: int
    noise: RoomNoise | None = None
    """Room noise (test); None: the white noise floor of ``build`` (dev)."""
    language: str = "en"
    """The language the text is in (ISO 639-1), copied into the ``Utterance``."""
    source: Source = "synthetic"
    """Copied into the ``Utterance``: ``human`` for the recordings of ``bench/turns/recorded.py``."""

    @property
    def seed(self) -> int:
        """The seed of everything random in this utterance (Piper's sampling noise, the room noise)."""
        return zlib.crc32(self.id.encode())


def plain_text(text: str) -> str:
    """A sentence as said: its parts joined, without the pause marks."""
    return " ".join(part.strip() for part in text.split("|"))


def _interleaved(
    sentences: Mapping[Category, tuple[str, ...]] | Mapping[str, tuple[str, ...]],
) -> list[tuple[Category, int, str]]:
    """Round-robin over the categories, so the sentence list interleaves them: (category, index, sentence)."""
    by_category = [list(sentences[c]) for c in CATEGORIES]
    out: list[tuple[Category, int, str]] = []
    for j in range(max(len(s) for s in by_category)):
        out += [(c, j, s[j]) for c, s in zip(CATEGORIES, by_category, strict=True) if j < len(s)]
    return out


def _room_noise(split: Split, n: int) -> RoomNoise | None:
    if split != "test":
        return None
    return RoomNoise(ROOM_NOISES[n % len(ROOM_NOISES)], ROOM_SNRS_DB[(n // 4) % len(ROOM_SNRS_DB)])


def plan_german(split: Split, renditions: int = 3) -> list[Plan]:
    """Every German sentence of ``split`` (``bench/turns/german.py``) said by ``renditions`` of its espeak-ng voices
    (1..len(VOICES_DE[split])), categories interleaved as in ``plan``; ids ``dde001``, ``tde001``..."""
    voices = tuple(Voice(label, "espeak", name, speed, pitch) for label, name, speed, pitch in VOICES_DE[split])
    if not 1 <= renditions <= len(voices):
        raise ValueError(f"renditions must be 1..{len(voices)} for German {split}, got {renditions}")
    plans: list[Plan] = []
    for k in range(renditions):
        for category, j, text in _interleaved(SENTENCES_DE[split]):
            voice = voices[(CATEGORIES.index(category) + j + k) % len(voices)]
            pauses = PAUSES_MS[split].get(category, (0,))
            pause = pauses[(j + k) % len(pauses)] if "|" in text else 0
            n = len(plans)
            item_id = f"{split[0]}de{n + 1:03d}"
            plans.append(Plan(item_id, split, category, text, voice, pause, _room_noise(split, n), language="de"))
    return plans


def plan(split: Split, renditions: int = 3, languages: Sequence[str] = ("en",)) -> list[Plan]:
    """Every sentence of ``split`` said by ``renditions`` of its voices (1..len(VOICES[split])), in an order that
    mixes categories and voices, so the first few utterances (``--limit``) already cover all five categories.
    ``languages``: "en" (the English plan, ids ``d001``...) and/or "de" (``plan_german``), in that order."""
    unknown = set(languages) - {"en", "de"}
    if unknown:
        raise ValueError(f"no synthetic sentences in {sorted(unknown)}: the languages are en and de")
    german = plan_german(split, min(renditions, len(VOICES_DE[split]))) if "de" in languages else []
    if "en" not in languages:
        return german
    voices, step = VOICES[split], STEP[split]
    if not 1 <= renditions <= len(voices):
        raise ValueError(f"renditions must be 1..{len(voices)} for {split}, got {renditions}")
    sentences = _interleaved(SENTENCES[split])
    plans: list[Plan] = []
    cycle = len(voices) // step
    for k in range(renditions):
        offset = k * step + k // cycle  # distinct offsets mod len(voices) for k < len(voices)
        for category, j, text in sentences:
            voice = voices[(CATEGORIES.index(category) + j + offset) % len(voices)]
            pauses = PAUSES_MS[split].get(category, (0,))
            pause = pauses[(j + k) % len(pauses)] if "|" in text else 0
            n = len(plans)
            plans.append(Plan(f"{split[0]}{n + 1:03d}", split, category, text, voice, pause, _room_noise(split, n)))
    return plans + german


# --- assembling utterances ------------------------------------------------------------------------------


def loud_span(audio: npt.NDArray[np.float32], over_noise_db: float = 0.0) -> tuple[int, int]:
    """Sample range [start, end) from the first to the last loud ``ANALYSIS_MS`` frame (see the module doc).
    ``over_noise_db`` (a recording with its own room noise): a loud frame is also that far above the noise, the
    level of its quietest tenth of frames; without it a recording whose noise lies within ``AUDIBLE_DB`` of its
    speech would be "audible" to its last sample."""
    hop = RATE * ANALYSIS_MS // 1000
    frames = audio[: audio.size - audio.size % hop].reshape(-1, hop).astype(np.float64)
    if frames.size == 0:
        raise ValueError("no audio")
    level = 10 * np.log10(np.mean(frames * frames, axis=1) + 1e-20)
    floor = float(np.max(level)) - AUDIBLE_DB
    loud = np.flatnonzero(level >= floor)
    if over_noise_db:
        above_noise = np.flatnonzero(level >= max(floor, float(np.percentile(level, 10)) + over_noise_db))
        loud = above_noise if above_noise.size else loud  # a steady sound has no noise below it
    return int(loud[0]) * hop, (int(loud[-1]) + 1) * hop


def _trimmed(audio: npt.NDArray[np.float32], over_noise_db: float = 0.0) -> npt.NDArray[np.float32]:
    """The loud span of ``audio`` with ``EDGE_MS`` of linear fade on each side."""
    start, end = loud_span(audio, over_noise_db)
    edge = RATE * EDGE_MS // 1000
    padded = np.concatenate([np.zeros(edge, np.float32), audio, np.zeros(edge, np.float32)])
    piece = padded[start : end + 2 * edge].copy()
    ramp = np.linspace(0.0, 1.0, edge, endpoint=False, dtype=np.float32)
    piece[:edge] *= ramp
    piece[-edge:] *= ramp[::-1]
    return piece


def build(item: Plan, noise_dbfs: float | None = -60.0) -> Utterance:
    """Say ``item``'s parts and ``assemble`` them."""
    say = speaker(item.voice, item.seed)
    return assemble(item, [say(part.strip()) for part in item.text.split("|")], noise_dbfs)


def assemble(item: Plan, said: list[npt.NDArray[np.float32]], noise_dbfs: float | None = -60.0) -> Utterance:
    """Trim each said part (16 kHz float32) to its audible span, join them with ``item``'s pause and lay them out,
    with ``item``'s noise (see the module doc). ``noise_dbfs``: the white noise floor of an utterance without room
    noise (dev); None = digital silence between the parts."""
    over_noise = OVER_NOISE_DB if item.source == "human" else 0.0
    parts = [_trimmed(audio, over_noise) for audio in said]
    edge = RATE * EDGE_MS // 1000
    gap = np.zeros(max(0, RATE * item.pause_ms // 1000 - 2 * edge), np.float32)
    pieces = [np.zeros(RATE * LEAD_MS // 1000, np.float32)]
    spans: list[tuple[int, int]] = []  # audible (start, end) of each part, in samples
    at = pieces[0].size
    for i, part in enumerate(parts):
        if i:
            pieces.append(gap)
            at += gap.size
        spans.append((at + edge, at + part.size - edge))
        pieces.append(part)
        at += part.size
    pieces.append(np.zeros(RATE * TRAIL_MS // 1000, np.float32))
    audio = np.concatenate(pieces).astype(np.float64)
    audio *= PEAK / max(float(np.max(np.abs(audio))), 1e-9)
    rng = np.random.default_rng(item.seed)
    if item.noise is not None:
        speech = np.concatenate([audio[a:b] for a, b in spans])
        level = noise_rms(float(np.sqrt(np.mean(speech * speech))), item.noise.snr_db)
        audio += level * coloured_noise(item.noise.kind, audio.size, rng)
        audio *= min(1.0, 0.95 / max(float(np.max(np.abs(audio))), 1e-9))  # never clip
        noise = item.noise.label
    elif noise_dbfs is not None:
        audio += 10 ** (noise_dbfs / 20) * rng.standard_normal(audio.size)
        noise = f"white {noise_dbfs:g} dBFS"
    else:
        noise = "none"
    ms = 1000 / RATE
    return Utterance(
        id=item.id,
        split=item.split,
        category=item.category,
        text=plain_text(item.text),
        voice=item.voice.label,
        noise=noise,
        pcm=float_to_pcm16(audio.astype(np.float32)),
        audible_start_ms=spans[0][0] * ms,
        audible_end_ms=spans[-1][1] * ms,
        pauses=tuple((a[1] * ms, b[0] * ms) for a, b in itertools.pairwise(spans)),
        source=item.source,
        language=item.language,
    )


def corpus(
    plans: list[Plan], noise_dbfs: float | None = -60.0, progress: Callable[[str], None] | None = None
) -> Iterator[Utterance]:
    """Make each planned utterance in turn; ``progress`` is told about each one."""
    for n, item in enumerate(plans, 1):
        if progress is not None:
            progress(f"corpus {item.split}: utterance {n}/{len(plans)} ({item.category}, {item.voice.label})")
        yield build(item, noise_dbfs)
