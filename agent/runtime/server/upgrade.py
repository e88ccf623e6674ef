"""Who may open a WebSocket: the checks made on the upgrade request, before any handler runs.

Its one reason to change is the order of the checks and what every endpoint shares. In order: the method (GET
only, else 405), the handshake itself (``agent.runtime.server.handshake``: 400 or 426, before any question of
load), the browser ``Origin`` (a foreign one gets 403, see ``agent.config.origins``), then the endpoint's own
credential check (``Endpoint.check`` in ``agent.wires.endpoints``), which reads the
``Authorization: Bearer`` header as parsed here. Protocol v1 (``deferred``) does not refuse a bad header at the
upgrade: the connection opens, answers ``error`` ``unauthorized`` and closes 1008 (the protocol's own way to
explain); a missing one leaves the ``token`` in ``session.start`` to decide. A protocol with no such message
(the phone gateways, OpenAI Realtime) decides here, in its own ``credential`` module.

A refusal names its ``reason`` (``method``, ``not_websocket``, ``bad_handshake``, ``bad_version``, ``origin``,
``credential``) and what it was about (``detail``, safe for a log line); the routes log and count it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from http import HTTPStatus

from websockets.http11 import Request, Response

from agent.config import Settings
from agent.config.origins import OriginPolicy
from agent.errors import ProtocolError
from agent.runtime.server.handshake import bad_handshake
from agent.runtime.server.responses import json_response, method_not_allowed, single_header
from agent.security.auth import Authenticator, Principal
from agent.security.logsafe import shown


@dataclass(frozen=True, slots=True)
class Admission:
    """The gate's verdict: a ``refusal`` to send (and its ``reason``), or the caller (``principal`` or a deferred
    ``error``)."""

    refusal: Response | None = None
    principal: Principal | None = None
    error: ProtocolError | None = None
    provider: bool = False
    """A phone provider's own credential checked out: many callers come from its few addresses, so only the
    total bound of sockets opening applies, not the bound per address."""
    reason: str = ""
    """Why ``refusal`` is sent (``method``, ``not_websocket``, ``bad_handshake``, ``bad_version``, ``origin``,
    ``credential``); empty when none is."""
    detail: str = ""
    """What the refusal was about, for a log line (a peer's values escaped)."""


@dataclass(frozen=True, slots=True)
class Upgrade:
    """What an endpoint's credential check reads: the request, and its ``Authorization`` header as parsed."""

    request: Request
    path: str
    """The request's path, without its query (the endpoint's own)."""
    settings: Settings
    principal: Principal | None
    """The caller the header names (``None``: no header while auth is on; ``ANONYMOUS`` while auth is off)."""
    error: ProtocolError | None
    """Why the header was refused (bad, forged, expired or repeated), else ``None``."""
    now: float
    """Wall-clock seconds (the age of a signed token)."""


CredentialCheck = Callable[[Upgrade], Admission]
"""An endpoint's check of the caller, after the method and the Origin."""


def deferred(upgrade: Upgrade) -> Admission:
    """The opening decides: the header's caller, or why it was refused (answered in the protocol's words)."""
    return Admission(principal=upgrade.principal, error=upgrade.error)


class UpgradeGate:
    def __init__(self, settings: Settings, auth: Authenticator, clock: Callable[[], float] = time.time) -> None:
        """``clock``: wall-clock seconds (``Upgrade.now``)."""
        self._settings = settings
        self._auth = auth
        self._clock = clock
        self._origins = OriginPolicy(settings.server.allowed_origins, settings.server.host)

    def admit(
        self, request: Request, path: str, local_address: tuple[str, int] | None, check: CredentialCheck
    ) -> Admission:
        """The verdict on an upgrade to ``path``, whose endpoint checks credentials with ``check``."""
        if request.method != "GET":
            refused = method_not_allowed(request.method, "GET")
            return Admission(refusal=refused, reason="method", detail=f"method {shown(request.method, 16)}")
        malformed = bad_handshake(request.headers)
        if malformed is not None:
            body: dict[str, object] = {
                "error": "bad handshake",
                "reason": malformed.reason,
                "message": malformed.message,
            }
            refused = json_response(malformed.status, body, dict(malformed.headers))
            return Admission(refusal=refused, reason=malformed.reason, detail=malformed.message)
        try:
            origin = single_header(request.headers, "Origin")
        except ValueError:
            origin = ""  # two Origin headers: no browser sends that
        if not self._origins.allows(origin, local_address):
            body = {
                "error": "origin not allowed",
                "message": "this page's origin may not use the server; see AGENT_SERVER__ALLOWED_ORIGINS",
            }
            detail = f"origin {shown(origin or '', quote=True)} is not in the allowlist"
            return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, body), reason="origin", detail=detail)
        principal: Principal | None = None
        error: ProtocolError | None = None
        try:
            principal = self._auth.from_header(single_header(request.headers, "Authorization"))
        except ValueError:
            error = ProtocolError("unauthorized", "Authorization header repeated")
        except ProtocolError as exc:
            error = exc
        verdict = check(Upgrade(request, path, self._settings, principal, error, self._clock()))
        if verdict.refusal is None or verdict.reason:
            return verdict
        return replace(
            verdict, reason="credential", detail=f"the {path} credential check answered {verdict.refusal.status_code}"
        )
