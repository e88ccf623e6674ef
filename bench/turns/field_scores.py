"""Human turns scored as the field scores them (``field``): every labelled silence of a row (``human_turn``), by
each system, causally. Changes only with how a system's evidence at a silence is made from a row.

The systems:

- ``silence``: no evidence (``field.silence_alone`` picks its wait).
- ``smart-turn``: the acoustic model alone (Smart Turn v3.2, as the server runs it), on the row's audio up to each
  moment: 0, 100, 200 ms … into the silence and at its end, as eot-bench scores an audio model (no later than
  ``field.MAX_WAITS_MS[-1]``: no setting of the sweep looks further).
- ``text``: the text model alone (SmolLM2, as the server runs it) on what the server's recogniser writes of the
  audio before the silence. eot-bench gives a text model the words that ended at least ``WORDS_DELAY_MS`` before:
  without word timings, the words of the audio up to ``WORDS_DELAY_MS`` before the silence count from its start,
  and those of all the audio before it from ``WORDS_DELAY_MS`` in. A language the model does not read: no score.
- ``current``: the server's own end of turn, as configured (VAD, recogniser, both models and the rules of the
  core), driven in audio time by ``pipeline`` (answers as soon as asked, or ``latency_ms`` later), scored as an
  endpoint event: each silence fired at the first end of turn inside it.

Scores are cached by the models' wrappers (``models``): the same audio is scored once across systems and runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.config import Settings
from agent.ports import SpeechDetector
from bench.turns.corpus import Utterance
from bench.turns.field import MAX_WAITS_MS, ScoredSilence, Silence
from bench.turns.human_labels import LabelledSilence
from bench.turns.human_turn import RATE, LabelledTurn
from bench.turns.models import Transcriber, TurnScorer
from bench.turns.pipeline import run_utterance

SYSTEMS = ("silence", "smart-turn", "text", "current")
STEP_MS = 100.0
WORDS_DELAY_MS = 500.0
HORIZON_MS = MAX_WAITS_MS[-1]


def silence_of(turn: LabelledTurn, labelled: LabelledSilence) -> Silence:
    return Silence(labelled.label, labelled.duration_ms, turn.id)


def moments(duration_ms: float) -> list[float]:
    """Where a silence of ``duration_ms`` is scored: every ``STEP_MS`` from 0 and at its end, up to ``HORIZON_MS``."""
    last = min(duration_ms, HORIZON_MS)
    times = [i * STEP_MS for i in range(int(last // STEP_MS) + 1)]
    if times[-1] < last:
        times.append(last)
    return times


def _pcm(turn: LabelledTurn, until_ms: float) -> bytes:
    samples = max(0, min(turn.audio.size, round(until_ms * RATE / 1000)))
    from agent.audio.pcm import float_to_pcm16

    return float_to_pcm16(turn.audio[:samples])


def acoustic(turn: LabelledTurn, settings: Settings, scorer: TurnScorer) -> list[ScoredSilence]:
    """``smart-turn``: the sound model's probability of "finished" at each moment of each silence."""
    scored = []
    for labelled in turn.silences:
        scores = tuple(
            (at, scorer.probability(settings, _pcm(turn, labelled.start_ms + at)))
            for at in moments(labelled.duration_ms)
        )
        scored.append(ScoredSilence(silence_of(turn, labelled), scores))
    return scored


async def textual(
    turn: LabelledTurn, settings: Settings, transcriber: Transcriber, scorer: TurnScorer
) -> list[ScoredSilence]:
    """``text``: the text model's probability on the words heard by each moment of each silence."""
    scored = []
    for labelled in turn.silences:
        scores: list[tuple[float, float]] = []
        for at, until in ((0.0, labelled.start_ms - WORDS_DELAY_MS), (WORDS_DELAY_MS, labelled.start_ms)):
            if at > labelled.duration_ms:
                break
            words = await transcriber.text(settings, _pcm(turn, until)) if until > 0 else ""
            p = scorer.words(settings, words, turn.language) if words.strip() else None
            if p is not None:
                scores.append((at, p))
        scored.append(ScoredSilence(silence_of(turn, labelled), tuple(scores)))
    return scored


def as_utterance(turn: LabelledTurn) -> Utterance:
    """The row as the offline pipeline takes it: its speech from its first word to its end silence, its holds the
    pauses."""
    return Utterance(
        id=turn.id,
        split=turn.split,
        category="thinking" if turn.holds else "long",  # the synthetic sets' nearest: pauses inside, or none
        text=turn.words or "",
        voice=turn.speaker,
        noise=turn.noise or turn.condition,
        pcm=turn.pcm16(),
        audible_start_ms=turn.speech_start_ms,
        audible_end_ms=turn.duration_ms,  # run to the row's end: every silence, the end one too, gets its chance
        pauses=tuple((h.start_ms, h.end_ms) for h in turn.holds),
        source="human",
        language=turn.language,
    )


def fired(turn: LabelledTurn, ends_ms: Sequence[float]) -> list[ScoredSilence]:
    """Each silence of ``turn`` scored as an endpoint event at the first of ``ends_ms`` (ms of the row's audio
    pushed) inside it."""
    scored = []
    for labelled in turn.silences:
        inside = [at - labelled.start_ms for at in ends_ms if labelled.start_ms <= at < labelled.end_ms]
        scored.append(ScoredSilence.fired_at(silence_of(turn, labelled), min(inside) if inside else None))
    return scored


async def current(
    turn: LabelledTurn,
    settings: Settings,
    new_detector: Callable[[], SpeechDetector],
    transcriber: Transcriber,
    scorer: TurnScorer,
    latency_ms: int = 0,
) -> list[ScoredSilence]:
    """``current``: the server's decision at each silence (its end of turn, pushed in audio time)."""
    outcome = await run_utterance(as_utterance(turn), settings, new_detector, transcriber, scorer, latency_ms)
    return fired(turn, outcome.ends)


@dataclass(slots=True)
class Scored:
    """Every silence of a set as each system scored it."""

    by_system: dict[str, list[ScoredSilence]]

    @classmethod
    def empty(cls, systems: Sequence[str]) -> Scored:
        return cls({name: [] for name in systems})

    def add(self, system: str, silences: list[ScoredSilence]) -> None:
        self.by_system[system].extend(silences)
