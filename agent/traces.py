"""A trace as data, and the port that exports it (``Tracing``): what the runtime draws, what an adapter sends.

Reason to change: what a span can say. Spans are built whole, after the fact, from instants already measured
(``agent.runtime.call.tracing``: the same instants a turn's figures are differences of), so they carry their own
start and end; times are nanoseconds since the Unix epoch, as OpenTelemetry's. The adapter
(``agent.adapters.otel_traces``) is the only code that knows OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

AttributeValue = str | bool | int | float
Attributes = Mapping[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """Something that happened at one instant of a span (a barge-in, the model's first token)."""

    name: str
    at_ns: int
    attributes: Attributes


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """A finished span and its children (each within it)."""

    name: str
    start_ns: int
    end_ns: int
    attributes: Attributes
    events: tuple[SpanEvent, ...] = ()
    children: tuple[SpanRecord, ...] = ()


class CallTrace(Protocol):
    """One call's trace: its root span ``call`` is open from ``Tracing.call`` to ``end``."""

    def turn_context(self, turn: int) -> AbstractContextManager[None]:
        """While entered, the tasks started for turn ``turn`` make their outgoing HTTP requests as children of
        that turn's span (W3C ``traceparent``), the span ``turn`` records later."""
        ...

    def turn(self, turn: int, span: SpanRecord) -> None:
        """Turn ``turn``'s finished span (with its stages as children), under the call's root span."""
        ...

    def event(self, event: SpanEvent) -> None:
        """An event of the call itself (not of one turn), on the root span."""
        ...

    def end(self, at_ns: int, attributes: Attributes) -> None:
        """The call is over: its root span ends at ``at_ns`` with ``attributes`` added. Nothing is recorded after."""
        ...


class Tracing(Protocol):
    """Exports traces (OTLP) in the background; never raises to its caller, never waits on the collector."""

    @property
    def content(self) -> bool:
        """Spans may hold what was said (transcripts, reply text, tool arguments): the operator opted in."""
        ...

    def call(self, start_ns: int, attributes: Attributes) -> CallTrace:
        """A new trace for one call, its root span starting at ``start_ns``."""
        ...

    def span(self, span: SpanRecord) -> None:
        """A span of its own trace (a refused upgrade: no call came of it)."""
        ...

    def close(self) -> None:
        """Export what is pending and stop (blocking, bounded by the exporter's timeout): at the server's exit."""
        ...
