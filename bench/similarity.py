"""Voice similarity benchmark: how well the speaker-similarity score tells a voice from the others.

    python bench/similarity.py                 # every voice, 8 reply sentences each (about a minute on 2 cores)
    python bench/similarity.py --sentences 4   # a quicker look
    python bench/similarity.py --json          # machine-readable, with every score

**What is scored** is what the server's sampler (``agent.runtime.call.fidelity``) and ``python -m agent voices check``
score: a *reference* (an enrollment: two sentences with 300 ms between them, 5-7 s) against a *reply* (one other
sentence), with ``agent.adapters.resemblyzer_similarity`` (resemblyzer's voice encoder in numpy; the weights are
installed by ``make``). Every voice's reference is scored against every voice's replies: *same voice* pairs
(its own replies) and *other voice* pairs (everyone else's).

**The voices** are those of the end-of-turn sets (``bench/turns/corpus.py``), all synthetic, none a recording of a
person: the bundled Piper voice (joe), one speaker said at five speeds, with and without its sampling noise (the
reference at speed 1, noiseless; the replies rotate through the renderings, so "same voice" includes another
speed and another rendering, as a cloned voice varies), and the ten espeak-ng voices (en-us, en-gb, four
variants, six regional voices with their own pitch and rate), each its own speaker. espeak-ng's voices share one
formant synthesiser, so they sound alike to the encoder: the hardest "other voices" here. The sentences are the
end-of-turn test set's statements and questions (replies) and two dev statements (references).

**Output**: min/p5/p50/p95/max of the cosine per group, the separation (AUC: the chance that a same-voice pair
scores above an other-voice pair; EER: the error rate where false accepts equal false rejects, and its
threshold), how often a reply's nearest reference is its own voice's, then per voice its same-voice median and
its nearest other voice. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.adapters.resemblyzer_similarity import VoiceEncoder, similarity
from bench.turns.corpus import VOICES
from bench.turns.sentences import SENTENCES
from bench.turns.voices import RATE, Voice, speaker

PIPER_REFERENCE = Voice("piper", "piper", "joe", 1.0)
PIPER_RENDERINGS = tuple(v for split in ("dev", "test") for v in VOICES[split] if v.engine == "piper")
ESPEAK = tuple(v for split in ("dev", "test") for v in VOICES[split] if v.engine == "espeak")
REFERENCE_TEXTS = (SENTENCES["dev"]["long"][1], SENTENCES["dev"]["long"][2])
REPLY_TEXTS = tuple(SENTENCES["test"]["long"]) + tuple(SENTENCES["test"]["question"])


@dataclass(frozen=True, slots=True)
class Speaker:
    """One voice: its label, how its reference is said, and how each of its replies is (in turn)."""

    label: str
    engine: str
    reference: Voice
    replies: tuple[Voice, ...]


def speakers() -> list[Speaker]:
    piper = Speaker("piper joe", "piper", PIPER_REFERENCE, (PIPER_REFERENCE, *PIPER_RENDERINGS))
    return [piper, *(Speaker(v.label.removeprefix("espeak "), "espeak", v, (v,)) for v in ESPEAK)]


def say(voice: Voice, texts: tuple[str, ...], pause_ms: int = 300) -> npt.NDArray[np.float32]:
    seed = zlib.crc32(f"{voice.label}|{'|'.join(texts)}".encode())
    speak = speaker(voice, seed)
    gap = np.zeros(RATE * pause_ms // 1000, np.float32)
    parts: list[npt.NDArray[np.float32]] = []
    for text in texts:
        parts += [speak(text), gap]
    return np.concatenate(parts[:-1])


def auc(same: npt.NDArray[np.float64], other: npt.NDArray[np.float64]) -> float:
    """Mann-Whitney: P(a same-voice score > an other-voice score), ties counted half."""
    greater = (same[:, None] > other[None, :]).mean()
    ties = (same[:, None] == other[None, :]).mean()
    return float(greater + 0.5 * ties)


def eer(same: npt.NDArray[np.float64], other: npt.NDArray[np.float64]) -> tuple[float, float]:
    """(equal error rate, its threshold): accept a pair at or above the threshold."""
    best = (2.0, 0.0, 0.0)
    for threshold in np.unique(np.concatenate([same, other])):
        rejected = float((same < threshold).mean())
        accepted = float((other >= threshold).mean())
        gap = abs(rejected - accepted)
        if gap < best[0]:
            best = (gap, (rejected + accepted) / 2, float(threshold))
    return best[1], best[2]


def summary(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values)
    out: dict[str, Any] = {"n": int(arr.size)}
    for name, q in (("min", 0), ("p5", 5), ("p50", 50), ("p95", 95), ("max", 100)):
        out[name] = round(float(np.percentile(arr, q)), 3)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=8, help=f"replies per voice, 1-{len(REPLY_TEXTS)}")
    parser.add_argument("--json", action="store_true", help="print JSON with every score instead of tables")
    args = parser.parse_args(argv)
    texts = REPLY_TEXTS[: max(1, min(args.sentences, len(REPLY_TEXTS)))]

    encoder = VoiceEncoder.load()
    voices = speakers()
    references: dict[str, npt.NDArray[np.float32]] = {}
    replies: list[tuple[str, str, npt.NDArray[np.float32]]] = []  # (voice, rendering, embedding)
    seconds: list[float] = []
    spent: list[float] = []
    for n, voice in enumerate(voices, 1):
        print(f"... {n}/{len(voices)} {voice.label}", file=sys.stderr, flush=True)
        references[voice.label] = encoder.embed(say(voice.reference, REFERENCE_TEXTS), RATE)
        for i, text in enumerate(texts):
            rendering = voice.replies[i % len(voice.replies)]
            audio = say(rendering, (text,))
            started = time.perf_counter()
            replies.append((voice.label, rendering.label, encoder.embed(audio, RATE)))
            spent.append(time.perf_counter() - started)
            seconds.append(audio.size / RATE)

    engine = {v.label: v.engine for v in voices}
    groups: dict[str, list[float]] = {k: [] for k in ("same", "same piper", "same espeak")}
    groups |= {k: [] for k in ("other", "other piper/espeak", "other espeak/espeak")}
    nearest_right = 0
    per_voice: dict[str, dict[str, list[float]]] = {v.label: {} for v in voices}
    for label, _, embed in replies:
        scores = {ref: similarity(references[ref], embed) for ref in references}
        nearest_right += max(scores, key=lambda ref: scores[ref]) == label
        for ref, score in scores.items():
            per_voice[ref].setdefault(label, []).append(score)
            if ref == label:
                groups["same"].append(score)
                groups[f"same {engine[label]}"].append(score)
            else:
                groups["other"].append(score)
                kind = "espeak/espeak" if engine[ref] == engine[label] == "espeak" else "piper/espeak"
                groups[f"other {kind}"].append(score)
    same, other = np.asarray(groups["same"]), np.asarray(groups["other"])
    rate, threshold = eer(same, other)
    result: dict[str, Any] = {
        "groups": {name: summary(values) for name, values in groups.items() if values},
        "auc": round(auc(same, other), 4),
        "eer": round(rate, 4),
        "eer_threshold": round(threshold, 3),
        "nearest_reference_right": [nearest_right, len(replies)],
        "embed_ms_p50": round(1000 * float(np.percentile(spent, 50)), 1),
        "embed_ms_p95": round(1000 * float(np.percentile(spent, 95)), 1),
        "reply_s_p50": round(float(np.percentile(seconds, 50)), 2),
        "voices": {
            ref: {
                "same_p50": round(float(np.median(by[ref])), 3),
                "nearest_other": max((v for v in by if v != ref), key=lambda v: float(np.median(by[v]))),
                "nearest_other_p50": round(max(float(np.median(by[v])) for v in by if v != ref), 3),
            }
            for ref, by in per_voice.items()
        },
    }
    if args.json:
        result["scores"] = [
            {
                "reference": ref,
                "reply_voice": label,
                "rendering": rendering,
                "similarity": similarity(references[ref], e),
            }
            for label, rendering, e in replies
            for ref in references
        ]
        print(json.dumps(result, indent=2))
        return 0
    print(f"{len(voices)} voices, {len(texts)} replies each (median {result['reply_s_p50']} s), one reference each")
    print(f"{'pairs':<22} {'n':>5} {'min':>6} {'p5':>6} {'p50':>6} {'p95':>6} {'max':>6}")
    for name, s in result["groups"].items():
        cells = " ".join(f"{s[k]:>6.3f}" for k in ("min", "p5", "p50", "p95", "max"))
        print(f"{name:<22} {s['n']:>5} {cells}")
    print(
        f"AUC {result['auc']:.3f}, EER {100 * result['eer']:.1f} % at {result['eer_threshold']:.3f}; nearest reference "
        f"is the reply's own voice for {nearest_right}/{len(replies)} replies"
    )
    print(f"embedding: p50 {result['embed_ms_p50']} ms, p95 {result['embed_ms_p95']} ms per reply")
    print(f"\n{'reference voice':<32} {'same p50':>8}  nearest other voice (p50)")
    for ref, row in result["voices"].items():
        print(f"{ref:<32} {row['same_p50']:>8.3f}  {row['nearest_other']} ({row['nearest_other_p50']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
