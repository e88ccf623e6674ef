"""The side-by-side results (per server, per utterance set) and their table and ratios: changes only with what
bench/pipecat_side_by_side.py reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.latency_sets import utterance_of
from bench.stats import summarize
from clients.conversation import Conversation, TurnResult

SERVERS = ("ours", "pipecat")
TARGET_RATIO = 2.5


# --- results ------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Sample:
    """One utterance as the caller saw it."""

    label: str
    text: str
    value_ms: float | None = None
    """Last audible frame sent -> first reply audio frame received; None: no reply."""
    early: bool = False
    """A reply began before the caller had finished (left out of the percentiles)."""
    cut: bool = False
    """Pipecat: the server interrupted its own reply (an ``interruption`` frame came after the reply began)."""
    heard: str = ""


@dataclass(slots=True)
class ServerRun:
    server: str
    samples: list[Sample] = field(default_factory=list)
    load_s: float = 0.0
    elapsed_s: float = 0.0
    timed_out: bool = False

    def values(self, label: str) -> list[float]:
        return [
            s.value_ms
            for s in self.samples
            if s.value_ms is not None and not s.early and label in (s.label, "all") and s.label != "warmup"
        ]

    def stats(self, label: str) -> dict[str, Any]:
        chosen = [s for s in self.samples if s.label != "warmup" and label in (s.label, "all")]
        return summarize(self.values(label)) | {
            "utterances": len(chosen),
            "early": sum(s.early for s in chosen),
            "no_reply": sum(s.value_ms is None for s in chosen),
            "cut": sum(s.cut for s in chosen),
        }


def samples_from_conversation(conv: Conversation, plan: Sequence[tuple[str, str]]) -> list[Sample]:
    """Per utterance of ``plan``: the last turn that ended in it gives the value; more than one turn, or reply
    audio before its last audible frame, makes it ``early``."""
    samples = [Sample(label, text) for label, text in plan]
    seen: dict[int, list[TurnResult]] = {}
    for turn in conv.turns:
        i = utterance_of(turn.last_voice_sent_at, conv.segment_ends)
        if i is not None and i < len(samples):
            seen.setdefault(i, []).append(turn)
    for i, turns in seen.items():
        last = max(turns, key=lambda t: t.last_voice_sent_at or 0.0)
        value = last.client_voice_to_voice_ms
        samples[i].value_ms = value
        samples[i].early = len(turns) > 1 or (value is not None and value < 0)
        samples[i].heard = last.transcript or ""
    return samples


def ratios(runs: dict[str, ServerRun], labels: Sequence[str]) -> dict[str, float | None]:
    """Pipecat p50 / ours p50 per set (None where either is missing)."""
    out: dict[str, float | None] = {}
    for label in labels:
        ours, theirs = (summarize(runs[s].values(label))["p50"] if s in runs else None for s in SERVERS)
        out[label] = None if not ours or theirs is None else round(float(theirs) / float(ours), 2)
    return out


def format_table(runs: dict[str, ServerRun], labels: Sequence[str]) -> str:
    lines = [
        "caller voice-to-voice (last audible frame sent -> first reply audio received), ms",
        f"{'server':<9}{'set':<7}{'n':>4}{'p50':>8}{'p95':>8}{'mean':>8}{'max':>8}"
        f"{'early':>7}{'no reply':>10}{'cut':>5}",
    ]
    for name, run in runs.items():
        for label in labels:
            s = run.stats(label)
            cells = "".join(f"{'-':>8}" if s[k] is None else f"{s[k]:>8.0f}" for k in ("p50", "p95", "mean", "max"))
            lines.append(f"{name:<9}{label:<7}{s['n']:>4}{cells}{s['early']:>7}{s['no_reply']:>10}{s['cut']:>5}")
        lines.append(f"{'':<9}load {run.load_s:.1f} s, run {run.elapsed_s:.1f} s" + ("  (TIMED OUT)" * run.timed_out))
    if all(s in runs for s in SERVERS):
        cells = "   ".join(f"{k} {'-' if v is None else f'{v:.2f}x'}" for k, v in ratios(runs, labels).items())
        lines.append(f"pipecat / ours at p50: {cells}   (target >= {TARGET_RATIO}x)")
    return "\n".join(lines)
