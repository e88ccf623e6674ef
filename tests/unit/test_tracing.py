"""The pure parts of tracing: a turn's spans from the instants of its figures, the refusal span's attributes, the
``OTEL_*`` settings, and what a call's tracer keeps (no event loop, no exporter: a recording ``CallTrace``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from agent.config import Settings
from agent.config.tracing import TracingSettings, with_otel_environment
from agent.core.events import (
    PlaybackClear,
    PlaybackPause,
    ReplyText,
    ToolTiming,
    TranscriptText,
    TurnInstants,
    TurnMetrics,
    YieldOutcome,
)
from agent.core.turn_detector import EndOfTurn
from agent.core.turn_state import Turn, turn_metrics
from agent.ports import ToolCall
from agent.runtime.call.tracing import CallTracer, turn_span, wire_name
from agent.runtime.server.refusal_span import figure_attributes, refusal_span
from agent.traces import Attributes, SpanEvent, SpanRecord
from agent.wiring import build_tracing


def to_ns(instant: float) -> int:
    return round(instant * 1e9)


def metrics() -> TurnMetrics:
    """A turn whose caller stopped at 10.0 s: end of turn at 10.5, transcript 10.6, first text 10.8, a tool call
    10.9-11.0, reply done 11.2, first sentence to synthesis 10.85, first audio 11.05, synthesis done 11.5."""
    at = TurnInstants(
        began_at=10.0,
        finished_at=12.0,
        last_voice_at=10.0,
        ended_at=10.5,
        spec_at=10.3,
        transcript_at=10.6,
        first_text_at=10.8,
        reply_done_at=11.2,
        first_synthesis_at=10.85,
        first_audio_at=11.05,
        speech_done_at=11.5,
    )
    tool = ToolTiming("get_time", 100.0, "ok", at=10.9)
    return TurnMetrics(
        turn=3,
        endpoint_ms=500.0,
        asr_ms=100.0,
        llm_first_text_ms=200.0,
        llm_total_ms=600.0,
        tts_first_audio_ms=200.0,
        voice_to_voice_ms=1050.0,
        utterance_ms=1400,
        reply_audio_ms=900,
        interrupted=False,
        spec_asr_ms=120.0,
        tools=(tool,),
        at=at,
    )


def test_a_turns_stages_last_what_its_figures_say() -> None:
    span = turn_span(metrics(), to_ns)
    assert span is not None and span.name == "turn"
    assert (span.start_ns, span.end_ns) == (to_ns(10.0), to_ns(12.0))
    assert [child.name for child in span.children] == [
        "end_of_turn",
        "recognition.speculative",
        "recognition",
        "llm",
        "tts",
        "tool",
    ]
    ms = {child.name: (child.end_ns - child.start_ns) / 1e6 for child in span.children}
    assert ms == pytest.approx(
        {
            "end_of_turn": 500.0,
            "recognition.speculative": 120.0,
            "recognition": 100.0,
            "llm": 600.0,
            "tts": 650.0,
            "tool": 100.0,
        }
    )
    llm = next(child for child in span.children if child.name == "llm")
    assert [e.name for e in llm.events] == ["first_token"]
    assert (llm.events[0].at_ns - llm.start_ns) / 1e6 == pytest.approx(200.0)
    tts = next(child for child in span.children if child.name == "tts")
    assert [e.name for e in tts.events] == ["first_audio"]
    assert (tts.events[0].at_ns - tts.start_ns) / 1e6 == pytest.approx(200.0)
    assert span.attributes["turn.number"] == 3 and span.attributes["turn.voice_to_voice_ms"] == 1050.0
    assert span.attributes["turn.interrupted"] is False and "turn.heard_ms" not in span.attributes


def test_a_stage_that_did_not_happen_has_no_span_and_an_unfinished_one_ends_with_the_turn() -> None:
    m = metrics()
    assert m.at is not None
    at = replace(m.at, spec_at=None, reply_done_at=None, speech_done_at=None)
    span = turn_span(replace(m, spec_asr_ms=None, interrupted=True, tools=(), at=at), to_ns)
    assert span is not None
    names = {child.name: child for child in span.children}
    assert "recognition.speculative" not in names and "tool" not in names
    assert names["llm"].end_ns == names["tts"].end_ns == to_ns(12.0)
    assert names["llm"].attributes["llm.done"] is False
    assert turn_span(replace(m, at=None), to_ns) is None  # figures with no instants (built by hand): no span


def test_a_tool_the_client_runs_is_not_named_in_the_trace() -> None:
    m = replace(metrics(), tools=(ToolTiming("lookup_my_account", 50.0, "ok", client=True, at=10.9),))
    span = turn_span(m, to_ns)
    assert span is not None
    (tool,) = (child for child in span.children if child.name == "tool")
    assert tool.attributes["tool.name"] == "client" and tool.attributes["tool.client"] is True
    assert (tool.end_ns - tool.start_ns) / 1e6 == pytest.approx(50.0)


def test_the_core_hands_over_the_instants_its_figures_come_from() -> None:
    end = EndOfTurn(b"", 800, 1000, 1000, "silence", spec_ms=120.0, spec_at=10.3)
    turn = Turn(3, 1000, last_voice_at=10.0, ended_at=10.5, heard=end, began_at=10.6)
    turn.transcript_at, turn.first_text_at, turn.reply_done_at = 10.6, 10.8, 11.2
    turn.first_synthesis_at, turn.first_audio_at, turn.speech_done_at = 10.85, 11.05, 11.5
    m = turn_metrics(turn, False, None, now=12.0)
    assert m.at == TurnInstants(10.0, 12.0, 10.0, 10.5, 10.3, 10.6, 10.8, 11.2, 10.85, 11.05, 11.5)
    assert m.endpoint_ms == 500.0 and m.spec_asr_ms == 120.0
    assert m == replace(m, at=None)  # the instants are not part of the figures' equality (no wire sends them)


def test_a_preemptive_turns_stages_start_at_its_end_of_turn_as_its_figures_do() -> None:
    turn = Turn(1, 1000, last_voice_at=10.0, ended_at=10.5, preemptive=True, began_at=10.2)
    turn.transcript_at, turn.first_text_at, turn.reply_done_at = 10.2, 10.3, 10.4
    turn.first_synthesis_at, turn.first_audio_at = 10.35, 10.6
    m = turn_metrics(turn, False, None, now=11.0)
    assert m.at is not None and m.at.transcript_at == m.at.reply_done_at == 10.5
    span = turn_span(m, to_ns)
    assert span is not None
    names = {child.name: child for child in span.children}
    assert (names["llm"].end_ns - names["llm"].start_ns) / 1e6 == m.llm_total_ms == 0.0
    assert (names["recognition"].end_ns - names["recognition"].start_ns) / 1e6 == m.asr_ms == 0.0


def test_a_prepared_reply_synthesised_before_the_end_of_turn_has_a_tts_span_that_ends_after_it_starts() -> None:
    # With 500 ms of silence before the end of turn, a short prepared reply is all synthesised in the pause.
    turn = Turn(1, 1000, last_voice_at=10.0, ended_at=10.5, preemptive=True, began_at=10.2)
    turn.transcript_at, turn.first_text_at, turn.reply_done_at = 10.15, 10.2, 10.25
    turn.first_synthesis_at, turn.speech_done_at, turn.first_audio_at = 10.25, 10.4, 10.51
    m = turn_metrics(turn, False, None, now=11.0)
    span = turn_span(m, to_ns)
    assert span is not None
    tts = next(child for child in span.children if child.name == "tts")
    assert tts.start_ns == tts.end_ns == to_ns(10.5)  # nothing of it was left to do when the turn ended


class Recorded:
    """A ``CallTrace`` that keeps what it is given."""

    def __init__(self) -> None:
        self.turns: list[tuple[int, SpanRecord]] = []
        self.entered: list[int] = []
        self.ended: tuple[int, Attributes] | None = None

    @contextmanager
    def turn_context(self, turn: int) -> Iterator[None]:
        self.entered.append(turn)
        yield

    def turn(self, turn: int, span: SpanRecord) -> None:
        self.turns.append((turn, span))

    def event(self, event: SpanEvent) -> None:
        raise AssertionError("no call-level events here")

    def end(self, at_ns: int, attributes: Attributes) -> None:
        self.ended = (at_ns, attributes)


def test_barge_in_and_resume_are_events_of_their_turn_and_nothing_said_is_kept_by_default() -> None:
    trace, now = Recorded(), [20.0]
    tracer = CallTracer(trace, content=False, clock=lambda: now[0], to_ns=to_ns)
    tracer.event(TranscriptText(3, "what time is it", language="en"))
    tracer.tool_called(3, ToolCall("c1", "get_time", '{"zone": "UTC"}'))
    now[0] = 20.5
    tracer.event(PlaybackPause(3, played_ms=300))
    now[0] = 20.7
    tracer.outcome(YieldOutcome(3, resumed=True))
    now[0] = 21.0
    tracer.event(PlaybackClear(3))
    tracer.event(ReplyText(3, "It is noon.", done=True))
    tracer.event(metrics())
    now[0] = 22.0
    tracer.end({"call.language": "en"})
    ((number, span),) = trace.turns
    assert number == 3
    assert [(e.name, e.at_ns) for e in span.events] == [
        ("pause", to_ns(20.5)),
        ("resume", to_ns(20.7)),
        ("barge_in", to_ns(21.0)),
    ]
    assert span.attributes["turn.language"] == "en"
    everything = [*span.attributes.values(), *(v for c in span.children for v in c.attributes.values())]
    assert not any(isinstance(v, str) and ("time is it" in v or "noon" in v or "UTC" in v) for v in everything)
    assert trace.ended == (to_ns(22.0), {"call.turns": 1, "call.language": "en"})


def test_with_content_opted_in_the_turn_holds_what_was_said_and_the_tool_its_arguments() -> None:
    trace = Recorded()
    tracer = CallTracer(trace, content=True, clock=lambda: 20.0, to_ns=to_ns)
    tracer.event(TranscriptText(3, "what time is it", language="en"))
    tracer.tool_called(3, ToolCall("c1", "get_time", '{"zone": "UTC"}'))
    tracer.event(ReplyText(3, "It is noon.", done=True))
    tracer.event(metrics())
    ((_, span),) = trace.turns
    assert span.attributes["turn.transcript"] == "what time is it" and span.attributes["turn.reply"] == "It is noon."
    tool = next(child for child in span.children if child.name == "tool")
    assert tool.attributes["tool.arguments"] == '{"zone": "UTC"}'
    with tracer.turn_context(4):
        pass
    assert trace.entered == [4]


def test_the_wire_is_named_by_its_package() -> None:
    class BrowserWire:
        pass

    BrowserWire.__module__ = "agent.wires.browser.wire"
    assert wire_name(BrowserWire()) == "browser"
    BrowserWire.__module__ = "agent.wires.phone.twilio.gateway"
    assert wire_name(BrowserWire()) == "phone.twilio"


def test_a_refusal_span_reads_the_counts_of_its_log_line() -> None:
    figures = "sessions=3/100 opening=1/64 anonymous=1/8 peer=1/- speaking=0 first_audio_wait_ms=0/- models=loading "
    figures += "draining"
    assert figure_attributes(figures) == {
        "refusal.sessions": 3,
        "refusal.sessions_bound": 100,
        "refusal.opening": 1,
        "refusal.opening_bound": 64,
        "refusal.anonymous": 1,
        "refusal.anonymous_bound": 8,
        "refusal.peer": 1,
        "refusal.speaking": 0,
        "refusal.first_audio_wait_ms": 0,
        "refusal.models": "loading",
        "refusal.draining": True,
    }
    span = refusal_span(5, "/ws", "10.0.0.1", "full", 503, "the server is full", "sessions=3/3", "acme")
    assert (span.name, span.start_ns, span.end_ns) == ("upgrade.refused", 5, 5)
    assert span.attributes == {
        "refusal.reason": "full",
        "http.response.status_code": 503,
        "url.path": "/ws",
        "client.address": "10.0.0.1",
        "refusal.detail": "the server is full",
        "tenant": "acme",
        "refusal.sessions": 3,
        "refusal.sessions_bound": 3,
    }


def test_tracing_is_off_unless_an_otlp_endpoint_is_set() -> None:
    assert not TracingSettings().configured and not TracingSettings(endpoint=" ").configured
    assert TracingSettings(endpoint="http://collector:4318/").configured
    assert TracingSettings(traces_endpoint="http://b:9999/traces").configured
    assert build_tracing(Settings(tracing=TracingSettings())) is None
    off = TracingSettings(endpoint="http://collector:4318", disabled=True)
    assert build_tracing(Settings(tracing=off)) is None
    headers = TracingSettings(headers="api-key=s%3Dcret, x-team = voice ,broken")
    assert headers.export_headers() == {"api-key": "s=cret", "x-team": "voice"}


def test_the_standard_variables_fill_the_tracing_section_below_what_is_given() -> None:
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "agents", "OTHER": "x"}
    assert with_otel_environment({}, environ) == {"tracing": {"endpoint": "http://c:4318", "service_name": "agents"}}
    given = {"tracing": {"service_name": "mine", "content": True}}
    assert with_otel_environment(given, environ)["tracing"] == {
        "endpoint": "http://c:4318",
        "service_name": "mine",
        "content": True,
    }
    assert with_otel_environment({}, {}) == {}


def test_settings_read_the_standard_variables_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20t")
    monkeypatch.setenv("AGENT_TRACING__CONTENT", "true")
    tracing = Settings().tracing
    assert tracing.configured and tracing.content
    assert tracing.export_headers() == {"authorization": "Bearer t"}
    assert "Bearer" not in repr(tracing)  # the headers may hold a credential
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    assert not Settings().tracing.configured
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert Settings().tracing.configured and Settings().tracing.disabled
