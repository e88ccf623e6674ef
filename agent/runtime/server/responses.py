"""Plain HTTP answers given during the handshake phase: JSON bodies, 405, HEAD, and the safe headers.

websockets parses every request line (any method) and hands it to ``process_request``; a request with a
body (``Content-Length`` other than 0, or ``Transfer-Encoding``) never gets that far: websockets closes the
connection without an answer, which is the right outcome for a server that accepts no bodies.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from websockets.datastructures import Headers
from websockets.http11 import Response

READ_METHODS = ("GET", "HEAD")
ALLOW_READ = "GET, HEAD"

SAFE_HEADERS: tuple[tuple[str, str], ...] = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
)
"""Sent with every HTTP answer: no MIME sniffing, no referrer, not readable by other origins' pages."""


def secured(headers: Headers) -> Headers:
    for name, value in SAFE_HEADERS:
        if name not in headers:
            headers[name] = value
    return headers


def json_response(status: HTTPStatus, body: dict[str, object], extra: dict[str, str] | None = None) -> Response:
    data = json.dumps(body).encode()
    headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    headers["Cache-Control"] = "no-store"
    for name, value in (extra or {}).items():
        headers[name] = value
    return Response(status.value, status.phrase, secured(headers), data)


def method_not_allowed(method: str, allow: str = ALLOW_READ) -> Response:
    """405 with ``Allow`` (RFC 9110): the route exists, but not for this method."""
    shown = method if method.isascii() and method.isprintable() and len(method) <= 16 else "this method"
    return json_response(
        HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{shown} not allowed", "allow": allow}, {"Allow": allow}
    )


def for_method(method: str, response: Response) -> Response:
    """``HEAD`` gets the same status and headers (``Content-Length`` included) without the body."""
    if method != "HEAD":
        return response
    return Response(response.status_code, response.reason_phrase, response.headers, b"")


def single_header(headers: Headers, name: str) -> str | None:
    """The header's only value, ``None`` when absent; ``ValueError`` when it is repeated (ambiguous)."""
    values = headers.get_all(name)
    if len(values) > 1:
        raise ValueError(f"{name} header repeated")
    return values[0] if values else None
