"""OpenTelemetry's SDK behind ``agent.traces.Tracing``: spans exported over OTLP (HTTP/protobuf) in batches.

Reason to change: how spans reach a collector. Built only when tracing is on (``TracingSettings.enabled``): one
``TracerProvider`` of the process's own (the global one is left alone), a ``BatchSpanProcessor`` (a background
thread; a slow or absent collector never delays a call: spans beyond its queue are dropped by the SDK) and the
OTLP HTTP exporter. Spans come whole with their own times (``SpanRecord``), so they are started and ended here
at once with explicit ``start_time``/``end_time``. A turn's outgoing requests are sent while the turn is still
going, before its span exists: ``turn_context`` names a span id chosen then, and the turn's span is given that
id when it is recorded (``_Ids``), so the model's, the voice's and the tools' spans are its children.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from agent.adapters import trace_context
from agent.config import TracingSettings
from agent.traces import Attributes, SpanEvent, SpanRecord

log = logging.getLogger(__name__)
SCOPE = "voice-agent"
"""The instrumentation scope of every span."""


class _Ids(RandomIdGenerator):
    """Random ids, except the span id reserved for the next span started (by the one thread that starts spans:
    the event loop's)."""

    def __init__(self) -> None:
        self._next: int | None = None

    def reserve(self, span_id: int) -> None:
        self._next = span_id

    def generate_span_id(self) -> int:
        reserved, self._next = self._next, None
        return reserved if reserved is not None else super().generate_span_id()


def traces_url(settings: TracingSettings) -> str:
    """Where spans are posted: the traces endpoint as given, else the endpoint's ``/v1/traces`` (the OTLP rule)."""
    if settings.traces_endpoint.strip():
        return settings.traces_endpoint.strip()
    return settings.endpoint.strip().rstrip("/") + "/v1/traces"


class OtelTracing:
    """``agent.traces.Tracing`` over the SDK. ``exporter``: where spans go (default: OTLP HTTP to the settings'
    URL, with their headers)."""

    def __init__(self, settings: TracingSettings, exporter: SpanExporter | None = None) -> None:
        self._ids = _Ids()
        resource = Resource.create({SERVICE_NAME: settings.service_name})
        self._provider = TracerProvider(resource=resource, id_generator=self._ids, shutdown_on_exit=False)
        url = traces_url(settings)
        if exporter is None:
            exporter = OTLPSpanExporter(endpoint=url, headers=settings.export_headers())
        self._provider.add_span_processor(BatchSpanProcessor(exporter))
        self._tracer = self._provider.get_tracer(SCOPE)
        self._content = settings.content
        trace_context.enable()
        log.info("tracing on: spans go to %s (OTLP over HTTP)", url)

    @property
    def content(self) -> bool:
        return self._content

    def call(self, start_ns: int, attributes: Attributes) -> _CallTrace:
        root = self._tracer.start_span("call", attributes=attributes, start_time=start_ns)
        return _CallTrace(self, root)

    def span(self, span: SpanRecord) -> None:
        self.record(span, None)

    def record(self, record: SpanRecord, parent: otel_context.Context | None, span_id: int | None = None) -> None:
        """Start and end ``record`` (and its children) under ``parent``; ``span_id``: the id it must have."""
        if span_id is not None:
            self._ids.reserve(span_id)
        span = self._tracer.start_span(
            record.name, context=parent, attributes=record.attributes, start_time=record.start_ns
        )
        for event in record.events:
            span.add_event(event.name, event.attributes, timestamp=event.at_ns)
        inside = trace.set_span_in_context(span)
        for child in record.children:
            self.record(child, inside)
        span.end(end_time=record.end_ns)

    def new_span_id(self) -> int:
        return self._ids.generate_span_id()

    def force_flush(self) -> bool:
        """Export every span ended so far (blocking): for a test, or before a planned stop."""
        return self._provider.force_flush()

    def close(self) -> None:
        self._provider.shutdown()


class _CallTrace:
    """One call's trace (``agent.traces.CallTrace``), its root span open until ``end``."""

    def __init__(self, tracing: OtelTracing, root: trace.Span) -> None:
        self._tracing = tracing
        self._root = root
        self._inside = trace.set_span_in_context(root)
        self._turns: dict[int, int] = {}  # the span id each turn's requests named, until the turn is recorded
        self._ended = False

    @contextlib.contextmanager
    def turn_context(self, turn: int) -> Iterator[None]:
        span_id = self._turns.get(turn)
        if span_id is None:
            span_id = self._turns[turn] = self._tracing.new_span_id()
        root = self._root.get_span_context()
        parent = trace.NonRecordingSpan(
            trace.SpanContext(root.trace_id, span_id, is_remote=False, trace_flags=root.trace_flags)
        )
        token = otel_context.attach(trace.set_span_in_context(parent))
        try:
            yield
        finally:
            otel_context.detach(token)

    def turn(self, turn: int, span: SpanRecord) -> None:
        if not self._ended:
            self._tracing.record(span, self._inside, self._turns.pop(turn, None))

    def event(self, event: SpanEvent) -> None:
        if not self._ended:
            self._root.add_event(event.name, event.attributes, timestamp=event.at_ns)

    def end(self, at_ns: int, attributes: Attributes) -> None:
        if self._ended:
            return
        self._ended = True
        self._turns.clear()
        self._root.set_attributes(attributes)
        self._root.end(end_time=at_ns)
