"""One live call on a human turn (``bench/end_of_turn.py --live --human``) scored from what the caller saw, and the
figures of a set of them: the issue's live targets. Pure: no socket, no clock, no model. It changes when what a
live human call is scored on, or how its figures are reported, changes.

**A row as a call** (``as_call``): the row's whole audio from its start (its ``end`` silence's room tone too), then
silence, as ``live.call`` plays an utterance; its *audible end* is the start of its ``end`` silence. An open row
(no ``end``: another speaker took over, or the excerpt ended) ends with its last speech: its audible end is its
end, and it is never scored for latency.

**Scored** (``HumanCall``, on ``live_score.LiveOutcome``): a *cut-off* when reply audio reached the caller before
the audible end was sent (the server answered inside a pause, or into speech); *paused*: the row has a ``hold`` of
at least ``PAUSE_MS`` (the issue's rate is cut-offs among these); *latency*: last audible frame sent -> first reply
audio received, over ended rows not cut off; *answered*: the transcript of the turn whose reply came first (its
WER against the row's words, where known, fillers left out).

**Figures** (``summary``): per split and condition, turns, paused turns and their cut-offs, all cut-offs, latency
``n``/mean/p50/p95/max, ended rows with no reply, WER; ``difference``: a condition minus clean, in points of the
paused cut-off rate and ms of latency (the target: within 2 points and 50 ms).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.stats import summarize as figures
from bench.turns.corpus import Utterance
from bench.turns.human_turn import LabelledTurn
from bench.turns.live_score import CallLog, LiveOutcome
from bench.turns.report import word_errors

PAUSE_MS = 300.0
"""A row is *paused* when it has a hold at least this long (the issue's false cut-off rate is over these)."""
POINTS = 2.0
LATENCY_MS = 50.0
"""The issue's target for a telephone-band copy: within this many points and ms of the clean one."""


def as_call(turn: LabelledTurn) -> Utterance:
    """The row as ``live.call`` plays it: all its audio, its audible end where its ``end`` silence starts (an open
    row: its end), its holds the pauses (so ``where`` names the hold a reply came in)."""
    return Utterance(
        id=turn.id,
        split=turn.split,
        category="thinking" if turn.holds else "long",
        text=turn.words or "",
        voice=turn.speaker,
        noise=turn.noise or turn.condition,
        pcm=turn.pcm16(),
        audible_start_ms=turn.speech_start_ms,
        audible_end_ms=turn.speech_end_ms,
        pauses=tuple((h.start_ms, h.end_ms) for h in turn.holds),
        source="human",
        language=turn.language,
    )


@dataclass(frozen=True, slots=True)
class HumanCall:
    """One row's call, scored (see the module doc)."""

    turn: LabelledTurn
    outcome: LiveOutcome

    @classmethod
    def of(cls, turn: LabelledTurn, log: CallLog, played: Utterance | None = None) -> HumanCall:
        """``played``: the ``as_call(turn)`` the call said (made again when not given)."""
        return cls(turn, LiveOutcome(played or as_call(turn), log))

    @property
    def paused(self) -> bool:
        return any(h.duration_ms >= PAUSE_MS for h in self.turn.holds)

    @property
    def cut_off(self) -> bool:
        return self.outcome.cut_off

    @property
    def latency_ms(self) -> float | None:
        """Last audible frame sent -> first reply audio received; None when cut off, open, or no reply came."""
        return self.outcome.latency_ms if self.turn.ended else None

    @property
    def no_reply(self) -> bool:
        """An ended row with no reply after its audible end (within the call's wait)."""
        return self.turn.ended and not self.cut_off and self.outcome.latency_ms is None

    @property
    def answered(self) -> str | None:
        return self.outcome.answered

    @property
    def word_errors(self) -> tuple[int, int] | None:
        """(errors, reference words) of the answered transcript; None without words, a reply, or when cut off."""
        words, answered = self.turn.words, self.answered
        if not words or answered is None or self.cut_off:
            return None
        return word_errors(words, answered)

    def verdict(self) -> str:
        """A progress line's word for the call."""
        o = self.outcome
        if self.cut_off:
            text = f"CUT OFF ({o.where})"
        elif o.end_ms is None:
            text = "no reply"
        else:
            text = "open, replied after its end" if not self.turn.ended else f"ok {self.latency_ms} ms"
        return text + (f", error {o.log.errors[0]}" if o.log.errors else "")

    def as_json(self) -> dict[str, Any]:
        t = self.turn
        return {
            "id": t.id,
            "source": t.source,
            "speaker": t.speaker,
            "language": t.language,
            "condition": t.condition,
            "noise": t.noise,
            "ended": t.ended,
            "open_because": t.open_because,
            "holds_ms": [[round(h.start_ms, 1), round(h.end_ms, 1)] for h in t.holds],
            "paused": self.paused,
            "audible_end_ms": round(t.speech_end_ms, 1),
            "words": t.words,
            "cut_off": self.cut_off,
            "reply_ms": self.outcome.end_ms,
            "replied_in": self.outcome.where,
            "latency_ms": self.latency_ms,
            "answered": self.answered,
            "transcripts": self.outcome.transcripts,
            "turns": self.outcome.turns,
            "turn_metrics": self.outcome.log.metrics,
            "errors": self.outcome.log.errors,
            "timed_out": self.outcome.log.timed_out,
        }


def _rate(count: int, total: int) -> float | None:
    return round(count / total, 4) if total else None


def summary(calls: Sequence[HumanCall]) -> dict[str, Any]:
    """The figures of ``calls`` (see the module doc)."""
    paused = [c for c in calls if c.paused]
    paused_cut = sum(c.cut_off for c in paused)
    cut = sum(c.cut_off for c in calls)
    errors = [e for c in calls if (e := c.word_errors) is not None]
    words = sum(n for _, n in errors)
    return {
        "turns": len(calls),
        "paused": len(paused),
        "paused_cut_offs": paused_cut,
        "paused_cut_off_rate": _rate(paused_cut, len(paused)),
        "cut_offs": cut,
        "cut_off_rate": _rate(cut, len(calls)),
        "ended": sum(c.turn.ended for c in calls),
        "no_reply": sum(c.no_reply for c in calls),
        "latency_ms": figures([lat for c in calls if (lat := c.latency_ms) is not None]),
        "word_error_rate": round(sum(e for e, _ in errors) / words, 4) if words else None,
    }


def _minus(a: float | None, b: float | None, scale: float = 1.0) -> float | None:
    return None if a is None or b is None else round(scale * (a - b), 1)


def difference(other: Mapping[str, Any], clean: Mapping[str, Any]) -> dict[str, Any]:
    """``other`` minus ``clean`` (two ``summary``s of the same rows): points of the paused cut-off rate, ms of the
    latency's mean, p50 and p95; ``within``: whether all are inside the target (None: a figure is missing)."""
    lat, base = other["latency_ms"], clean["latency_ms"]
    out: dict[str, Any] = {
        "points": _minus(other["paused_cut_off_rate"], clean["paused_cut_off_rate"], 100.0),
        **{f"{k}_ms": _minus(lat[k], base[k]) for k in ("mean", "p50", "p95")},
    }
    values = list(out.values())
    out["within"] = (
        None
        if any(v is None for v in values)
        else abs(out["points"]) <= POINTS and all(abs(out[f"{k}_ms"]) <= LATENCY_MS for k in ("mean", "p50", "p95"))
    )
    return out


def _count(count: int, total: int) -> str:
    return f"{count}/{total} ({100 * count / total:.1f}%)" if total else "-"


def _ms(value: float | int | None, width: int = 6) -> str:
    return f"{'-' if value is None else f'{value:.0f}':>{width}}"


HEADER = (
    f"  {'rows':<12}{'turns':>6}  {'cut off, pause >= 300 ms':<26}{'all cut-offs':<16}{'ends':>5}{'lat n':>6}"
    f"{'mean':>6}{'p50':>6}{'p95':>6}{'max':>6}{'no reply':>9}{'WER':>7}"
)


def row_line(name: str, s: Mapping[str, Any]) -> str:
    lat = s["latency_ms"]
    wer = s["word_error_rate"]
    return (
        f"  {name:<12}{s['turns']:>6}  {_count(s['paused_cut_offs'], s['paused']):<26}"
        f"{_count(s['cut_offs'], s['turns']):<16}{s['ended']:>5}{lat['n']:>6}{_ms(lat['mean'])}{_ms(lat['p50'])}"
        f"{_ms(lat['p95'])}{_ms(lat['max'])}{s['no_reply']:>9}{'-' if wer is None else f'{100 * wer:.1f}%':>7}"
    )


def format_table(title: str, calls: Sequence[HumanCall]) -> str:
    """One split and condition: a line per source, then all."""
    sources = sorted({c.turn.source for c in calls})
    lines = [title, HEADER]
    lines += [row_line(s, summary([c for c in calls if c.turn.source == s])) for s in sources]
    lines.append(row_line("all", summary(calls)))
    return "\n".join(lines)


def _signed(value: float | None, unit: str, spec: str) -> str:
    return "-" if value is None else f"{value:+{spec}}{unit}"


def format_difference(condition: str, diff: Mapping[str, Any]) -> str:
    within = {True: "within", False: "NOT within", None: "a figure missing for"}[diff["within"]]
    cells = ", ".join(f"{k} {_signed(diff[f'{k}_ms'], ' ms', '.0f')}" for k in ("mean", "p50", "p95"))
    return (
        f"  {condition} minus clean: cut-offs (pause >= 300 ms) {_signed(diff['points'], ' points', '.1f')}, "
        f"latency {cells}: {within} the target ({POINTS:g} points, {LATENCY_MS:g} ms)"
    )


def format_cutoffs(calls: Sequence[HumanCall]) -> str:
    """The rows cut off or not answered: where the reply came, and what was heard."""
    lines = []
    for c in calls:
        if c.cut_off or c.no_reply:
            t, o = c.turn, c.outcome
            heard = " / ".join(repr(x) for x in o.transcripts) or "-"
            holds = ", ".join(f"{h.start_ms:.0f}-{h.end_ms:.0f}" for h in t.holds) or "none"
            lines.append(
                f"  {t.id} {t.condition}: {'cut off' if c.cut_off else 'no reply'}, reply at "
                f"{'-' if o.end_ms is None else f'{o.end_ms:.0f}'} ms ({o.where}; holds {holds}; audible end "
                f"{t.speech_end_ms:.0f} ms)  words {t.words!r}  heard: {heard}"
            )
    return "\n".join(lines) or "  none"


def log_row(policy: str, s: Mapping[str, Any]) -> dict[str, Any]:
    """A ``summary`` as the row ``seal.log_line`` writes (``thinking``: the paused turns)."""
    return {
        "policy": policy,
        "utterances": s["turns"],
        "cut_offs": s["cut_offs"],
        "thinking_cut_offs": s["paused_cut_offs"],
        "thinking": s["paused"],
        "latency_ms": s["latency_ms"],
        "word_error_rate": s["word_error_rate"],
    }
