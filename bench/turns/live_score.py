"""One live end-of-turn call scored from what the caller saw (``bench/end_of_turn.py --live``). Pure: no socket, no
clock, no model.

**A call's timeline** (``CallLog``): ms from when the call's first audio frame was sent: when the frame holding
the utterance's audible end went out; each ``speech.stopped`` (a turn the server made of the caller's speech);
the first reply audio frame of each of those turns; transcripts. The agent's own turns (a greeting, the idle
prompt: audio with no ``speech.stopped`` before it) are not replies and are not recorded.

**Scored** (``LiveOutcome``, the offline ``Outcome``'s numbers, at the caller): a *false cut-off* when reply audio
arrived before the audible end was sent (the agent spoke while the caller was mid-utterance); *turns*: how many
turns the server made of it (a *split*: more than one); *latency*: the first reply audio that arrived after the
audible end, less the audible end (last audible frame sent -> first reply audio received), over calls not cut
off; *answered*: the transcript of the turn whose reply audio came first (for the WER). No reply within the
wait: *no end*. It changes when what a live call is scored on changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.turns.corpus import Utterance

FRAME_MS = 20


@dataclass(slots=True)
class CallLog:
    """What the caller saw of one call, times in ms from when its first frame was sent."""

    audible_end_sent_ms: float | None = None
    """When the frame holding the audible end was sent (None: the call ended before)."""
    stopped: list[tuple[float, int]] = field(default_factory=list)
    """(received at, turn) of each ``speech.stopped``."""
    first_audio: dict[int, float] = field(default_factory=dict)
    """Turn -> when its first reply audio frame was received (turns the caller made only)."""
    transcripts: dict[int, str] = field(default_factory=dict)
    continues: dict[int, int] = field(default_factory=dict)
    """Turn -> the earlier turn whose words it goes on with (``transcript.continues``)."""
    metrics: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    timed_out: bool = False
    """No reply came within the wait after the audible end."""


def frame_of(audible_end_ms: float) -> int:
    """The index of the 20 ms frame holding the last audible sample."""
    return max(0, int((audible_end_ms - 1e-6) // FRAME_MS))


@dataclass(slots=True)
class LiveOutcome:
    """One utterance's live call, scored (see the module doc); ``end_ms`` etc. in the utterance's own audio time
    (the reply's arrival placed on the utterance's timeline), as the offline ``Outcome``."""

    utterance: Utterance
    log: CallLog

    def _on_utterance(self, at_ms: float) -> float:
        """A wall-clock time of the call as a position in the utterance's audio."""
        sent = self.log.audible_end_sent_ms
        offset = frame_of(self.utterance.audible_end_ms) * FRAME_MS if sent is None else sent
        return self.utterance.audible_end_ms + at_ms - offset

    @property
    def reply_at_ms(self) -> float | None:
        """When the first reply audio arrived (call time)."""
        return min(self.log.first_audio.values(), default=None)

    @property
    def ends(self) -> list[float]:
        """Where each turn ended (``speech.stopped`` received), on the utterance's timeline."""
        return [round(self._on_utterance(at), 1) for at, _ in self.log.stopped]

    @property
    def turns(self) -> int:
        return len({turn for _, turn in self.log.stopped})

    @property
    def end_ms(self) -> float | None:
        """Where the first reply audio arrived, on the utterance's timeline (None: no reply)."""
        at = self.reply_at_ms
        return None if at is None else round(self._on_utterance(at), 1)

    @property
    def cut_off(self) -> bool:
        at, sent = self.reply_at_ms, self.log.audible_end_sent_ms
        return at is not None and (sent is None or at < sent)

    @property
    def split(self) -> bool:
        return self.turns > 1

    @property
    def latency_ms(self) -> float | None:
        sent = self.log.audible_end_sent_ms
        if self.cut_off or sent is None:
            return None
        after = [at for at in self.log.first_audio.values() if at >= sent]
        return round(min(after) - sent, 1) if after else None

    @property
    def answered(self) -> str | None:
        if not self.log.first_audio:
            return None
        turn = min(self.log.first_audio, key=lambda t: self.log.first_audio[t])
        return self.log.transcripts.get(turn)

    @property
    def transcripts(self) -> list[str]:
        return [self.log.transcripts[t] for t in sorted(self.log.transcripts)]

    @property
    def scores(self) -> list[tuple[int, float]]:
        return []  # the server does not say

    @property
    def where(self) -> str:
        end = self.end_ms
        return "no reply" if end is None else self.utterance.where(end)

    def as_json(self) -> dict[str, Any]:
        return {
            **self.utterance.describe(),
            "reply_ms": self.end_ms,
            "turn_ends_ms": self.ends,
            "cut_off": self.cut_off,
            "turns": self.turns,
            "split": self.split,
            "ended_in": self.where,
            "latency_ms": self.latency_ms,
            "answered": self.answered,
            "transcripts": self.transcripts,
            "continues": self.log.continues,
            "turn_metrics": self.log.metrics,
            "errors": self.log.errors,
            "timed_out": self.log.timed_out,
        }


def verdict(outcome: LiveOutcome) -> str:
    """A progress line's word for one call."""
    text = "CUT OFF" if outcome.cut_off else "no reply" if outcome.end_ms is None else f"ok {outcome.latency_ms} ms"
    return (
        text
        + (f", split ({outcome.turns} turns)" if outcome.split else "")
        + (f", error {outcome.log.errors[0]}" if outcome.log.errors else "")
    )
