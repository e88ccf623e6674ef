"""How late transcripts and sound scores reach the end-of-turn decision: a measured distribution, saved by the
live bench (``bench/end_of_turn.py --live --save-latency FILE``) and drawn from by the offline one
(``--asr-latency FILE``).

**What is measured.** From each turn's ``turn.metrics`` (read with ``.get``: fields a server does not send are
skipped): ``spec_asr_ms`` (the speculative transcript's latency, asked for in the silence: the one the end of
turn waits for) where the server reports it; otherwise ``asr_ms`` of the turns whose final transcript was
awaited (``speculative_asr`` false: end of turn -> transcript, the latency of one transcription asked for at
that moment, queueing included). Scores: ``score_ms`` where reported; without it, a score arrives with the
transcript asked for with it (the last one drawn): the core waits for both, and the transcript is the slower.
The words' score: ``words_ms`` (from the transcript's return) where reported, else at once. Other
fields the server sends (``tail_ms``, ``endpoint_ms``) are kept in the file, not drawn from.

**Drawing.** Each utterance gets its own generator, seeded from the file's seed and the utterance's id, so a
run is reproducible, the same whatever ``--limit`` or the order, and every policy sees the same delays on the
same utterance. It changes when what is measured, or how it is drawn, changes.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

Kind = Literal["asr", "score", "words"]
VERSION = 1
KEPT = (
    "asr_ms",
    "spec_asr_ms",
    "tail_ms",
    "score_ms",
    "words_ms",
    "endpoint_ms",
    "speculative_asr",
    "voice_to_voice_ms",
    "caller_voice_to_voice_ms",
)


def _numbers(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0]


@dataclass(frozen=True, slots=True)
class Delays:
    """Samples (ms) of the transcript's and the score's latency; ``asr_from`` / ``score_from``: the field each
    came from."""

    asr_ms: tuple[float, ...]
    score_ms: tuple[float, ...] = ()
    asr_from: str = ""
    score_from: str = ""
    seed: int = 0
    turns: list[dict[str, Any]] = field(default_factory=list)
    words_ms: tuple[float, ...] = ()
    """The words' score, from the transcript's return (``words_ms``; none reported: at once)."""

    @classmethod
    def from_metrics(cls, metrics: Sequence[dict[str, Any]], seed: int = 0) -> Delays:
        """The samples in ``turn.metrics`` messages (see the module doc)."""
        spec = _numbers([m.get("spec_asr_ms") for m in metrics])
        if spec:
            asr, asr_from = spec, "spec_asr_ms"
        else:
            awaited = [m.get("asr_ms") for m in metrics if m.get("speculative_asr") is False]
            asr, asr_from = _numbers(awaited), "asr_ms (turns with speculative_asr false)"
        score = _numbers([m.get("score_ms") for m in metrics])
        turns = [{k: m[k] for k in KEPT if k in m} for m in metrics]
        words = tuple(_numbers([m.get("words_ms") for m in metrics]))
        return cls(tuple(asr), tuple(score), asr_from, "score_ms" if score else "", seed, turns, words)

    def as_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "asr_ms": list(self.asr_ms),
            "asr_from": self.asr_from,
            "score_ms": list(self.score_ms),
            "score_from": self.score_from or "not reported: a score arrives with its transcript",
            "words_ms": list(self.words_ms),
            "seed": self.seed,
            "turns": self.turns,
        }

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.as_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Delays:
        """Read a file ``save`` wrote; ``ValueError`` if it is not one or holds no transcript latency."""
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: {exc}") from exc
        if not isinstance(body, dict) or body.get("version") != VERSION:
            raise ValueError(f"{path}: not a latency file of version {VERSION}")
        asr = _numbers(body.get("asr_ms") or [])
        if not asr:
            raise ValueError(f"{path}: no transcript latency samples (asr_ms is empty)")
        score = _numbers(body.get("score_ms") or [])
        return cls(
            tuple(asr),
            tuple(score),
            str(body.get("asr_from", "")),
            str(body.get("score_from", "")),
            int(body.get("seed", 0)),
            words_ms=tuple(_numbers(body.get("words_ms") or [])),
        )

    def describe(self) -> str:
        a = np.asarray(self.asr_ms)
        text = f"ASR latency drawn from {a.size} samples (p50 {np.median(a):.0f} ms, max {a.max():.0f} ms)"
        return text + (f", scores from {len(self.score_ms)}" if self.score_ms else ", each score with its transcript")

    def for_utterance(self, utterance_id: str) -> Callable[[Kind], int]:
        """A draw of delays (ms) for one utterance: call it once per transcript (``"asr"``) or score asked for."""
        rng = np.random.default_rng([self.seed, zlib.crc32(utterance_id.encode())])
        asr, score, words = np.asarray(self.asr_ms), np.asarray(self.score_ms), np.asarray(self.words_ms)
        last = [0]

        def draw(kind: Kind) -> int:
            if kind == "score" and not score.size:
                return last[0]  # with the transcript asked for with it
            if kind == "words" and not words.size:
                return 0
            samples = {"asr": asr, "score": score, "words": words}[kind]
            value = round(float(samples[rng.integers(samples.size)]))
            if kind == "asr":
                last[0] = value
            return value

        return draw
