"""A call's trace, drawn from what the session core already reports: one span per turn, its stages as children.

Reason to change: what a call's trace shows. One clock: a turn's spans are drawn from the instants its
``turn.metrics`` figures are differences of (``TurnMetrics.at``, the session clock's), converted to the epoch by
one offset (``epoch_ns``), so a stage's span lasts what its figure says. ``turn_span`` is pure; ``CallTracer``
follows a connection's events (``agent.runtime.call.effects``) and hands finished spans to the call's
``agent.traces.CallTrace``. Events with no instant of the core's (a barge-in, a resume) are stamped when the
runtime carries them out, on the same clock. Nothing said (transcripts, reply text, tool arguments) goes into a
span unless the operator opted in (``AGENT_TRACING__CONTENT``).

Spans: ``turn`` (every ``turn.metrics`` figure as ``turn.<name>``), its children ``end_of_turn`` (last voice →
end of turn: ``endpoint_ms``), ``recognition.speculative`` (``spec_asr_ms``), ``recognition`` (end of turn →
transcript: ``asr_ms``), ``llm`` (transcript → reply done: ``llm_total_ms``; event ``first_token`` at
``llm_first_text_ms``), ``tts`` (first sentence sent to synthesis → synthesis done; event ``first_audio`` at
``tts_first_audio_ms``), ``tool`` (one per call: ``ms``). Turn events: ``barge_in``, ``pause``, ``resume``,
``yield.interrupted``, ``continued``, ``preemption``, ``error``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from agent.core.events import (
    ErrorNotice,
    PlaybackClear,
    PlaybackPause,
    PreemptionOutcome,
    ReplyText,
    ServerEvent,
    ToolTiming,
    TranscriptText,
    TurnInstants,
    TurnMetrics,
    YieldOutcome,
)
from agent.ports import ToolCall
from agent.traces import Attributes, AttributeValue, CallTrace, SpanEvent, SpanRecord, Tracing

ToNs = Callable[[float], int]

_OFFSET_NS = time.time_ns() - time.perf_counter_ns()
"""The epoch at ``time.perf_counter`` 0 (the session clock's), taken once: every span of the process shares it."""


def epoch_ns(instant: float) -> int:
    """An instant of the session clock (``time.perf_counter`` seconds) in nanoseconds since the Unix epoch."""
    return _OFFSET_NS + round(instant * 1e9)


def _span(
    name: str, start: float | None, end: float | None, to_ns: ToNs, attributes: Attributes, *events: SpanEvent
) -> SpanRecord | None:
    if start is None or end is None:
        return None
    return SpanRecord(name, to_ns(start), to_ns(end), attributes, events)


def _event(name: str, at: float | None, to_ns: ToNs, attributes: Attributes) -> tuple[SpanEvent, ...]:
    return () if at is None else (SpanEvent(name, to_ns(at), attributes),)


def _tool(tool: ToolTiming, to_ns: ToNs) -> SpanRecord | None:
    if tool.at is None:
        return None
    name = "client" if tool.client else tool.name  # a client's names are its own text: counted, not kept (as logs)
    attributes: Attributes = {"tool.name": name, "tool.outcome": tool.outcome, "tool.ms": tool.ms}
    return _span("tool", tool.at, tool.at + tool.ms / 1000, to_ns, {**attributes, "tool.client": tool.client})


def figures(m: TurnMetrics) -> dict[str, AttributeValue]:
    """The turn's ``turn.metrics`` figures as span attributes (``turn.<name>``; a stage that did not happen has
    none)."""
    found: dict[str, AttributeValue] = {"turn.number": m.turn, "turn.tool_calls": len(m.tools)}
    for name in (
        "endpoint_ms", "asr_ms", "llm_first_text_ms", "llm_total_ms", "tts_first_audio_ms", "voice_to_voice_ms",
        "caller_voice_to_voice_ms", "spec_asr_ms", "score_ms", "words_ms", "utterance_ms", "reply_audio_ms",
        "tail_ms", "heard_ms", "interrupted", "speculative_asr", "preemptive",
    ):  # fmt: skip
        value = getattr(m, name)
        if value is not None:
            found[f"turn.{name}"] = value
    return found


def stages(m: TurnMetrics, at: TurnInstants, to_ns: ToNs) -> list[SpanRecord]:
    """The stage spans of turn ``m`` (those that happened), in the order they began."""
    spec_end = None if at.spec_at is None or m.spec_asr_ms is None else at.spec_at + m.spec_asr_ms / 1000
    reply_end = at.reply_done_at if at.reply_done_at is not None else at.finished_at
    speech_end = at.speech_done_at if at.speech_done_at is not None else at.finished_at
    endpoint = {"turn.endpoint_ms": m.endpoint_ms or 0.0, "turn.tail_ms": m.tail_ms}
    found = [
        _span("end_of_turn", at.last_voice_at, at.ended_at, to_ns, endpoint),
        _span("recognition.speculative", at.spec_at, spec_end, to_ns, {"asr.speculative": True}),
        _span("recognition", at.ended_at, at.transcript_at, to_ns, {"asr.reused_speculative": m.speculative_asr}),
        _span(
            "llm",
            at.transcript_at,
            reply_end,
            to_ns,
            {"llm.first_token_ms": m.llm_first_text_ms or 0.0, "llm.done": at.reply_done_at is not None},
            *_event("first_token", at.first_text_at, to_ns, {}),
        ),
        _span(
            "tts",
            at.first_synthesis_at,
            speech_end,
            to_ns,
            {"tts.first_audio_ms": m.tts_first_audio_ms or 0.0, "tts.done": at.speech_done_at is not None},
            *_event("first_audio", at.first_audio_at, to_ns, {}),
        ),
        *(_tool(tool, to_ns) for tool in m.tools),
    ]
    return sorted((span for span in found if span is not None), key=lambda span: span.start_ns)


def turn_span(
    m: TurnMetrics, to_ns: ToNs, events: tuple[SpanEvent, ...] = (), extra: Attributes | None = None
) -> SpanRecord | None:
    """Turn ``m``'s span with its stages, from the instants its figures came from (``None``: it has none)."""
    at = m.at
    if at is None:
        return None
    children = stages(m, at, to_ns)
    start = min([to_ns(at.began_at), *(child.start_ns for child in children)])
    end = max([to_ns(at.finished_at), *(child.end_ns for child in children)])
    return SpanRecord("turn", start, end, figures(m) | dict(extra or {}), events, tuple(children))


def wire_name(wire: object) -> str:
    """The protocol a call speaks, from its wire's package (``agent.wires.phone.twilio.gateway``: ``phone.twilio``)."""
    parts = type(wire).__module__.split(".")
    return ".".join(parts[2:-1]) if parts[:2] == ["agent", "wires"] and len(parts) > 3 else type(wire).__name__


def start_call(
    tracing: Tracing | None, at: float, session: str, wire: object, tenant: str, language: str, voice: str
) -> CallTracer | None:
    """The trace of a call starting at ``at`` (the session clock's), or ``None`` when tracing is off."""
    if tracing is None:
        return None
    attributes = {"session.id": session, "call.wire": wire_name(wire), "call.tenant": tenant}
    trace = tracing.call(epoch_ns(at), attributes | {"call.language": language, "call.voice": voice})
    return CallTracer(trace, tracing.content)


class CallTracer:
    """Follows one call's events into its ``trace``. ``content``: spans also hold what was said."""

    def __init__(
        self, trace: CallTrace, content: bool, clock: Callable[[], float] = time.perf_counter, to_ns: ToNs = epoch_ns
    ) -> None:
        self._trace = trace
        self._content = content
        self._clock = clock
        self._to_ns = to_ns
        self._events: dict[int, list[SpanEvent]] = {}
        self._said: dict[int, dict[str, AttributeValue]] = {}
        self._arguments: dict[int, list[tuple[str, str]]] = {}
        self._turns = 0

    def turn_context(self, turn: int) -> AbstractContextManager[None]:
        """Enter while starting turn ``turn``'s tasks: their requests carry its trace context."""
        return self._trace.turn_context(turn)

    def tool_called(self, turn: int, call: ToolCall) -> None:
        """A server tool's call: its arguments go into its span if content is opted in."""
        if self._content:
            self._arguments.setdefault(turn, []).append((call.name, call.arguments))

    def event(self, event: ServerEvent) -> None:
        """A server event on its way to the client."""
        if isinstance(event, TurnMetrics):
            self._finished(event)
        elif isinstance(event, PlaybackClear):
            self._note(event.turn, "barge_in", {})
        elif isinstance(event, PlaybackPause):
            self._note(event.turn, "pause", {"played_ms": event.played_ms})
        elif isinstance(event, ErrorNotice) and event.turn is not None:
            self._note(event.turn, "error", {"error.code": event.code})
        elif isinstance(event, TranscriptText):
            if event.continues is not None:
                self._note(event.turn, "continued", {"turn.continues": event.continues})
            self._said.setdefault(event.turn, {})["turn.language"] = event.language
            if self._content:
                self._said[event.turn]["turn.transcript"] = event.text
        elif isinstance(event, ReplyText) and event.done and self._content:
            self._said.setdefault(event.turn, {})["turn.reply"] = event.text

    def outcome(self, effect: PreemptionOutcome | YieldOutcome) -> None:
        if isinstance(effect, YieldOutcome):
            self._note(effect.turn, "resume" if effect.resumed else "yield.interrupted", {})
        else:
            self._note(effect.turn, "preemption", {"hit": effect.hit, "synthesized_ms": effect.synthesized_ms})

    def end(self, attributes: Attributes) -> None:
        """The call is over (its root span ends now)."""
        self._trace.end(self._to_ns(self._clock()), {"call.turns": self._turns, **attributes})

    def _note(self, turn: int, name: str, attributes: Attributes) -> None:
        self._events.setdefault(turn, []).append(SpanEvent(name, self._to_ns(self._clock()), attributes))

    def _finished(self, m: TurnMetrics) -> None:
        events = tuple(self._events.pop(m.turn, ()))
        said = self._said.pop(m.turn, {})
        calls = self._arguments.pop(m.turn, [])
        span = turn_span(m, self._to_ns, events, said)
        if span is None:
            return
        if calls:
            span = _with_arguments(span, calls)
        self._turns += 1
        self._trace.turn(m.turn, span)


def _with_arguments(span: SpanRecord, calls: list[tuple[str, str]]) -> SpanRecord:
    """``span`` whose tool spans hold their call's arguments (matched by name, in order)."""
    children = []
    for child in span.children:
        name = child.attributes.get("tool.name")
        match = next((i for i, (called, _) in enumerate(calls) if called == name), None)
        if child.name == "tool" and match is not None:
            child = SpanRecord(
                child.name, child.start_ns, child.end_ns, {**child.attributes, "tool.arguments": calls.pop(match)[1]}
            )
        children.append(child)
    return SpanRecord(span.name, span.start_ns, span.end_ns, span.attributes, span.events, tuple(children))
