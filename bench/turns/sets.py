"""Which utterances an end-of-turn run uses (the chosen sets, synthetic and recorded, made in the background, and
written out as WAV): changes only with how a run picks and makes its sets.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from bench.progress import progress
from bench.turns.corpus import Utterance, build, plan
from bench.turns.sentences import SPLITS, Split
from bench.turns.voices import RATE


def chosen_splits(value: str) -> tuple[Split, ...]:
    return SPLITS if value == "both" else tuple(s for s in SPLITS if s == value)


def make_sets(args: argparse.Namespace, pool: ThreadPoolExecutor) -> dict[Split, list[Future[Utterance]]]:
    """The chosen sets, made one utterance at a time in ``pool`` (one thread), in order, while the first policy
    is run on those already made (the speech engines and the models of the run share no state)."""
    noise = args.noise_dbfs if args.noise_dbfs < 0 else None
    languages = tuple(c.strip() for c in args.languages.split(",") if c.strip())
    sets: dict[Split, list[Future[Utterance]]] = {}
    synthetic = tuple(c for c in languages if c in ("en", "de"))  # the languages corpus has sentences in
    for split in chosen_splits(args.split):
        plans = [p for p in plan(split, args.renditions, synthetic) if args.engine in (None, p.voice.engine)]
        sets[split] = [
            pool.submit(build, item, noise)
            for language in synthetic
            for item in [p for p in plans if p.language == language][: args.limit]
        ]
        if args.engine is None:
            found = recorded_utterances(split, languages)
            sets[split] += [_done(u) for c in languages for u in [u for u in found if u.language == c][: args.limit]]
    return sets


def _done(u: Utterance) -> Future[Utterance]:
    future: Future[Utterance] = Future()
    future.set_result(u)
    return future


def recorded_utterances(split: Split, languages: tuple[str, ...]) -> list[Utterance]:
    """The recorded human utterances of ``split`` (``bench/turns/recorded.py``), none where it is missing."""
    try:
        from bench.turns.recorded import recorded  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return []
    found: list[Utterance] = recorded(split, progress=progress, languages=languages)
    return found


def save_wav(directory: Path, sets: dict[Split, list[Utterance]]) -> None:
    from agent.audio.wav import write_wav

    directory.mkdir(parents=True, exist_ok=True)
    for utterances in sets.values():
        for u in utterances:
            write_wav(directory / f"{u.id}.wav", u.pcm, RATE)
    index = json.dumps([u.describe() for us in sets.values() for u in us], indent=2)
    (directory / "index.json").write_text(index, encoding="utf-8")
    progress(f"wrote the sets to {directory}")
