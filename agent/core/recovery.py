"""When a turn's stage is overdue, and when the agent should say "one moment" (pure, no clock).

Every stage of a turn has a deadline (``Deadlines``, 0 = none), measured from ``Turn.began_at`` (the
transcript, or the start of a turn the agent began itself) or from the first sentence handed to synthesis:

- ``llm_timeout``: no reply text ``first_text_s`` after the transcript;
- ``tts_timeout``: no audio ``first_audio_s`` after the first sentence (or phrase) was queued;
- ``reply_timeout``: the reply not completely synthesized ``reply_s`` after the transcript (a stream that
  stalls half way, a client so slow that synthesis waits for room for ever).

The transcript's own deadline (``asr_s``) is checked by the session on its pending turn. What happens then
(cancel, report, apologise) is the speaker's business; these functions only decide. One reason to change: when
a stage counts as overdue, or the hold phrase as due.
"""

from __future__ import annotations

from agent.core.policies import Deadlines, Phrases
from agent.core.turn_state import Turn


def overdue(turn: Turn, now: float, deadlines: Deadlines) -> str | None:
    """The wire code of the deadline ``turn`` has missed by ``now``, or ``None``."""
    if turn.began_at is None or turn.speech_finished or turn.tools.waiting:
        return None  # a tool's own timeout bounds the wait for it (``agent.core.tools``)
    since = now - turn.began_at
    waiting_for_text = not turn.reply_finished and turn.first_text_at is None
    if deadlines.first_text_s and waiting_for_text and since >= deadlines.first_text_s:
        return "llm_timeout"
    queued = turn.first_synthesis_at
    silent = queued is not None and not turn.audio_started
    if deadlines.first_audio_s and silent and now - (queued or now) >= deadlines.first_audio_s:
        return "tts_timeout"
    if deadlines.reply_s and since >= deadlines.reply_s:
        return "reply_timeout"
    return None


def hold_due(turn: Turn, now: float, phrases: Phrases) -> bool:
    """True when ``turn`` should get the hold phrase now.

    Due ``hold_after_ms`` after the caller stopped speaking, once per turn, and only while nothing has been
    queued for synthesis (the phrase then plays first and the reply follows it without waiting). Never at
    the very moment the transcript arrives: the reply gets the first chance to begin (after a slow
    transcription a fast language model answers at once and needs no excuse).
    """
    if not phrases.hold or not phrases.hold_after_ms or turn.system or turn.held:
        return False
    if turn.first_synthesis_at is not None or turn.audio_started or turn.reply_finished:
        return False
    stopped = turn.last_voice_at if turn.last_voice_at is not None else turn.ended_at
    if stopped is None or turn.transcript_at is None or turn.transcript_at == now:
        return False
    return (now - stopped) * 1000.0 >= phrases.hold_after_ms
