"""The server's own metrics: sessions, turns and their latencies, barge-ins, errors, refusals, the speech
endpoints' breakers, voice fidelity, composed with the model queues and the process figures.

``ServerMetrics`` is what the connection loop and the listener update and ``GET /metrics`` renders. Reason to
change: a figure the server reports is added or renamed. The primitives live in
``agent.runtime.metrics.registry``, which knows no collector.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.core.events import TurnMetrics
from agent.runtime.metrics.process import ProcessMetrics
from agent.runtime.metrics.queues import ModelQueueMetrics
from agent.runtime.metrics.registry import Counter, Gauge, Histogram, Registry
from agent.work.resilience import BreakerStatus
from agent.work.scheduling import QueueStats

# Voice-to-voice and per-stage latencies span ~50 ms (an instant stage) to several seconds (a slow turn).
LATENCY_BUCKETS_S: tuple[float, ...] = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
_TOOL_BUCKETS: tuple[float, ...] = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.7, 1.0, 2.0, 5.0, 10.0, 30.0)

_STAGES = (
    ("endpoint", "endpoint_ms"),
    ("asr", "asr_ms"),
    ("llm_first_text", "llm_first_text_ms"),
    ("tts_first_audio", "tts_first_audio_ms"),
    ("voice_to_voice", "voice_to_voice_ms"),
)


class ServerMetrics:
    """The server's metrics. Call from the event loop; ``render`` gives the ``/metrics`` body."""

    def __init__(self) -> None:
        self.registry = Registry()
        r = self.registry
        self.sessions_total = r.register(Counter("voice_agent_sessions_total", "Sessions opened."))
        self.active_sessions = r.register(Gauge("voice_agent_active_sessions", "Sessions open now."))
        self.opening = r.register(
            Gauge(
                "voice_agent_opening_connections",
                "Connections whose session has not started yet (not load; bounded per address and in total).",
            )
        )
        self.speaking = r.register(
            Gauge("voice_agent_speaking_calls", "Sessions whose caller is speaking now (admission's forecast).")
        )
        self.turns_total = r.register(Counter("voice_agent_turns_total", "Turns completed (interrupted included)."))
        self.interrupted_turns_total = r.register(
            Counter("voice_agent_interrupted_turns_total", "Turns cut short by the caller (barge-in).")
        )
        self.barge_ins_total = r.register(
            Counter("voice_agent_barge_ins_total", "Times the caller talked over a reply.")
        )
        self.continued_turns_total = r.register(
            Counter(
                "voice_agent_continued_turns_total",
                "Turns that go on with the caller's previous words: they had only paused, and the end of turn "
                "came too early (AGENT_TURN__CONTINUE_WITHIN_MS).",
            )
        )
        self.playback_pauses_total = r.register(
            Counter(
                "voice_agent_playback_pauses_total",
                "Replies paused because the caller started speaking over them, by outcome: resumed (a cough, "
                "an acknowledgement) or interrupted (a barge-in).",
                ["outcome"],
            )
        )
        self.preemptive_replies_total = r.register(
            Counter(
                "voice_agent_preemptive_replies_total",
                "Replies started before the end of turn, by outcome: hit (released at the end of turn), "
                "miss (discarded: the caller went on).",
                ["outcome"],
            )
        )
        self.preemption_wasted_speech = r.register(
            Counter(
                "voice_agent_preemption_wasted_speech_seconds_total",
                "Speech synthesized for replies that were discarded (each miss also wasted one LLM request).",
            )
        )
        self.errors_total = r.register(
            Counter("voice_agent_errors_total", "Errors sent to clients, by code.", ["code"])
        )
        self.turn_latency = r.register(
            Histogram(
                "voice_agent_turn_latency_seconds",
                "Latency of each turn stage; voice_to_voice is end of caller speech to first reply audio.",
                LATENCY_BUCKETS_S,
                ["stage"],
            )
        )
        self.reply_audio = r.register(
            Histogram(
                "voice_agent_reply_audio_seconds",
                "Reply audio sent per turn.",
                (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0),
            )
        )
        self.breaker_state = r.register(
            Gauge(
                "voice_agent_tts_breaker_state",
                "Circuit breaker of each remote speech endpoint: 0 closed, 1 half-open, 2 open.",
                ["endpoint"],
            )
        )
        self.breaker_opened_total = r.register(
            Counter("voice_agent_tts_breaker_opened_total", "Times each endpoint's breaker opened.", ["endpoint"])
        )
        self.recovered_faults_total = r.register(
            Counter(
                "voice_agent_tts_recovered_faults_total",
                "Speech requests that failed and were recovered without an error to the caller.",
                ["endpoint"],
            )
        )

        self.shared_limit_errors_total = r.register(
            Counter(
                "voice_agent_shared_limit_errors_total",
                "Checks of a shared limit (AGENT_LIMITS__REDIS_URL) whose counter did not answer in time, by limit "
                "(enroll_rate, voice_quota, opening_tenant, opening_peer) and outcome: failed_open (taken "
                "uncounted) or failed_closed (refused with limits_unavailable).",
                ["limit", "outcome"],
            )
        )
        self.refusals_total = r.register(
            Counter(
                "voice_agent_refusals_total",
                "New calls refused, by reason: an upgrade's (4xx for the request itself, 429 for its sender's bound, "
                "503 for the server's state; each also logged on one line with its counts), an AudioSocket call's, "
                "or a session's start on a full server (full).",
                ["reason"],
            )
        )
        self.voice_similarity = r.register(
            Gauge(
                "voice_agent_voice_similarity",
                "Speaker similarity (cosine, 0..1) of the latest sampled reply to its voice's reference audio, per "
                "voice and language (agent.runtime.call.fidelity): a drift signal, not a verifier.",
                ["voice", "language"],
            )
        )
        self.tool_latency = r.register(
            Histogram(
                "voice_agent_tool_seconds",
                "Tool calls a reply waited on: from the model's call to its result, by tool (a client's tools "
                "are all 'client') and outcome (ok, failed, timeout, cancelled).",
                _TOOL_BUCKETS,
                ["tool", "outcome"],
            )
        )
        self.models = ModelQueueMetrics(r)
        self.process = ProcessMetrics(r)

    def session_opened(self) -> None:
        self.sessions_total.inc()
        self.active_sessions.inc()

    def session_closed(self) -> None:
        self.active_sessions.dec()

    def turn_completed(self, m: TurnMetrics) -> None:
        self.turns_total.inc()
        if m.interrupted:
            self.interrupted_turns_total.inc()
        for stage, attribute in _STAGES:
            value_ms: float | None = getattr(m, attribute)
            if value_ms is not None:
                self.turn_latency.observe(value_ms / 1000.0, [stage])
        self.reply_audio.observe(m.reply_audio_ms / 1000.0)
        for tool in m.tools:
            self.tool_latency.observe(tool.ms / 1000.0, ["client" if tool.client else tool.name, tool.outcome])

    def error(self, code: str) -> None:
        self.errors_total.inc(labels=[code])

    def barge_in(self) -> None:
        self.barge_ins_total.inc()

    def continued_turn(self) -> None:
        self.continued_turns_total.inc()

    def playback_pause(self, resumed: bool) -> None:
        self.playback_pauses_total.inc(labels=["resumed" if resumed else "interrupted"])

    def preemption(self, hit: bool, synthesized_ms: float) -> None:
        self.preemptive_replies_total.inc(labels=["hit" if hit else "miss"])
        if not hit:
            self.preemption_wasted_speech.inc(synthesized_ms / 1000.0)

    def speech_endpoints(self, statuses: Iterable[BreakerStatus]) -> None:
        """Take the speech endpoints' breaker snapshots (their counters only go up)."""
        for status in statuses:
            labels = [status.name]
            self.breaker_state.set(status.state.level, labels)
            for counter, value in (
                (self.breaker_opened_total, status.opened_total),
                (self.recovered_faults_total, status.recovered_total),
            ):
                counter.inc(max(0.0, value - counter.value(labels)), labels)

    def shared_limit_error(self, limit: str, outcome: str) -> None:
        """A shared limit's counter did not answer (``agent.security.limiter``)."""
        self.shared_limit_errors_total.inc(labels=[limit, outcome])

    def refused(self, reason: str) -> None:
        """A new call refused (``agent.front_door.routes`` names every reason an upgrade has)."""
        self.refusals_total.inc(labels=[reason])

    def voice_similarity_scored(self, voice: str, language: str, similarity: float) -> None:
        """A reply in ``voice`` (a handle, ``tenant/name``) and ``language`` scored ``similarity``."""
        self.voice_similarity.set(similarity, [voice, language])

    def occupancy(self, opening: int, speaking: int) -> None:
        """The connections still opening and the callers speaking, now (set before ``render``)."""
        self.opening.set(opening)
        self.speaking.set(speaking)

    def render(self, speech: Iterable[BreakerStatus] = (), models: QueueStats | None = None) -> str:
        """The exposition; ``speech`` are the speech endpoints' breakers as they are now, ``models`` the local
        models' queues."""
        self.speech_endpoints(speech)
        if models is not None:
            self.models.update(models)
        self.process.update()
        return self.registry.render()
