"""W3C trace context (``traceparent``) on the HTTP requests a turn makes, while tracing is on.

Reason to change: how an outgoing request carries its trace. The OpenTelemetry adapter turns it on
(``enable``, once, when the server traces); until then every function here returns at once and nothing of
OpenTelemetry is imported. The context is the calling task's (``contextvars``): the runtime starts a turn's tasks
inside that turn's context (``agent.traces.CallTrace.turn_context``), so the model, voice and tool requests they
make name the turn's span as their parent. The OpenAI-compatible model and the HTTP tools add ``headers()`` to
their request; the botocore clients (Bedrock, SageMaker) get ``on_botocore_send`` for ``before-send``; the MCP
transport calls ``inject`` on its request's headers.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

_inject: Callable[[MutableMapping[str, str]], None] | None = None


def enable() -> None:
    """Outgoing requests carry the current trace context from now on (the process's; idempotent)."""
    global _inject
    from opentelemetry import propagate

    _inject = propagate.inject


def inject(headers: MutableMapping[str, str]) -> None:
    """Add ``traceparent`` (and ``tracestate``) for the current span to ``headers``; nothing when tracing is off
    or no span is current."""
    if _inject is not None:
        _inject(headers)


def headers() -> dict[str, str]:
    """The trace context headers of the current span (empty when tracing is off)."""
    found: dict[str, str] = {}
    inject(found)
    return found


def on_botocore_send(request: Any, **_: Any) -> None:
    """botocore's ``before-send`` handler: the signed request gets the trace context (not signed, not needed by
    AWS; X-Ray's own header is left alone). Returns nothing, so the request is sent as usual."""
    if _inject is not None:
        _inject(request.headers)


def register(client: Any) -> None:
    """Make every request of a botocore (aiobotocore) ``client`` carry the trace context (nothing while tracing
    is off: a client is made on its first use, after the server's tracing is set up)."""
    if _inject is not None:
        client.meta.events.register("before-send", on_botocore_send)
