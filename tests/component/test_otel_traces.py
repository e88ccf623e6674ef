"""The OpenTelemetry adapter over the real SDK, exporting to its in-memory exporter: spans keep the times they are
given, a turn's span has the id its outgoing requests named as their parent, and botocore requests carry it."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent.adapters import trace_context
from agent.adapters.otel_traces import OtelTracing, traces_url
from agent.config import TracingSettings
from agent.traces import SpanEvent, SpanRecord


class Prepared:
    """What botocore's ``before-send`` hands a handler: a request with mutable headers."""

    def __init__(self) -> None:
        self.headers: dict[str, str] = {"Authorization": "AWS4-HMAC-SHA256 ..."}


def test_a_turns_span_is_the_parent_its_requests_named() -> None:
    exporter = InMemorySpanExporter()
    tracing = OtelTracing(TracingSettings(endpoint="http://127.0.0.1:9", service_name="test"), exporter)
    call = tracing.call(1_000, {"call.wire": "browser"})
    assert trace_context.headers() == {}  # no span is current outside a turn's context
    with call.turn_context(1):
        parent = trace_context.headers()["traceparent"]
        botocore = Prepared()
        trace_context.on_botocore_send(botocore, event_name="before-send.sagemaker-runtime.InvokeEndpoint")
    assert botocore.headers["traceparent"] == parent
    stage = SpanRecord("llm", 2_000, 3_000, {"llm.first_token_ms": 0.5}, (SpanEvent("first_token", 2_500, {}),))
    call.turn(1, SpanRecord("turn", 1_500, 4_000, {"turn.number": 1}, (), (stage,)))
    call.event(SpanEvent("drain", 4_500, {}))
    call.end(5_000, {"call.turns": 1})
    call.turn(2, SpanRecord("turn", 6_000, 7_000, {}))  # after the end: dropped
    tracing.span(SpanRecord("upgrade.refused", 8_000, 8_000, {"refusal.reason": "full"}))
    assert tracing.force_flush()
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert set(spans) == {"call", "turn", "llm", "upgrade.refused"}
    root, turn, llm = spans["call"], spans["turn"], spans["llm"]
    _, trace_id, span_id, _ = parent.split("-")
    assert root.context is not None and turn.context is not None and llm.context is not None
    assert f"{root.context.trace_id:032x}" == trace_id and f"{turn.context.span_id:016x}" == span_id
    assert turn.parent is not None and turn.parent.span_id == root.context.span_id
    assert llm.parent is not None and llm.parent.span_id == turn.context.span_id
    assert (root.start_time, root.end_time, turn.start_time, turn.end_time) == (1_000, 5_000, 1_500, 4_000)
    assert (llm.start_time, llm.end_time) == (2_000, 3_000)
    assert [(e.name, e.timestamp) for e in llm.events] == [("first_token", 2_500)]
    assert [(e.name, e.timestamp) for e in root.events] == [("drain", 4_500)]
    assert dict(root.attributes or {}) == {"call.wire": "browser", "call.turns": 1}
    refused = spans["upgrade.refused"]
    assert refused.parent is None and refused.context is not None and refused.context.trace_id != root.context.trace_id
    assert refused.resource.attributes["service.name"] == "test"
    tracing.close()


def test_spans_go_to_the_traces_endpoint_else_the_endpoints_v1_traces() -> None:
    assert traces_url(TracingSettings(endpoint="http://collector:4318/")) == "http://collector:4318/v1/traces"
    own = TracingSettings(endpoint="http://a:4318", traces_endpoint="http://b:9999/traces")
    assert traces_url(own) == "http://b:9999/traces"


def test_botocore_clients_get_the_handler_once_tracing_is_on() -> None:
    OtelTracing(TracingSettings(endpoint="http://127.0.0.1:9"), InMemorySpanExporter()).close()
    registered: list[tuple[str, Any]] = []

    class Events:
        def register(self, name: str, handler: Any) -> None:
            registered.append((name, handler))

    class Meta:
        events = Events()

    class Client:
        meta = Meta()

    trace_context.register(Client())
    assert registered == [("before-send", trace_context.on_botocore_send)]
