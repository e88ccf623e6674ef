"""The stage tasks of a connection (transcription, reply text): they never let an exception escape.

Each runs as its own asyncio task and posts its result to the connection's inbox. A failure of the
provider behind the port (an ``AgentError``) is posted with the stage's own code (``asr_failed``,
``llm_failed``) and logged as a warning; anything else is a bug: it is logged once with its traceback and
posted with the generic code ``internal_error`` (the client learns nothing about our internals). Either
way the session goes on and the core apologises (``agent.core.session``). Cancellation is not a failure:
``CancelledError`` passes through.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from agent.core.events import Event, ReplyDelta, ReplyEnded, StageFailed, TranscriptFailed, TranscriptReady
from agent.errors import AgentError
from agent.ports import ChatMessage, LanguageModel, SpeechToText

Post = Callable[[Event], Awaitable[None]]
Log = logging.Logger | logging.LoggerAdapter[logging.Logger]

INTERNAL_ERROR = "internal_error"
INTERNAL_MESSAGE = "internal error; the session goes on"


async def transcribe(stt: SpeechToText, request: int, pcm: bytes, post: Post, log: Log) -> None:
    """Post ``TranscriptReady`` or ``TranscriptFailed`` for ``request``."""
    try:
        transcript = await stt.transcribe(pcm)
    except AgentError as exc:
        log.warning("transcription %d failed: %s", request, exc)
        await post(TranscriptFailed(request, f"transcription failed: {exc}"))
        return
    except Exception:
        log.exception("transcription %d raised an unexpected error", request)
        await post(TranscriptFailed(request, INTERNAL_MESSAGE, INTERNAL_ERROR))
        return
    await post(TranscriptReady(request, transcript.text))


async def reply(llm: LanguageModel, turn: int, history: tuple[ChatMessage, ...], post: Post, log: Log) -> None:
    """Post ``ReplyDelta``s then ``ReplyEnded`` for ``turn``, or ``StageFailed(stage="llm")``."""
    try:
        async for delta in llm.stream_reply(history):
            await post(ReplyDelta(turn, delta))
    except AgentError as exc:
        log.warning("reply failed in turn %d: %s", turn, exc)
        await post(StageFailed(turn, "llm", "llm_failed", f"reply generation failed: {exc}"))
        return
    except Exception:
        log.exception("reply of turn %d raised an unexpected error", turn)
        await post(StageFailed(turn, "llm", INTERNAL_ERROR, INTERNAL_MESSAGE))
        return
    await post(ReplyEnded(turn))
