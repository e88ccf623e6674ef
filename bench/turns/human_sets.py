"""The human turn sets, built at bench time: ``human_turns(split, condition)`` for the steps that score them, and
``python -m bench.turns.human_sets`` to download, build and print the table (docs/turn-sets.md). Changes only with
how the sources are read into rows.

    python -m bench.turns.human_sets [--cache DIR] [--languages en,es,fr,it,ru] [--condition telephone+noise]

Sources (``human_sources``: the hash-locked packages; ``bench/turns/recorded.py``: the Debian recordings, when
installed): ``ami`` (meeting speech with speaker turns), ``voxconverse`` (a news report, turns derived from gaps),
``jfk`` (oratory, one turn), ``asterisk`` (read telephone prompts, five languages), ``librivox`` and
``pocketsphinx`` (read English). Labels: ``human_labels``; rows cut, led in and padded: ``human_turn``; conditions:
``human_conditions``; split and seal: ``human_split``. Speech is found once per recording by the Silero VAD
(``agent.adapters.silero_vad``, the model in the faster-whisper wheel; not the server's default webrtc VAD, so the
labels do not share its errors).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import soundfile

from agent.adapters.silero_vad import FRAME_SAMPLES, SileroModel
from agent.audio.pcm import pcm16_to_float
from agent.audio.resample import resample
from bench.turns import human_conditions, human_labels, human_table
from bench.turns.human_labels import TurnSpan, floor_turns, gap_turns, one_turn, parse_rttm, plain_name, speech_runs
from bench.turns.human_sources import CACHE, LIVEKIT, PYANNOTE, SILERO, WHISPERCPP, SourceError, fetch
from bench.turns.human_split import AMI_SPLIT, SOURCE_SPLIT, Unsealed, check_open, check_split
from bench.turns.human_turn import RATE, Audio, LabelledTurn, cut, room_tone
from bench.turns.sentences import SPLITS, Split

JFK_WORDS = (
    "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
)
TURN_GAP_MS = 1000.0
"""VoxConverse: a silence this long ends a derived turn (its gaps: median 350 ms, 8 of 50 at 1 s or more)."""

NARROW_AGREEMENT_DB = 30.0
"""The shipped 8 kHz copy of the VoxConverse file and ours (``band8k``'s first half) agree at least this well."""

Progress = Callable[[str], None]


def _quiet(_message: str) -> None:
    pass


@cache
def _vad() -> SileroModel:
    return SileroModel.load()


def speech_in(audio: Audio) -> list[tuple[float, float]]:
    """The speech of a 16 kHz recording (ms), by the Silero VAD and ``human_labels.speech_runs``."""
    detector = _vad().detector()
    frames = audio[: audio.size - audio.size % FRAME_SAMPLES].reshape(-1, FRAME_SAMPLES).astype(np.float32)
    return speech_runs([detector.probability(frame) for frame in frames])


def load(path: Path) -> Audio:
    """A recording as 16 kHz float32 mono (channels averaged)."""
    audio, rate = soundfile.read(path, dtype="float32", always_2d=True)
    mono = np.ascontiguousarray(audio.mean(axis=1), dtype=np.float32)
    return mono if rate == RATE else resample(mono, int(rate), RATE)


def _rows(
    spans: list[TurnSpan],
    audio: Audio,
    runs: list[tuple[float, float]],
    where: tuple[str, str, Split],
    *,
    busy: Sequence[tuple[float, float]] = (),
    words: str | None = None,
    language: str = "en",
    spliced: bool = False,
) -> list[LabelledTurn]:
    """The rows of ``spans`` of one recording (those left with a labelled silence: others have nothing to score);
    ``where``: its source, name and split; ``busy``: speech the VAD may have missed (kept out of the room tone)."""
    source, name, split = where
    tone = room_tone(audio, [*runs, *busy])
    rows = [
        cut(span, audio, tone, runs, turn_id=f"{source}/{name}/{span.speaker}/{n}", source=source, split=split,
            words=words, language=language, spliced=spliced)
        for n, span in enumerate(spans, 1)
    ]  # fmt: skip
    return [row for row in rows if row.silences]


def ami(folder: Path, split: Split, progress: Progress = _quiet) -> list[LabelledTurn]:
    """The AMI excerpts of ``split``: speaker turns from pyannote's RTTMs, silences from the VAD."""
    data = folder / "tests" / "data"
    segments: dict[str, list[human_labels.Segment]] = {}
    for part in ("train", "development", "test"):
        segments.update(parse_rttm((data / f"debug.{part}.rttm").read_text(encoding="utf-8")))
    check_split(segments, AMI_SPLIT)
    files = {plain_name(p.stem): p for p in data.glob("*.wav")}
    rows: list[LabelledTurn] = []
    for name in sorted(n for n in segments if AMI_SPLIT[n] == split):
        progress(f"human sets: AMI {name} ({split})")
        audio = load(files[name])
        runs = speech_in(audio)
        spans = floor_turns(segments[name], runs, 1000.0 * audio.size / RATE)
        busy = [(s.start_ms, s.end_ms) for s in segments[name]]
        rows += _rows(spans, audio, runs, ("ami", name, split), busy=busy)
    return rows


def voxconverse(folder: Path, split: Split, progress: Progress = _quiet) -> list[LabelledTurn]:
    """The VoxConverse file's turns, derived from the VAD's gaps (``TURN_GAP_MS``), when it is in ``split``."""
    if SOURCE_SPLIT["voxconverse"] != split:
        return []
    progress("human sets: VoxConverse aepyx.wav (169 s)")
    audio = load(folder / "examples" / "c++" / "aepyx.wav")
    narrow, _ = soundfile.read(folder / "examples" / "c++" / "aepyx_8k.wav", dtype="float32")
    agreement = human_conditions.agreement_db(audio, narrow)
    progress(f"human sets: our 8 kHz band of aepyx.wav matches the shipped aepyx_8k.wav to {agreement:.1f} dB SNR")
    if agreement < NARROW_AGREEMENT_DB:
        raise SourceError(f"aepyx_8k.wav is not aepyx.wav in the telephone band ({agreement:.1f} dB SNR)")
    runs = speech_in(audio)
    spans = gap_turns(runs, 1000.0 * audio.size / RATE, TURN_GAP_MS)
    return _rows(spans, audio, runs, ("voxconverse", "aepyx", split))


def jfk(folder: Path, split: Split) -> list[LabelledTurn]:
    """JFK's "ask not" as one turn, with its words, when it is in ``split``."""
    if SOURCE_SPLIT["jfk"] != split:
        return []
    audio = load(folder / "whisper.cpp" / "samples" / "jfk.wav")
    runs = speech_in(audio)
    span = one_turn(runs, 1000.0 * audio.size / RATE, "John F. Kennedy")
    return _rows([span], audio, runs, ("jfk", "jfk", split), words=JFK_WORDS)


def _debian_source(voice: str) -> str:
    return "librivox" if "LibriVox" in voice else "pocketsphinx" if "pocketsphinx" in voice else "asterisk"


def debian(split: Split, languages: Sequence[str], progress: Progress = _quiet) -> list[LabelledTurn]:
    """The Debian recordings of ``bench/turns/recorded.py`` (its split, cuts and joins), one turn each; [] when
    its packages are not installed (it says so through ``progress``)."""
    try:
        from bench.turns.recorded import recorded
    except ImportError:  # the bench is being reorganised under us: the recordings are optional
        progress("human sets: bench.turns.recorded cannot be imported; the Debian recordings are left out")
        return []
    rows: list[LabelledTurn] = []
    for u in recorded(split, progress, languages):
        audio = pcm16_to_float(u.pcm)
        runs = speech_in(audio)
        heard = [(a, b) for a, b in runs if b > u.audible_start_ms - 250 and a < u.audible_end_ms + 250]
        if not heard:
            progress(f"human sets: no speech detected in {u.id} ({u.voice}); left out")
            continue
        span = one_turn(heard, u.duration_ms, u.voice)
        source = _debian_source(u.voice)
        spliced = u.category in ("breath", "thinking")
        rows += _rows(
            [span], audio, runs, (source, u.id, split), words=u.text or None, language=u.language, spliced=spliced
        )
    return rows


def build(
    split: Split, cache_dir: Path = CACHE, languages: Sequence[str] = ("en",), progress: Progress = _quiet
) -> list[LabelledTurn]:
    """Every clean row of ``split``, from every source (downloading the packages the first time)."""
    folders = fetch(cache_dir, progress)
    rows = ami(folders[PYANNOTE.name], split, progress)
    rows += voxconverse(folders[SILERO.name], split, progress)
    rows += jfk(folders[WHISPERCPP.name], split)
    rows += debian(split, languages, progress)
    return rows


@cache
def _clean(split: Split, cache_dir: Path, languages: tuple[str, ...]) -> tuple[LabelledTurn, ...]:
    rows = build(split, cache_dir, languages)
    for row in rows:
        row.audio.flags.writeable = False  # shared by every caller of this process: read, never change
    return tuple(rows)


@cache
def noises(cache_dir: Path = CACHE) -> dict[str, Audio]:
    """The background recordings of ``human_conditions.NOISES``, 16 kHz mono."""
    folder = fetch(cache_dir)[LIVEKIT.name] / "livekit" / "agents" / "resources"
    return {name: load(folder / f"{name}.ogg") for name in human_conditions.NOISES}


def human_turns(
    split: Split,
    condition: str = "clean",
    *,
    unsealed: Unsealed | None = None,
    cache_dir: Path = CACHE,
    languages: Sequence[str] = ("en",),
) -> list[LabelledTurn]:
    """The rows of ``split`` under ``condition`` (``human_conditions.CONDITIONS``), the same on every build. Test
    needs ``unsealed`` (``human_split.unseal_test``: the seal's rule); raises ``SealedSplit`` without it,
    ``ValueError`` for an unknown condition, ``SourceError`` when a download is not the lock's."""
    check_open(split, unsealed)
    rows = _clean(split, cache_dir, tuple(languages))
    table = noises(cache_dir) if "noise" in condition else {}
    return [human_conditions.apply(condition, row, table) for row in rows]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"download and extract here (default {CACHE})")
    parser.add_argument(
        "--languages", default="en", help="the Debian prompts' languages, comma-separated (en,es,fr,it,ru)"
    )
    parser.add_argument(
        "--condition",
        default="clean",
        choices=human_conditions.CONDITIONS,
        help="apply it to every row (the table says which)",
    )
    parser.add_argument("--download-only", action="store_true", help="fetch and extract the packages, build nothing")
    args = parser.parse_args(argv)
    say: Progress = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    fetch(args.cache, say)
    if args.download_only:
        return 0
    languages = [c.strip() for c in args.languages.split(",") if c.strip()]
    sets = {split: build(split, args.cache, languages, say) for split in SPLITS}
    if args.condition != "clean":
        table = noises(args.cache)
        for split, rows in sets.items():
            say(f"human sets: {args.condition} on {len(rows)} {split} rows")
            sets[split] = [human_conditions.apply(args.condition, row, table) for row in rows]
    print(human_table.markdown(sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
