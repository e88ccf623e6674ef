"""Labels as eot-bench defines them, on recorded human speech (pure: arrays and text in, turns out): changes only
with how a recording's turns and silences are found and labelled.

A *turn* is one speaker's stretch of talk; every silence of at least ``MIN_SILENCE_MS`` inside it is ``hold``, the
silence after its last word ``end``. Where the silences are comes from speech detection on the clean recording
(``speech_runs``: Silero's speech probability per 32 ms frame, with hysteresis); which speaker holds the floor
comes, where the source has them, from its speaker turns:

- **Speaker turns** (``floor_turns``, an RTTM: AMI meetings): one speaker's segments are one turn while nobody
  else speaks between them (their gaps become holds). The turn *ends* where another speaker starts after it:
  its ``end`` silence runs from its last speech to the next sound (the other speaker's segment, or any detected
  speech before it). A turn whose end is not known is *open*: it keeps its holds and has no ``end`` (it runs to
  the excerpt's end, nobody speaks after it, or another speaker is already talking when it ends, so there is no
  end silence: AMI's floor changes overlap more often than not). Others' speech *inside* a turn is kept and
  counted (``overlap_ms``); a silence that another speaker's segment touches is not labelled (it is not silent in
  the mix). Detected speech may run ``SLACK_MS`` past a segment's edges, never into another speaker's segment.
- **Gaps alone** (``gap_turns``: no speaker labels, VoxConverse): a silence of ``turn_gap_ms`` or more ends a
  turn, shorter ones are holds. These labels are ``derived`` (no person said where the turns are): by this
  construction every end is at least ``turn_gap_ms`` and every hold shorter, so silence alone with that wait
  makes no error on them. Report them apart.
- **One turn** (``one_turn``: a speech, a prompt, a read sentence): all of it is one speaker's turn.

Times are ms from the start of the recording.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bench.turns.field import Label

FRAME_MS = 32.0
"""Silero's frame: 512 samples at 16 kHz."""
SPEECH_ON = 0.5
"""A frame's speech probability at or above this starts speech (Silero's own default threshold)."""
SPEECH_OFF = 0.35
"""Speech goes on until a frame falls below this (Silero's ``neg_threshold``: the threshold less 0.15)."""
MIN_SILENCE_MS = 100.0
"""eot-bench labels silences of 100 ms or more; shorter gaps are part of the speech."""
MIN_SPEECH_MS = 64.0
"""Speech shorter than this between two silences (a click, a breath) is not speech: the silences join."""
EDGE_MS = 50.0
"""A turn within this of the recording's end may have been cut off by the excerpt: dropped."""
OPEN_AT_EDGE = "runs to the recording's end"
OPEN_OVERLAPPED = "another speaker is talking when it ends"
OPEN_UNANSWERED = "nobody speaks after it"
SLACK_MS = 250.0
"""Detected speech may run this far past a speaker segment's edges (the segments are hand-placed)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One speaker segment of a speaker-turn file (RTTM): who spoke, from when to when."""

    speaker: str
    start_ms: float
    end_ms: float


@dataclass(frozen=True, slots=True)
class LabelledSilence:
    """A silence of a turn: ``hold`` inside it, ``end`` after its last speech. ``derived``: the label comes from a
    rule on the audio alone (gaps), not from who spoke (speaker turns, a turn known to be one)."""

    start_ms: float
    end_ms: float
    label: Label
    derived: bool

    @property
    def duration_ms(self) -> float:
        return self.end_ms - self.start_ms


@dataclass(frozen=True, slots=True)
class TurnSpan:
    """A turn found in a recording: its speech from ``start_ms`` to ``speech_end_ms``, its holds, then (unless it
    is open) its ``end`` silence, the last of ``silences``, real up to ``quiet_until_ms``."""

    speaker: str
    start_ms: float
    speech_end_ms: float
    quiet_until_ms: float | None
    """Where the end silence stops being real (the next sound, the recording's end); None: an open turn."""
    silences: tuple[LabelledSilence, ...]
    overlap_ms: float = 0.0
    """How long other speakers talk inside the turn (the union of their segments)."""
    unlabelled: int = 0
    """Silences of 100 ms or more left unlabelled (another speaker's segment touches them)."""
    open_because: str = ""
    """Why an open turn has no ``end`` silence (``OPEN_*``); its holds are labelled all the same."""

    @property
    def ended(self) -> bool:
        return self.quiet_until_ms is not None


