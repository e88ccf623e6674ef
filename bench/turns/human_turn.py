"""One labelled human turn as a row of a set (``LabelledTurn``), and how it is cut out of its recording (pure):
changes only with what a row holds and how its audio is cut, led in, padded and levelled.

**Cut.** A row's audio is the turn's own recording from its first speech to the end of its real end silence (the
next sound: another speaker, or any detected speech), led in by up to ``LEAD_MS`` of the silence before it (never
reaching back into earlier speech). Room tone then fills what is missing: before the lead, and after the real end
silence until the ``end`` silence is ``END_MS`` long, past eot-bench's longest wait (3.5 s), so every setting of its
sweep can decide inside it. The room tone is the recording's own non-speech (``room_tone``), joined with short
crossfades; ``real_until_ms`` says where the real recording stops. An open turn (no ``end``: its next speaker
talked over it, or the excerpt ended) stops with its last speech and is not padded.

**Level.** Each row is scaled so that its speech (between its first speech and its end silence, holds left out)
has an RMS of ``LEVEL_DBFS`` (-26 dBFS, the nominal active speech level of telephony, ITU-T P.56), and its peak is
at most ``PEAK``: the recordings range from -45 dBFS (AMI's meeting mix) to -20 dBFS.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from bench.turns.human_labels import LabelledSilence, TurnSpan
from bench.turns.sentences import Split

RATE = 16000
LEAD_MS = 300.0
END_MS = 4000.0
"""An ``end`` silence is padded to this (eot-bench's longest wait is 3.5 s)."""
LEVEL_DBFS = -26.0
PEAK = 0.95
FADE_MS = 10.0
TONE_MIN_MS = 200.0
TONE_MARGIN_MS = 32.0
TONE_FRAME_MS = 20.0
TONE_SPREAD_DB = 6.0
LOUD_END = "its end silence is not quiet"
QUIET_DB = 10.0
"""A silence is quiet: its RMS at least this far below the turn's speech, or it is left unlabelled (a laugh,
applause or someone else's unannotated voice is not a pause)."""

Audio = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class LabelledTurn:
    """One row of a human set: a speaker's turn, its audio (16 kHz float32 mono), its labelled silences (ms from
    the start of ``audio``; the ``end`` one last, absent from an open turn) and its words where known."""

    id: str
    source: str
    speaker: str
    split: Split
    audio: Audio
    silences: tuple[LabelledSilence, ...]
    words: str | None
    speech_start_ms: float
    real_until_ms: float
    """The audio after this is room tone (the end silence's padding)."""
    language: str = "en"
    condition: str = "clean"
    noise: str = ""
    """The background mixed in by the condition, and at what SNR ("office-ambience 14.2 dB")."""
    overlap_ms: float = 0.0
    """How long another speaker talks inside the turn (AMI)."""
    open_because: str = ""
    spliced: bool = False
    """Its pauses were laid in by the builder (the Debian prompts joined or cut), not said as recorded."""
    unlabelled: int = 0
    """Silences of 100 ms or more left unlabelled: another speaker's segment touches them, or they are loud."""

    @property
    def ended(self) -> bool:
        return bool(self.silences) and self.silences[-1].label == "end"

    @property
    def holds(self) -> tuple[LabelledSilence, ...]:
        return tuple(s for s in self.silences if s.label == "hold")

    @property
    def derived(self) -> bool:
        return any(s.derived for s in self.silences)

    @property
    def duration_ms(self) -> float:
        return 1000.0 * self.audio.size / RATE

    @property
    def speech_end_ms(self) -> float:
        return self.silences[-1].start_ms if self.ended else self.duration_ms

    def pcm16(self) -> bytes:
        from agent.audio.pcm import float_to_pcm16

        return float_to_pcm16(self.audio)

    def speech_mask(self) -> npt.NDArray[np.bool_]:
        """True on the samples of its speech: from its first speech to its end silence, holds left out."""
        mask = np.zeros(self.audio.size, dtype=bool)
        mask[_at(self.speech_start_ms) : _at(self.speech_end_ms)] = True
        for hold in self.holds:
            mask[_at(hold.start_ms) : _at(hold.end_ms)] = False
        return mask


def _at(ms: float) -> int:
    return round(ms * RATE / 1000)


def _fade(n: int) -> Audio:
    return np.linspace(0.0, 1.0, n, endpoint=False, dtype=np.float32)


def joined(pieces: list[Audio], fade_ms: float = FADE_MS) -> Audio:
    """``pieces`` one after another, each overlapping the one before by ``fade_ms`` (a linear crossfade: no
    click), so a piece starts ``fade_ms`` before the previous one's end: the result is that much shorter per joint."""
    fade = _at(fade_ms)
    out = pieces[0].astype(np.float32)
    for piece in pieces[1:]:
        n = min(fade, out.size, piece.size)
        ramp = _fade(n)
        middle = out[out.size - n :] * (1 - ramp) + piece[:n] * ramp
        out = np.concatenate([out[: out.size - n], middle, piece[n:]]).astype(np.float32)
    return out


def room_tone(audio: Audio, speech: list[tuple[float, float]]) -> Audio:
    """The recording's quiet non-speech, joined by crossfades: its ``TONE_FRAME_MS`` frames at least
    ``TONE_MARGIN_MS`` from every ``speech`` interval (ms) and within ``TONE_SPREAD_DB`` of the quietest fifth of
    such frames (no applause, music or cough), in runs of at least ``TONE_MIN_MS``; the quietest ``TONE_MIN_MS``
    of the recording when there are none. Raises ``ValueError`` for a recording shorter than that."""
    hop = _at(TONE_FRAME_MS)
    free = np.ones(audio.size, dtype=bool)
    for start, end in speech:
        free[max(0, _at(start - TONE_MARGIN_MS)) : max(0, _at(end + TONE_MARGIN_MS))] = False
    count = audio.size // hop
    frames = audio[: count * hop].reshape(count, hop).astype(np.float64)
    level = 10 * np.log10(np.mean(frames * frames, axis=1) + 1e-20)
    usable = free[: count * hop].reshape(count, hop).all(axis=1)
    pieces: list[Audio] = []
    if usable.any():
        quiet = usable & (level <= float(np.percentile(level[usable], 20)) + TONE_SPREAD_DB)
        run = 0
        for i, q in enumerate([*quiet.tolist(), False]):
            if q:
                run += 1
                continue
            if run * TONE_FRAME_MS >= TONE_MIN_MS:
                pieces.append(audio[(i - run) * hop : i * hop])
            run = 0
    if pieces:
        return joined(pieces)
    width = _at(TONE_MIN_MS)
    if audio.size < width:
        raise ValueError(f"a recording of {audio.size} samples has no {TONE_MIN_MS:g} ms of room tone")
    energy = np.convolve(audio.astype(np.float64) ** 2, np.ones(width), mode="valid")
    at = int(np.argmin(energy))
    return audio[at : at + width].copy()


def looped(tone: Audio, samples: int, offset: int) -> Audio:
    """``samples`` of ``tone`` from ``offset``, looped with crossfades as often as needed."""
    if samples <= 0:
        return np.zeros(0, dtype=np.float32)
    first = tone[offset % tone.size :]
    pieces = [first]
    total = first.size
    fade = _at(FADE_MS)
    while total < samples + fade * len(pieces):
        pieces.append(tone)
        total += tone.size
    return joined(pieces)[:samples] if len(pieces) > 1 else first[:samples].copy()


def level(audio: Audio, mask: npt.NDArray[np.bool_]) -> Audio:
    """``audio`` scaled so the RMS under ``mask`` is ``LEVEL_DBFS``, its peak at most ``PEAK``."""
    speech = audio[mask].astype(np.float64)
    rms = float(np.sqrt(np.mean(speech * speech))) if speech.size else 0.0
    if rms <= 0:
        return audio.copy()
    gain = 10 ** (LEVEL_DBFS / 20) / rms
    gain = min(gain, PEAK / max(float(np.max(np.abs(audio))), 1e-9))
    return (audio * gain).astype(np.float32)


def cut(
    span: TurnSpan,
    audio: Audio,
    tone: Audio,
    speech: list[tuple[float, float]],
    *,
    turn_id: str,
    source: str,
    split: Split,
    words: str | None = None,
    language: str = "en",
    spliced: bool = False,
) -> LabelledTurn:
    """The row of ``span``, cut out of its recording ``audio`` (see the module doc); ``speech``: every speech
    interval detected in the recording (the lead stops at the last one before the turn), ``tone``: its room tone
    (where in it each fill starts follows from ``turn_id``, so a row is the same on every build)."""
    fade = _at(FADE_MS)
    earlier = [end for _, end in speech if end <= span.start_ms]
    lead_from = max(span.start_ms - LEAD_MS, max(earlier, default=0.0), 0.0)
    quiet = span.quiet_until_ms
    real_end = min(span.speech_end_ms if quiet is None else quiet, 1000.0 * audio.size / RATE)
    real = audio[_at(lead_from) : _at(real_end)]
    missing = _at(LEAD_MS - (span.start_ms - lead_from))
    pieces = [looped(tone, missing + fade, zlib.crc32(f"{turn_id}/lead".encode()))] if missing > 0 else []
    lead = max(missing, 0)
    shift = 1000.0 * lead / RATE - lead_from  # recording ms -> row ms
    pieces.append(real)
    real_until = 1000.0 * (lead + real.size) / RATE
    silences = [LabelledSilence(s.start_ms + shift, s.end_ms + shift, s.label, s.derived) for s in span.silences]
    if span.ended:
        end = silences[-1]
        pad = _at(end.start_ms + END_MS) - (lead + real.size)
        if pad > 0:
            pieces.append(looped(tone, pad + fade, zlib.crc32(f"{turn_id}/end".encode())))
        total = 1000.0 * (lead + real.size + max(pad, 0)) / RATE
        silences[-1] = LabelledSilence(end.start_ms, total, "end", end.derived)
    row = joined(pieces) if len(pieces) > 1 else pieces[0].copy()
    turn = LabelledTurn(
        id=turn_id,
        source=source,
        speaker=span.speaker,
        split=split,
        audio=row,
        silences=tuple(silences),
        words=words,
        speech_start_ms=span.start_ms + shift,
        real_until_ms=real_until,
        language=language,
        overlap_ms=span.overlap_ms,
        open_because=span.open_because,
        spliced=spliced,
        unlabelled=span.unlabelled,
    )
    return quiet_holds(replace(turn, audio=level(row, turn.speech_mask())))


def _power(audio: Audio) -> float:
    return float(np.mean(audio.astype(np.float64) ** 2)) if audio.size else 0.0


def quiet_holds(turn: LabelledTurn) -> LabelledTurn:
    """``turn`` without the holds whose RMS is within ``QUIET_DB`` of its speech's (counted as unlabelled), and
    open (no ``end``) when the real part of its end silence is that loud too."""
    speech = _power(turn.audio[turn.speech_mask()])
    limit = speech * 10 ** (-QUIET_DB / 10)
    loud = [h for h in turn.holds if _power(turn.audio[_at(h.start_ms) : _at(h.end_ms)]) > limit]
    kept = tuple(s for s in turn.silences if s not in loud)
    out = replace(turn, silences=kept, unlabelled=turn.unlabelled + len(loud)) if loud else turn
    if out.ended and _power(out.audio[_at(out.speech_end_ms) : _at(out.real_until_ms)]) > limit:
        end = out.silences[-1]
        audio = out.audio[: _at(end.start_ms)]
        return replace(out, audio=audio, silences=out.silences[:-1], real_until_ms=end.start_ms, open_because=LOUD_END)
    return out
