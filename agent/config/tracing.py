"""Tracing's settings: OpenTelemetry's standard ``OTEL_*`` variables, and ``AGENT_TRACING__CONTENT``.

Reason to change: what turns tracing on, where its spans go, and what they may hold. Tracing is off unless
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set, and ``OTEL_SDK_DISABLED=true``
keeps it off. The ``OTEL_*`` variables are read from the process environment only (OpenTelemetry's convention),
once, with the other settings; ``AGENT_TRACING__*`` as every setting is (environment or ``--env-file``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, Field, SecretStr

OTEL_VARIABLES = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": "endpoint",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "traces_endpoint",
    "OTEL_SERVICE_NAME": "service_name",
    "OTEL_EXPORTER_OTLP_HEADERS": "headers",
    "OTEL_SDK_DISABLED": "disabled",
}
"""The standard variables read, and the field each sets."""


class TracingSettings(BaseModel):
    """Where a call's trace is exported (OTLP over HTTP/protobuf), and whether its spans may hold what was said."""

    endpoint: str = Field("", description="OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (+ /v1/traces).")
    traces_endpoint: str = Field("", description="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full URL, used as is.")
    service_name: str = Field("voice-agent", description="OTEL_SERVICE_NAME: the resource's service.name.")
    headers: SecretStr = Field(
        SecretStr(""), description="OTEL_EXPORTER_OTLP_HEADERS: key=value pairs, comma-separated, URL-encoded."
    )
    disabled: bool = Field(False, description="OTEL_SDK_DISABLED: true keeps tracing off whatever else is set.")
    content: bool = Field(
        False,
        description="AGENT_TRACING__CONTENT: spans also hold the caller's transcript, the reply text and tool "
        "arguments (off: only figures, names and outcomes).",
    )

    @property
    def configured(self) -> bool:
        """An endpoint is set (tracing is on unless ``disabled``)."""
        return bool(self.endpoint.strip() or self.traces_endpoint.strip())

    def export_headers(self) -> dict[str, str]:
        """The exporter's headers from ``headers`` (a pair without ``=`` is skipped, as the SDK does)."""
        pairs = (part.split("=", 1) for part in self.headers.get_secret_value().split(",") if "=" in part)
        return {unquote(key).strip(): unquote(value).strip() for key, value in pairs if key.strip()}


def with_otel_environment(data: Any, environ: Mapping[str, str]) -> Any:
    """The settings' input ``data`` with the ``OTEL_*`` variables of ``environ`` under ``tracing``, below what
    ``data`` gives itself (a section given whole is kept as is)."""
    if not isinstance(data, dict):
        return data
    given = data.get("tracing", {})
    if not isinstance(given, Mapping):
        return data
    found = {field: environ[name] for name, field in OTEL_VARIABLES.items() if name in environ}
    return {**data, "tracing": {**found, **given}} if found else data
