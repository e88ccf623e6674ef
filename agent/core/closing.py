"""How a session comes to its end: the drain and its goodbye, the idle prompt and the idle end, the close.

One reason to change: when and how a call ends. ``Closing`` holds that state for the session
(``agent.core.session``), which asks it on every event, once the turn in progress has had its say:

- Drain (``Drain(deadline)``: the server is shutting down, or the call cannot be served): no new turn starts;
  the turn in progress goes on until the caller has heard it, or is cut at ``deadline``; then the goodbye
  phrase is spoken (not over the caller's words, unless time is up) and, once heard, the session closes with
  the drain's code (1001, ``SHUTTING_DOWN``).
- Idle (``IdlePolicy``): after a silence of ``prompt_after_s`` the agent asks once whether the caller is still
  there; after ``end_after_s`` the session ends. The silence counts from the caller's last voice or the end of
  the agent's last turn, whichever is later.
- The close itself: what is in progress stops, the client is told why, ``CloseSession``; nothing after it.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from agent.core.events import SHUTTING_DOWN, CloseSession, Drain, Effect, Notify, SessionEnded
from agent.core.language_text import phrase_text
from agent.core.policies import IdlePolicy
from agent.core.preemption import Preemptor
from agent.core.speaking import Speaker


class Closing:
    """The end of ``speaker``'s session: drained, idle or closed (``ahead``'s prepared reply is dropped too)."""

    def __init__(self, speaker: Speaker, ahead: Preemptor) -> None:
        self._speaker = speaker
        self._ahead = ahead
        self.closed = False
        """The session is over: every later event is ignored."""
        self.drain_by: float | None = None
        """Draining: the time by which the turn in progress is cut."""
        self._goodbye = False
        """Draining: the goodbye has been queued (it is never cut)."""
        self._drain_close = (1001, SHUTTING_DOWN)
        """Draining: the close once the goodbye was heard."""
        self.last_activity_at: float | None = None
        """The caller's last voice (or the session's start): the idle timers count from there."""
        self._prompted = False
        """The idle prompt was said since the caller last spoke."""

    @property
    def draining(self) -> bool:
        return self.drain_by is not None

    def drain(self, event: Drain) -> list[Effect]:
        """Start draining (the first ``Drain`` counts): no new turn, so a reply prepared ahead is dropped."""
        if self.drain_by is None:
            self.drain_by = event.deadline
            self._drain_close = (event.code, event.reason)
        return self._ahead.discard()

    def voice(self, now: float) -> None:
        """The caller is speaking at ``now``: the idle timers start again."""
        self.last_activity_at = now
        self._prompted = False

    def cut_due(self, now: float) -> bool:
        """Draining, the goodbye not said yet, and the drain's deadline has come: the turn in progress is cut."""
        return self.drain_by is not None and not self._goodbye and now >= self.drain_by

    def farewell(self, now: float, *, waiting: bool, caller_speaking: bool) -> list[Effect]:
        """Draining and nothing in progress: the goodbye, then, once it has been heard, the drain's close.
        ``waiting``: an utterance waits for its transcript (a turn still in progress)."""
        speaker = self._speaker
        if speaker.active is not None or waiting:
            return []
        goodbye = speaker.phrases.goodbye
        if not self._goodbye and goodbye:
            drain_by = self.drain_by
            if caller_speaking and drain_by is not None and now < drain_by:
                return []  # not over the caller's words, unless time is up
            self._goodbye = True
            return speaker.own_turn(goodbye, "goodbye", now, remember=False)
        code, reason = self._drain_close
        return self.close(now, SessionEnded(reason), code, reason)

    def idle(self, now: float, idle: IdlePolicy) -> list[Effect]:
        """Nothing in progress and nobody speaking: prompt the caller once, or end an abandoned session."""
        speaker = self._speaker
        marks = [t for t in (self.last_activity_at, speaker.finished_at) if t is not None]
        since = now - max(marks) if marks else 0.0
        if idle.end_after_s and since >= idle.end_after_s:
            return self.close(now, SessionEnded("no speech for a while: session ended"), 1000, "idle timeout")
        if idle.prompt_after_s and not self._prompted and since >= idle.prompt_after_s:
            self._prompted = True
            text = phrase_text("idle_prompt", idle.prompt_text, speaker.language)
            return speaker.own_turn(text, "idle_prompt", now, remember=True)
        return []

    def close(self, now: float, notice: SessionEnded, code: int, reason: str) -> list[Effect]:
        """End the session now: what is in progress stops (nothing more is played), ``notice``, then the close."""
        effects = self._ahead.discard() + self._speaker.interrupt(now, clear=False)
        self.closed = True
        return [*effects, Notify(notice), CloseSession(code, reason)]
