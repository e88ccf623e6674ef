"""The stage tasks of a connection (transcription, reply text, tool calls): they never let an exception escape.

Each runs as its own asyncio task and posts its result to the connection's inbox. A failure of the provider
behind the port (an ``AgentError``) is posted with the stage's own code (``asr_failed``, ``llm_failed``; a tool's
``tool_failed`` / ``tool_timeout``, which the model is told) and logged as a warning; anything else is a bug: it
is logged once with its traceback and posted with the generic code ``internal_error`` (the client learns nothing
about our internals). Either way the session goes on and the core apologises (``agent.core.session``).
Cancellation is not a failure: ``CancelledError`` passes through. A speculative or quick transcript the busy
server dropped (``WorkDropped``) is posted as failed too (the core then waits for the final one), logged at DEBUG
only.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from agent.config import Settings
from agent.core.events import (
    Event,
    ReplyDelta,
    ReplyEnded,
    ReplyToolCall,
    StageFailed,
    ToolDone,
    TranscriptFailed,
    TranscriptReady,
    TurnScored,
)
from agent.errors import AgentError, ProviderError, ProviderTimeout, WorkDropped
from agent.ports import (
    ChatMessage,
    JobInfo,
    LanguageHint,
    LanguageModel,
    SpeechToText,
    TextCompletion,
    ToolCall,
    ToolRunner,
    ToolSpec,
    TurnCompletion,
    Work,
)

Post = Callable[[Event], Awaitable[None]]
Log = logging.Logger | logging.LoggerAdapter[logging.Logger]

PROBE_LEAD_S = 0.12  # BargeInPolicy.probe_lead_ms
INTERNAL_ERROR = "internal_error"
INTERNAL_MESSAGE = "internal error; the session goes on"


def transcript_job(purpose: str, settings: Settings, over_agent: bool = False) -> JobInfo:
    """How urgent a transcript is. A final one blocks a reply. A quick one is useful until the caller has spoken
    long enough to interrupt whatever was said (``BACKCHANNEL_MAX_MS``; it is asked for ``PROBE_LEAD_S`` before
    ``BARGE_IN_MIN_MS``); past that slack a busy server drops it (``WorkDropped``).

    A speculative one is needed when the turn would end without it (the default hangover). It is kept even when
    it cannot start by then: when the caller stays silent it *is* the turn's final transcript, already queued
    (dropping it would only queue the same work later, behind others). Only an overloaded server, one that
    would make it wait past that slack plus the admission budget (``ADMISSION_WAIT_MS``), drops it.

    ``over_agent``: the sound was made while the agent held the floor; it is transcribed plain (no prompt)."""
    turn = settings.turn
    if purpose == "speculative":
        slack = max(settings.vad.hangover_ms - settings.speculative_ms, 0) / 1000
        drop_after = slack + settings.server.admission_wait_ms / 1000
        return JobInfo(Work.SPECULATIVE_TRANSCRIPT, slack, drop_after, plain=over_agent)
    if purpose == "quick":
        slack = max(turn.backchannel_max_ms - turn.barge_in_min_ms, 0) / 1000 + PROBE_LEAD_S
        return JobInfo(Work.QUICK_TRANSCRIPT, slack, plain=over_agent)
    return JobInfo(Work.FINAL_TRANSCRIPT, plain=over_agent)


async def transcribe(
    stt: SpeechToText, request: int, pcm: bytes, job: JobInfo, hint: LanguageHint | None, post: Post, log: Log
) -> None:
    """Post ``TranscriptReady`` (in the language the recogniser chose with ``hint``) or ``TranscriptFailed`` for
    ``request``."""
    try:
        transcript = await stt.transcribe(pcm, job, hint)
    except WorkDropped as exc:
        log.debug("transcription %d skipped: %s", request, exc)
        await post(TranscriptFailed(request, f"transcription skipped: {exc}"))
        return
    except AgentError as exc:
        log.warning("transcription %d failed: %s", request, exc)
        await post(TranscriptFailed(request, f"transcription failed: {exc}"))
        return
    except Exception:
        log.exception("transcription %d raised an unexpected error", request)
        await post(TranscriptFailed(request, INTERNAL_MESSAGE, INTERNAL_ERROR))
        return
    await post(TranscriptReady(request, transcript.text, transcript.language, transcript.language_probability))


def score_job(settings: Settings) -> JobInfo:
    """How urgent a pause's score (its sound's or its words') is: end-of-turn work like the speculative transcript
    (its answer is wanted before the shortest hangover), and dropped by an overloaded server (the other evidence
    then decides)."""
    slack = max(settings.turn.hangover_min_ms - settings.speculative_ms, 0) / 1000
    return JobInfo(Work.TURN_SCORE, slack, slack + settings.server.admission_wait_ms / 1000)


async def score(model: TurnCompletion | None, request: int, pcm: bytes, job: JobInfo, post: Post, log: Log) -> None:
    """Post ``TurnScored`` for ``request``: the probability, or ``None`` when there is no model, or it was busy or
    failed (the words then decide alone)."""
    asked = None if model is None else model.complete_probability(pcm, job)
    await _post_score(request, "turn score", asked, post, log)


async def score_words(
    model: TextCompletion | None, request: int, text: str, language: str, job: JobInfo, post: Post, log: Log
) -> None:
    """Post ``TurnScored`` for ``request``: the text model's probability that ``text`` (in ``language``) is a
    finished turn, or ``None`` when there is no model for that language, or it was busy or failed."""
    reads = model is not None and model.reads(language)
    asked = model.complete_probability(text, language, job) if model is not None and reads else None
    await _post_score(request, "words score", asked, post, log)


async def _post_score(request: int, what: str, asked: Coroutine[Any, Any, float] | None, post: Post, log: Log) -> None:
    probability: float | None = None
    try:
        if asked is not None:
            probability = await asked
    except WorkDropped as exc:
        log.debug("%s %d skipped: %s", what, request, exc)
    except AgentError as exc:
        log.warning("%s %d failed: %s", what, request, exc)
    except Exception:
        log.exception("%s %d raised an unexpected error", what, request)
    await post(TurnScored(request, probability))


async def reply(
    llm: LanguageModel,
    turn: int,
    history: tuple[ChatMessage, ...],
    language: str,
    tools: tuple[ToolSpec, ...],
    tool_choice: str,
    post: Post,
    log: Log,
) -> None:
    """Post ``ReplyDelta``s (and a ``ReplyToolCall`` per call the model makes, in order) then ``ReplyEnded`` for
    ``turn`` (a reply in ``language``, the model offered ``tools``), or ``StageFailed(stage="llm")``."""
    try:
        async for part in llm.stream_reply(history, language=language, tools=tools, tool_choice=tool_choice):
            await post(ReplyToolCall(turn, part) if isinstance(part, ToolCall) else ReplyDelta(turn, part))
    except AgentError as exc:
        log.warning("reply failed in turn %d: %s", turn, exc)
        await post(StageFailed(turn, "llm", "llm_failed", f"reply generation failed: {exc}"))
        return
    except Exception:
        log.exception("reply of turn %d raised an unexpected error", turn)
        await post(StageFailed(turn, "llm", INTERNAL_ERROR, INTERNAL_MESSAGE))
        return
    await post(ReplyEnded(turn))


async def tool(runner: ToolRunner | None, tenant: str, turn: int, call: ToolCall, post: Post, log: Log) -> None:
    """Post ``ToolDone`` for ``call`` of ``turn``: the output of the server's tool, or what went wrong (the
    model is told; the runner writes the audit line). Cancelled when its reply stops or its time is up."""
    try:
        if runner is None:
            raise AgentError("this server runs no tools")
        output = await runner.run(tenant, call)
    except ProviderTimeout as exc:
        await post(ToolDone(turn, call.call_id, exc.detail or "the tool did not answer in time", False, "tool_timeout"))
        return
    except AgentError as exc:
        log.warning("tool %s failed in turn %d: %s", call.name, turn, exc)
        detail = exc.detail if isinstance(exc, ProviderError) and exc.detail else str(exc)
        await post(ToolDone(turn, call.call_id, detail, False, "tool_failed"))
        return
    except Exception:
        log.exception("tool %s of turn %d raised an unexpected error", call.name, turn)
        await post(ToolDone(turn, call.call_id, "the tool failed", False, "tool_failed"))
        return
    await post(ToolDone(turn, call.call_id, output))
