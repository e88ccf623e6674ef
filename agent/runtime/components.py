"""The adapters a running server uses, built once at start-up by ``agent.wiring``."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agent.config import Settings
from agent.ports import (
    LanguageModel,
    SpeechDetector,
    SpeechToText,
    TextCompletion,
    TextToSpeech,
    ToolRunner,
    TurnCompletion,
    VoiceStore,
)
from agent.runtime.call.fidelity import FidelitySampler
from agent.runtime.call.phrases import PhraseBook
from agent.runtime.call.voicing import Fallback, Voicing
from agent.traces import Tracing
from agent.voices.enrollment import EnrollmentLimits
from agent.work.resilience import BreakerState, BreakerStatus, CircuitBreaker
from agent.work.scheduling import QueueStats, merge
from agent.work.workers import WorkPool


class Scheduled(Protocol):
    """Something that runs model work in the scheduling policy's order and reports its queues."""

    def stats(self, pending_turns: int = 0) -> QueueStats: ...


@dataclass(frozen=True, slots=True)
class Components:
    """Shared, loaded models and services. ``new_detector`` makes one stateful detector per connection."""

    stt: SpeechToText
    llm: LanguageModel
    tts: TextToSpeech
    new_detector: Callable[[], SpeechDetector]
    new_confirmer: Callable[[], SpeechDetector] | None = None
    """A second detector per connection whose verdict a pause's voiced frames need (``AGENT_VAD__CONFIRM``)."""
    fallback: Fallback | None = None
    """Speaks when ``tts`` fails or its breaker is open (the local voice when ``tts`` is a remote one)."""
    voices: VoiceStore | None = None
    """Enrolled voices (enrollment over /ws, ``voices.list``); ``None`` = enrollment is not offered."""
    enrollment_limits: EnrollmentLimits | None = None
    """Every connection's share of the per-tenant voice quota and enrollment rate; ``None`` = no limits."""
    breakers: tuple[CircuitBreaker, ...] = ()
    """The circuit breakers of the remote speech endpoints (shown by ``/metrics`` and ``/healthz``)."""
    phrases: PhraseBook | None = None
    """Keeps every voice's fixed phrases; ``None`` = one over ``voices`` per session (no shared state)."""
    work: WorkPool | None = None
    """The worker threads the local models share (queue statistics for ``/metrics`` and admission)."""
    queues: tuple[Scheduled, ...] = ()
    """Other scarce resources run by the policy (a remote voice endpoint's slots)."""
    turn_model: TurnCompletion | None = None
    """Scores each pause from its sound (``ScoreTurn``); ``None``: the words alone decide (``TurnScored(None)``)."""
    text_model: TextCompletion | None = None
    """Scores each pause from its words (``ScoreWords``); ``None``: the rules read them (``TurnScored(None)``)."""
    fidelity: FidelitySampler | None = None
    """Samples replies of cloned voices for their similarity to the voice (``/metrics``); ``None``: off."""
    tools: ToolRunner | None = None
    """Runs the server's own tools (HTTP, MCP, built in) for each tenant's calls; ``None``: none are offered."""
    tracing: Tracing | None = None
    """Exports each call's trace and each refused upgrade (``OTEL_EXPORTER_OTLP_ENDPOINT``); ``None``: off.
    ``aclose`` closes it last: what is pending is exported then."""

    def queue_stats(self, pending_turns: int = 0) -> QueueStats | None:
        """All the model queues, now (``None``: nothing is scheduled here); ``pending_turns``: first turns of
        callers admitted but not answered yet, counted ahead of a new caller's (``agent.work.scheduling``)."""
        sources: list[Scheduled] = [self.work, *self.queues] if self.work is not None else list(self.queues)
        return merge([source.stats(pending_turns) for source in sources]) if sources else None

    def voicing(self, settings: Settings, voice: str, *, fallback: bool = False) -> Voicing:
        """How a session speaking in ``voice`` (a handle from ``tts.resolve_voice``; with ``fallback``, the fallback
        voice's handle, spoken by the fallback's engine when there is one) speaks."""
        turn = settings.turn
        # The greeting is needed at once; the goodbye next, so a shutdown never waits for the endpoint.
        texts = {
            "greeting": turn.greeting_text,
            "goodbye": turn.goodbye_text,
            "apology": turn.apology_text,
            "hold": turn.hold_text if turn.hold_after_ms > 0 else "",
            "idle_prompt": turn.idle_prompt_text if turn.idle_prompt_s > 0 else "",
        }
        return Voicing(
            tts=self.fallback.tts if fallback and self.fallback is not None else self.tts,
            voice=voice,
            fallback=self.fallback,
            phrases=self.phrases if self.phrases is not None else PhraseBook(self.voices),
            apology_text=turn.apology_text,
            depth=settings.tts.pipeline_depth,
            turn_retries=settings.tts.turn_retry_budget,
            warm_texts=texts if settings.tts.warm_phrases else {},
            fidelity=self.fidelity,
        )

    def speech_status(self) -> list[BreakerStatus]:
        """The remote speech endpoints' circuit breakers, now."""
        return [breaker.status() for breaker in self.breakers]

    def health_detail(self) -> dict[str, object]:
        """For ``/healthz``: each speech endpoint's breaker; ``status`` "degraded" while one is not closed
        (calls are still served, in the fallback voice)."""
        statuses = self.speech_status()
        detail: dict[str, object] = {
            "speech": [
                {
                    "endpoint": s.name,
                    "breaker": s.state.value,
                    "consecutive_failures": s.consecutive_failures,
                    "retry_after_s": None if s.retry_after_s is None else round(s.retry_after_s, 1),
                }
                for s in statuses
            ]
        }
        if any(s.state is not BreakerState.CLOSED for s in statuses):
            detail["status"] = "degraded"
        return detail

    async def aclose(self) -> None:
        """Release what the adapters hold (HTTP pools, thread pools) at shutdown; errors are logged."""
        parts: list[object] = [self.llm, self.tts, self.stt, self.turn_model, self.voices, self.fidelity, self.tools]
        if self.fallback is not None:
            parts.append(self.fallback.tts)
        parts.append(self.work)
        parts.append(self.tracing)  # last: the spans of the calls just closed are exported
        for part in parts:
            close = getattr(part, "aclose", None) or getattr(part, "close", None)
            if close is None:
                continue
            with contextlib.suppress(Exception):
                if inspect.iscoroutinefunction(close):
                    await close()
                else:  # a blocking close (thread pools wait for their running jobs): keep the loop free
                    await asyncio.to_thread(close)