def plain_name(name: str) -> str:
    """A speaker or file name without accents ("MÉO069" -> "MEO069", "trñ00" -> "trn00"): pyannote's test data
    spells a few of them with accents on purpose (a Unicode test), the same people and files as without."""
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def parse_rttm(text: str) -> dict[str, list[Segment]]:
    """The ``SPEAKER`` lines of an RTTM file, by file (names made plain), in order. Raises ``ValueError`` naming
    the line for a malformed one."""
    files: dict[str, list[Segment]] = defaultdict(list)
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0] != "SPEAKER":
            continue
        try:
            start, duration = float(fields[3]), float(fields[4])
            speaker = plain_name(fields[7])
        except (IndexError, ValueError) as exc:
            raise ValueError(
                f"RTTM line {number} is not 'SPEAKER file channel start duration ... name': {line!r}"
            ) from exc
        if duration < 0 or start < 0:
            raise ValueError(f"RTTM line {number} has a negative time: {line!r}")
        files[plain_name(fields[1])].append(Segment(speaker, 1000 * start, 1000 * (start + duration)))
    return dict(files)


def speech_runs(
    probabilities: npt.ArrayLike, frame_ms: float = FRAME_MS, on: float = SPEECH_ON, off: float = SPEECH_OFF
) -> list[tuple[float, float]]:
    """Speech as (start, end) ms from per-frame speech probabilities: a run starts at a frame at or above ``on``
    and lasts while frames stay at or above ``off``; runs less than ``MIN_SILENCE_MS`` apart are joined, then
    runs shorter than ``MIN_SPEECH_MS`` dropped."""
    runs: list[tuple[float, float]] = []
    start: int | None = None
    values = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    for i, p in enumerate(values.tolist()):
        if start is None and p >= on:
            start = i
        elif start is not None and p < off:
            runs.append((start * frame_ms, i * frame_ms))
            start = None
    if start is not None:
        runs.append((start * frame_ms, values.size * frame_ms))
    joined: list[tuple[float, float]] = []
    for a, b in runs:
        if joined and a - joined[-1][1] < MIN_SILENCE_MS:
            joined[-1] = (joined[-1][0], b)
        else:
            joined.append((a, b))
    return [(a, b) for a, b in joined if b - a >= MIN_SPEECH_MS]


def _within(runs: Sequence[tuple[float, float]], start: float, end: float) -> list[tuple[float, float]]:
    return [(max(a, start), min(b, end)) for a, b in runs if b > start and a < end]


def _touches(others: Iterable[Segment], start: float, end: float) -> bool:
    return any(o.start_ms < end and o.end_ms > start for o in others)


def _overlap(others: Iterable[Segment], start: float, end: float) -> float:
    """How long at least one of ``others`` speaks between ``start`` and ``end`` (their union, clipped)."""
    total, reached = 0.0, start
    for a, b in sorted((max(o.start_ms, start), min(o.end_ms, end)) for o in others if o.end_ms > start):
        if b > max(a, reached):
            total += b - max(a, reached)
            reached = b
    return total


def _span(
    speaker: str,
    runs: Sequence[tuple[float, float]],
    quiet_until: float | None,
    *,
    derived: bool,
    others: Sequence[Segment] = (),
    open_because: str = "",
) -> TurnSpan:
    """The turn made of speech ``runs`` (in order, at least one), its end silence real up to ``quiet_until`` (None:
    an open turn, holds only)."""
    holds: list[LabelledSilence] = []
    unlabelled = 0
    for (_, gap_start), (gap_end, _) in itertools.pairwise(runs):
        if gap_end - gap_start < MIN_SILENCE_MS:
            continue
        if _touches(others, gap_start, gap_end):
            unlabelled += 1
            continue
        holds.append(LabelledSilence(gap_start, gap_end, "hold", derived))
    start, speech_end = runs[0][0], runs[-1][1]
    overlap = _overlap(others, start, speech_end)
    if quiet_until is None:
        return TurnSpan(speaker, start, speech_end, None, tuple(holds), overlap, unlabelled, open_because)
    end = LabelledSilence(speech_end, max(speech_end, quiet_until), "end", derived)
    return TurnSpan(speaker, start, speech_end, end.end_ms, (*holds, end), overlap, unlabelled)


