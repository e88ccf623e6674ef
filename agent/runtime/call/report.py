"""What one session's events and outcomes mean for the logs and ``/metrics`` (no I/O beyond them).

The connection hands over every server event it sends and the core's outcome effects; this turns them into a
log line per turn, barge-in, continued turn or overdue stage, and into the server's counters. The messages a
connection refuses, and the requests the core refuses (an ``ErrorNotice`` of no turn: a tool result for a call
that is not the client's, a cancel with nothing to cancel), are counted one by one but logged only
``REFUSALS_LOGGED`` times, then summed up once at the close (``RefusalLog``): a client sending bad frames as fast
as it can writes a few lines, not one per frame."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from agent.core.events import (
    ErrorNotice,
    PlaybackClear,
    PreemptionOutcome,
    ServerEvent,
    TranscriptText,
    TurnMetrics,
    YieldOutcome,
)
from agent.runtime.metrics.server import ServerMetrics

REFUSALS_LOGGED = 5


class RefusalLog:
    """The messages one connection refused: each counted (``/metrics``), the first ``limit`` logged at INFO."""

    def __init__(self, log: logging.LoggerAdapter[Any], metrics: ServerMetrics, limit: int = REFUSALS_LOGGED) -> None:
        self._log = log
        self._metrics = metrics
        self._limit = limit
        self._codes: Counter[str] = Counter()

    def refused(self, what: str, code: str) -> None:
        """A message was refused with ``code``; ``what`` says which (a fixed text, never the client's)."""
        self._metrics.error(code)
        self._codes[code] += 1
        total = self._codes.total()
        if total <= self._limit:
            self._log.info("%s: %s", what, code)
        if total == self._limit:
            self._log.info("further refused messages of this connection are counted, not logged one by one")

    def summary(self) -> str | None:
        """The refusals past the logged ones, for the connection's last line (``None``: all were logged)."""
        total = self._codes.total()
        if total <= self._limit:
            return None
        codes = ", ".join(f"{code} x{count}" for code, count in self._codes.most_common())
        return f"{total} messages refused ({codes})"


class SessionReport:
    def __init__(self, log: logging.LoggerAdapter[Any], metrics: ServerMetrics, refusals: RefusalLog) -> None:
        self._log = log
        self._metrics = metrics
        self._refusals = refusals

    def event(self, event: ServerEvent) -> None:
        """A server event on its way to the client."""
        if isinstance(event, TurnMetrics):
            self._turn(event)
            self._metrics.turn_completed(event)
        elif isinstance(event, PlaybackClear):
            self._log.info("barge-in: turn %d interrupted", event.turn)
            self._metrics.barge_in()
        elif isinstance(event, TranscriptText) and event.continues is not None:
            self._log.info("turn %d goes on with turn %d: the caller had only paused", event.turn, event.continues)
            self._metrics.continued_turn()
        elif isinstance(event, ErrorNotice) and event.turn is None:
            # the core refused a client's request (``agent.core.requests``): a line with why, as for bad messages
            self._refusals.refused("client request refused", event.code)
        elif isinstance(event, ErrorNotice):
            self._metrics.error(event.code)
            if event.code.endswith("_timeout"):  # decided by the core: nothing else logs it
                self._log.warning("turn %s: %s: %s", event.turn, event.code, event.message)

    def outcome(self, effect: PreemptionOutcome | YieldOutcome) -> None:
        """How a prepared reply (preemption) or a paused one (yield) ended."""
        if isinstance(effect, PreemptionOutcome):
            self._metrics.preemption(effect.hit, effect.synthesized_ms)
        else:
            self._metrics.playback_pause(effect.resumed)

    def _turn(self, m: TurnMetrics) -> None:
        self._log.info(
            "turn %d: v2v=%s endpoint=%s asr=%s llm_first=%s tts_first=%s audio=%dms interrupted=%s spec=%s "
            "preemptive=%s",
            m.turn,
            m.voice_to_voice_ms,
            m.endpoint_ms,
            m.asr_ms,
            m.llm_first_text_ms,
            m.tts_first_audio_ms,
            m.reply_audio_ms,
            m.interrupted,
            m.speculative_asr,
            m.preemptive,
        )
        for tool in m.tools:
            self._log.info(
                "turn %d: tool %s %s in %.0f ms",
                m.turn,
                "(client)" if tool.client else tool.name,
                tool.outcome,
                tool.ms,
            )
