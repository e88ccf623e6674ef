"""A refused upgrade as a span (``upgrade.refused``): what its log line says, as attributes (pure).

Reason to change: what a trace shows of a refusal. ``agent.front_door.routes`` logs each refused upgrade with the
counts behind the decision (``ServerState.figures``: ``sessions=3/100 opening=1/64 ... draining``); while tracing
is on the same refusal is also a zero-length span of its own trace, its attributes read from that same text, so
the span and the log line cannot disagree.
"""

from __future__ import annotations

from agent.traces import AttributeValue, SpanRecord


def figure_attributes(figures: str) -> dict[str, AttributeValue]:
    """``ServerState.figures``' text as attributes: ``name=n/bound`` gives ``refusal.name`` (and
    ``refusal.name_bound`` unless ``-``), ``name=word`` ``refusal.name``, a lone word ``refusal.word`` true."""
    found: dict[str, AttributeValue] = {}
    for part in figures.split():
        name, _, value = part.partition("=")
        key = f"refusal.{name}"
        if not value:
            found[key] = True
            continue
        count, _, bound = value.partition("/")
        found[key] = int(count) if count.isdigit() else count
        if bound.isdigit():
            found[f"{key}_bound"] = int(bound)
    return found


def refusal_span(
    at_ns: int, path: str, peer: str, reason: str, status: int, detail: str, figures: str, tenant: str | None
) -> SpanRecord:
    """The span of an upgrade to ``path`` from ``peer`` refused at ``at_ns`` for ``reason`` (answered ``status``,
    ``detail``: as the log line has them). The address and tenant are ``client.address`` and ``tenant``: the
    counts take ``refusal.peer`` and ``refusal.tenant``."""
    attributes: dict[str, AttributeValue] = {
        "refusal.reason": reason,
        "http.response.status_code": status,
        "url.path": path,
        "client.address": peer,
        "refusal.detail": detail,
    }
    if tenant is not None:
        attributes["tenant"] = tenant
    return SpanRecord("upgrade.refused", at_ns, at_ns, attributes | figure_attributes(figures))
