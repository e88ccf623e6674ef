"""Who may open a WebSocket: the checks made on the upgrade request, before any handler runs.

Its one reason to change is the order of the checks and what every endpoint shares. In order: the method (GET
only, else 405), the browser ``Origin`` (a foreign one gets 403, see ``agent.config.origins``), then the
endpoint's own credential check (``Endpoint.check`` in ``agent.wires.endpoints``), which reads the
``Authorization: Bearer`` header as parsed here. Protocol v1 (``deferred``) does not refuse a bad header at the
upgrade: the connection opens, answers ``error`` ``unauthorized`` and closes 1008 (the protocol's own way to
explain); a missing one leaves the ``token`` in ``session.start`` to decide. A protocol with no such message
(the phone gateways, OpenAI Realtime) decides here, in its own ``credential`` module.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

from websockets.http11 import Request, Response

from agent.config import Settings
from agent.config.origins import OriginPolicy
from agent.errors import ProtocolError
from agent.runtime.server.responses import json_response, method_not_allowed, single_header
from agent.security.auth import Authenticator, Principal

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Admission:
    """The gate's verdict: a ``refusal`` to send, or the caller (``principal`` or a deferred ``error``)."""

    refusal: Response | None = None
    principal: Principal | None = None
    error: ProtocolError | None = None
    provider: bool = False
    """A phone provider's own credential checked out: many callers come from its few addresses, so only the
    total bound of sockets opening applies, not the bound per address."""


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


def _shown(value: str) -> str:
    """A client's header value as it may appear in a log line."""
    return repr(value[:80])


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
            return Admission(refusal=method_not_allowed(request.method, "GET"))
        try:
            origin = single_header(request.headers, "Origin")
        except ValueError:
            origin = ""  # two Origin headers: no browser sends that
        if not self._origins.allows(origin, local_address):
            log.info("refused a %s upgrade from origin %s (not in the allowlist)", path, _shown(origin or ""))
            body: dict[str, object] = {
                "error": "origin not allowed",
                "message": "this page's origin may not use the server; see AGENT_SERVER__ALLOWED_ORIGINS",
            }
            return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, body))
        principal: Principal | None = None
        error: ProtocolError | None = None
        try:
            principal = self._auth.from_header(single_header(request.headers, "Authorization"))
        except ValueError:
            error = ProtocolError("unauthorized", "Authorization header repeated")
        except ProtocolError as exc:
            error = exc
        return check(Upgrade(request, path, self._settings, principal, error, self._clock()))
