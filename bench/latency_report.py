"""The tables and JSON of bench/latency.py: changes only with what its report shows (stages, per-set voice-to-voice,
preemption counters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.stats import summarize
from clients.conversation import Conversation, TurnResult

if TYPE_CHECKING:
    pass


STAGES: tuple[tuple[str, str], ...] = (
    ("endpoint_ms", "end of speech -> end of turn"),
    ("asr_ms", "end of turn -> transcript"),
    ("llm_first_text_ms", "transcript -> first reply text"),
    ("tts_first_audio_ms", "first sentence -> first audio"),
    ("voice_to_voice_ms", "end of speech -> first audio (server)"),
    ("after_turn_end_ms", "end of turn -> first audio (instant mode: our own overhead)"),
    ("client_voice_to_voice_ms", "last speech frame sent -> first audio received"),
)
# --- running and reporting ------------------------------------------------------------------------------


@dataclass
class ModeResult:
    mode: str
    preemption: str
    expected_turns: int
    load_s: float
    elapsed_s: float
    conversation: Conversation
    values: dict[str, list[float]] = field(default_factory=dict)
    by_set: dict[str, list[float]] = field(default_factory=dict)
    """Caller voice-to-voice (ms) per utterance set (``short``, ``long``) and in ``all``."""
    preemptions: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("hit", "miss", "wasted_speech_s"), 0.0)
    )
    """The server's preemption counters after the run: hits, misses, wasted seconds of speech."""

    @property
    def turns(self) -> list[TurnResult]:
        return self.conversation.turns

    @property
    def label(self) -> str:
        return f"{self.mode}/{self.preemption}"


def stage_values(turns: Sequence[TurnResult]) -> dict[str, list[float]]:
    """Per stage, the values of the turns that had it (stages that did not happen are null and skipped)."""
    values: dict[str, list[float]] = {key: [] for key, _ in STAGES}
    for turn in turns:
        metrics = turn.metrics or {}
        v2v, endpoint = metrics.get("voice_to_voice_ms"), metrics.get("endpoint_ms")
        derived = {
            "client_voice_to_voice_ms": turn.client_voice_to_voice_ms,
            "after_turn_end_ms": None if v2v is None or endpoint is None else float(v2v) - float(endpoint),
        }
        for key, _ in STAGES:
            value = derived[key] if key in derived else metrics.get(key)
            if value is not None:
                values[key].append(float(value))
    return values


def format_table(result: ModeResult) -> str:
    turns = result.turns
    interrupted = sum(1 for t in turns if (t.metrics or {}).get("interrupted"))
    speculative = sum(1 for t in turns if (t.metrics or {}).get("speculative_asr"))
    split = max(0, len(turns) - result.expected_turns)
    rejoined = sum(1 for t in turns if t.continues is not None)
    caller = summarize(result.values["client_voice_to_voice_ms"])
    headline = (
        "caller voice-to-voice: -"
        if caller["n"] == 0
        else f"caller voice-to-voice: p50 {caller['p50']:.0f} ms   p95 {caller['p95']:.0f} ms   n {caller['n']}"
    )
    lines = [
        f"mode: {result.mode}   preemption: {result.preemption}"
        f"   turns: {len(turns)} seen / {result.expected_turns} spoken   split: {split} (rejoined: {rejoined})"
        f"   interrupted: {interrupted}   speculative ASR reused: {speculative}"
        f"   errors: {len(result.conversation.errors)}"
        f"   load: {result.load_s:.1f} s   run: {result.elapsed_s:.1f} s"
        + ("   (TIMED OUT)" if result.conversation.timed_out else ""),
        headline + "   (last audible frame sent -> first reply audio received)",
        "  by set: " + "   ".join(f"{name} {_brief(summarize(v))}" for name, v in result.by_set.items()),
        "preemptive replies: {hit:.0f} released, {miss:.0f} discarded ({wasted_speech_s:.1f} s of speech made for "
        "nothing)".format(**result.preemptions),
        f"{'stage (ms)':<26}{'n':>4}{'p50':>9}{'p95':>9}{'mean':>9}{'max':>9}   what",
    ]
    for key, what in STAGES:
        s = summarize(result.values[key])

        def cell(name: str, s: dict[str, float | int | None] = s) -> str:
            v = s[name]
            return f"{'-':>9}" if v is None else f"{v:>9.1f}"

        lines.append(f"{key:<26}{s['n']:>4}{cell('p50')}{cell('p95')}{cell('mean')}{cell('max')}   {what}")
    return "\n".join(lines)


def _brief(s: dict[str, float | int | None]) -> str:
    if not s["n"]:
        return "-"
    return f"p50 {s['p50']:.0f} / p95 {s['p95']:.0f} ms (n {s['n']})"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def result_json(result: ModeResult) -> dict[str, Any]:
    return {
        "mode": result.mode,
        "preemption": result.preemption,
        "preemptive_replies": result.preemptions,
        "expected_turns": result.expected_turns,
        "turns_seen": len(result.turns),
        "turns_rejoined": sum(1 for t in result.turns if t.continues is not None),
        "load_s": round(result.load_s, 3),
        "elapsed_s": round(result.elapsed_s, 3),
        "timed_out": result.conversation.timed_out,
        "errors": result.conversation.errors,
        "stages": {key: summarize(result.values[key]) for key, _ in STAGES},
        "caller_voice_to_voice_by_set": {name: summarize(v) for name, v in result.by_set.items()},
        "turns": [{**t.summary(), "client_voice_to_voice_ms": t.client_voice_to_voice_ms} for t in result.turns],
    }
