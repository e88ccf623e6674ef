"""One utterance through the server's own end-of-turn pipeline (CallerAudio, Session, the models answering its effects)
in audio time: changes only with how the offline bench drives the core.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.config import Settings
from agent.core.events import (
    CancelTranscriptOrScore,
    Effect,
    Event,
    Notify,
    ScoreTurn,
    ScoreWords,
    SpeechStopped,
    Transcribe,
    TranscriptReady,
    TurnScored,
)
from agent.core.session import Session
from agent.ports import SpeechDetector
from agent.runtime.call.caller_audio import CallerAudio
from agent.runtime.call.policies import session_config
from agent.wiring import build_confirmer_factory
from bench.turns.corpus import Utterance
from bench.turns.delays import Kind
from bench.turns.models import Transcriber, TurnScorer
from bench.turns.voices import RATE

OUTPUT_RATE = 24000
CHUNK_BYTES = RATE * 20 // 1000 * 2  # 20 ms of caller audio per push, as a browser sends it
# --- one utterance through the pipeline -----------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    utterance: Utterance
    ends: list[int] = field(default_factory=list)
    """Where each end of turn (``Notify(SpeechStopped)``) came, ms of audio pushed; the first is *the* end."""
    transcripts: list[str] = field(default_factory=list)
    """Transcripts the core asked for (speculative, final, quick), in order."""
    answered: str | None = None
    """The transcript the first turn was answered with: its final transcript, or the speculative one reused."""
    scores: list[tuple[int, float]] = field(default_factory=list)
    """Sound scores the core asked for: (ms of audio pushed, probability the caller has finished)."""
    words: list[tuple[int, float | None]] = field(default_factory=list)
    """Words' scores the core asked for: (ms of audio pushed, the text model's probability; ``None``: none)."""

    @property
    def end_ms(self) -> int | None:
        return self.ends[0] if self.ends else None

    @property
    def cut_off(self) -> bool:
        return self.end_ms is not None and self.end_ms < self.utterance.audible_end_ms

    @property
    def split(self) -> bool:
        return len(self.ends) > 1

    @property
    def latency_ms(self) -> float | None:
        if self.end_ms is None or self.cut_off:
            return None
        return self.end_ms - self.utterance.audible_end_ms

    @property
    def where(self) -> str:
        return "no end" if self.end_ms is None else self.utterance.where(self.end_ms)

    def as_json(self) -> dict[str, Any]:
        latency = self.latency_ms
        return {
            **self.utterance.describe(),
            "end_ms": self.end_ms,
            "ends_ms": self.ends,
            "cut_off": self.cut_off,
            "turns": len(self.ends),
            "split": self.split,
            "ended_in": self.where,
            "latency_ms": None if latency is None else round(latency, 1),
            "answered": self.answered,
            "transcripts": self.transcripts,
            "turn_scores": [[at, round(p, 3)] for at, p in self.scores],
        }


def caller_audio(settings: Settings, new_detector: Callable[[], SpeechDetector]) -> CallerAudio:
    """The VAD front end as a connection builds it (16 kHz input, so no resampling; no echo gate: the agent never
    speaks here)."""
    vad = settings.vad
    key = vad.model_dump_json()
    if key not in _CONFIRMERS:  # the second detector's model loads once per VAD setting
        _CONFIRMERS[key] = build_confirmer_factory(settings)
    new_confirmer = _CONFIRMERS[key]
    confirm = new_confirmer() if new_confirmer is not None else None
    return CallerAudio(
        RATE,
        new_detector(),
        vad.threshold,
        vad.tail_floor_db,
        None,
        vad.tail_over_noise_db,
        confirm,
        vad.confirm_threshold,
    )


_CONFIRMERS: dict[str, Callable[[], SpeechDetector] | None] = {}


async def run_utterance(
    utterance: Utterance,
    settings: Settings,
    new_detector: Callable[[], SpeechDetector],
    transcriber: Transcriber,
    scorer: TurnScorer,
    latency_ms: int | Callable[[Kind], int] = 0,
) -> Outcome:
    """Stream ``utterance`` through a fresh VAD and session core, carrying out the effects the end of turn
        depends on, until a turn ends after the audible end (or the audio runs out).

        ``new_detector`` is ``agent.wiring.build_detector_factory(settings)``, made once per policy (the Silero
        model loads once there). Answers go back ``latency_ms`` of audio after they were asked for (0: at once; a
    function: a delay drawn for each, ``delays.Delays.for_utterance``)."""
    session = Session(session_config(settings, OUTPUT_RATE, language="en"))
    audio = caller_audio(settings, new_detector)
    outcome = Outcome(utterance)
    position = 0  # ms of audio pushed
    due: dict[int, tuple[int, Event]] = {}  # request -> (position it is delivered at, the answer)
    latest: str | None = None  # the latest transcript asked for that could answer a turn

    async def settle(effects: list[Effect]) -> None:
        nonlocal latest
        queue = deque(effects)
        now = position / 1000
        scoring: dict[int, asyncio.Future[float]] = {}

        def score_ahead() -> None:
            """Start the sound scores waiting in the queue, in a thread beside the transcription (another core)."""
            for e in queue:
                if isinstance(e, ScoreTurn) and e.request not in scoring:
                    scoring[e.request] = asyncio.ensure_future(asyncio.to_thread(scorer.probability, settings, e.pcm))

        def answer(request: int, event: Event, kind: Kind = "asr") -> None:
            delay = latency_ms(kind) if callable(latency_ms) else latency_ms
            if delay:
                due[request] = (position + delay, event)
            else:
                queue.extend(session.handle(event, now))

        while queue:
            effect = queue.popleft()
            match effect:
                case Notify(event=SpeechStopped()):
                    outcome.ends.append(position)
                    if len(outcome.ends) == 1:
                        outcome.answered = latest
                case Transcribe():
                    score_ahead()
                    text = await transcriber.text(settings, effect.pcm, effect.over_agent)
                    outcome.transcripts.append(text)
                    if effect.purpose != "quick":
                        latest = text
                    answer(effect.request, TranscriptReady(effect.request, text, language="en"))
                case ScoreTurn():
                    ahead = scoring.pop(effect.request, None)
                    p = await ahead if ahead is not None else scorer.probability(settings, effect.pcm)
                    outcome.scores.append((position, p))
                    answer(effect.request, TurnScored(effect.request, p), "score")
                case ScoreWords():
                    words = scorer.words(settings, effect.text, effect.language)
                    outcome.words.append((position, words))
                    answer(effect.request, TurnScored(effect.request, words), "words")
                case CancelTranscriptOrScore():
                    due.pop(effect.request, None)
                case _:
                    pass  # replies, notices: the agent stays silent here

    pcm = utterance.pcm
    for offset in range(0, len(pcm), CHUNK_BYTES):
        for frame in audio.push(pcm[offset : offset + CHUNK_BYTES]):
            position += frame.duration_ms
            effects = session.handle(frame, position / 1000)
            for request, (at, event) in sorted(due.items(), key=lambda item: item[1][0]):
                if at <= position and request in due:
                    del due[request]
                    effects += session.handle(event, position / 1000)
            await settle(effects)
            if outcome.ends and outcome.ends[-1] >= utterance.audible_end_ms:
                return outcome  # nothing more is said
    return outcome