def _chains(own: Sequence[Segment], others: Sequence[Segment]) -> list[tuple[float, float]]:
    """One speaker's segments joined while nobody else speaks in the gap between them (and where they overlap)."""
    chains: list[tuple[float, float]] = []
    for seg in sorted(own, key=lambda s: s.start_ms):
        if chains and (seg.start_ms <= chains[-1][1] or not _touches(others, chains[-1][1], seg.start_ms)):
            chains[-1] = (chains[-1][0], max(chains[-1][1], seg.end_ms))
        else:
            chains.append((seg.start_ms, seg.end_ms))
    return chains


def floor_turns(segments: Sequence[Segment], runs: Sequence[tuple[float, float]], duration_ms: float) -> list[TurnSpan]:
    """The turns of a recording with speaker ``segments`` (see the module doc), from the speech ``runs`` detected
    in it; a turn with no detected speech is left out."""
    turns: list[TurnSpan] = []
    for speaker in sorted({s.speaker for s in segments}):
        own = [s for s in segments if s.speaker == speaker]
        others = [s for s in segments if s.speaker != speaker]
        for first, last in _chains(own, others):
            before = max([o.end_ms for o in others if o.end_ms <= first], default=first - SLACK_MS)
            after = [o.start_ms for o in others if o.start_ms >= last]
            if last >= duration_ms - EDGE_MS:
                why, until = OPEN_AT_EDGE, duration_ms
            elif any(o.start_ms < last < o.end_ms for o in others):
                why, until = OPEN_OVERLAPPED, last
            elif not after:
                why, until = OPEN_UNANSWERED, min(last + SLACK_MS, duration_ms)
            else:
                why, until = "", min(last + SLACK_MS, min(after))
            heard = _within(runs, max(first - SLACK_MS, before), until)
            if not heard or heard[-1][1] <= first:
                continue
            if why:
                turns.append(_span(speaker, heard, None, derived=False, others=others, open_because=why))
                continue
            answer = min(after)
            quiet_until = min([answer, *[a for a, _ in runs if heard[-1][1] < a < answer]])
            turns.append(_span(speaker, heard, quiet_until, derived=False, others=others))
    return sorted(turns, key=lambda t: t.start_ms)


def gap_turns(
    runs: Sequence[tuple[float, float]], duration_ms: float, turn_gap_ms: float, speaker: str = "unknown"
) -> list[TurnSpan]:
    """Turns from speech ``runs`` alone: a silence of ``turn_gap_ms`` or more ends one (``derived`` labels). The
    last run's turn is dropped when it ends within ``turn_gap_ms`` of the recording's end (its end is unknown)."""
    groups: list[list[tuple[float, float]]] = []
    for run in runs:
        if groups and run[0] - groups[-1][-1][1] < turn_gap_ms:
            groups[-1].append(run)
        else:
            groups.append([run])
    turns: list[TurnSpan] = []
    for i, group in enumerate(groups):
        quiet_until = groups[i + 1][0][0] if i + 1 < len(groups) else duration_ms
        if quiet_until - group[-1][1] < turn_gap_ms:
            continue  # the recording's last words: the excerpt may have cut them
        turns.append(_span(speaker, group, quiet_until, derived=True))
    return turns


def one_turn(runs: Sequence[tuple[float, float]], duration_ms: float, speaker: str) -> TurnSpan:
    """The whole recording as one turn of ``speaker``: silences between the speech ``runs`` are holds, the one
    after the last ``end``. Raises ``ValueError`` when no speech was detected."""
    if not runs:
        raise ValueError(f"no speech detected in the recording of {speaker}")
    return _span(speaker, runs, duration_ms, derived=False)
