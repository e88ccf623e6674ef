"""Who may open a WebSocket: the checks made on the upgrade request, before any handler runs.

In order: the method (GET only, else 405), the browser ``Origin`` (a foreign one gets 403, see
``agent.origins``), then the credentials. On ``/ws`` a bad ``Authorization`` header does not refuse the
upgrade: the connection opens, answers ``error`` ``unauthorized`` and closes 1008 (the protocol's own way
to explain); a missing one leaves the ``token`` in ``session.start`` to decide. ``/twilio`` has no such
message, so it is decided here: a valid ``X-Twilio-Signature`` when a Twilio token is configured, else a
bearer token with the ``call`` scope when auth is on (HTTP 403/401 otherwise).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from http import HTTPStatus

from websockets.http11 import Request, Response

from agent.auth import TWILIO_CALLER, Authenticator, Principal
from agent.config import Settings
from agent.errors import ProtocolError
from agent.origins import OriginPolicy
from agent.runtime.responses import json_response, method_not_allowed, single_header
from agent.transport import twilio

log = logging.getLogger(__name__)

TWILIO_PATH = "/twilio"


@dataclass(frozen=True, slots=True)
class Admission:
    """The gate's verdict: a ``refusal`` to send, or the caller (``principal`` or a deferred ``error``)."""

    refusal: Response | None = None
    principal: Principal | None = None
    error: ProtocolError | None = None


def _shown(value: str) -> str:
    return repr(value[:80])


class UpgradeGate:
    def __init__(self, settings: Settings, auth: Authenticator) -> None:
        self._settings = settings
        self._auth = auth
        self._origins = OriginPolicy(settings.server.allowed_origins, settings.server.host)

    def admit(self, request: Request, path: str, local_address: tuple[str, int] | None) -> Admission:
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
        if path == TWILIO_PATH:
            return self._twilio(request, principal, error)
        return Admission(principal=principal, error=error)

    def _twilio(self, request: Request, principal: Principal | None, error: ProtocolError | None) -> Admission:
        token = self._settings.twilio.auth_token
        if token is not None:
            if not self._twilio_signed(token.get_secret_value(), request):
                log.warning("refused a /twilio handshake: bad or missing X-Twilio-Signature")
                return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, {"error": "invalid X-Twilio-Signature"}))
            return Admission(principal=TWILIO_CALLER)
        if error is not None or principal is None:
            reason = error.message if error is not None else "a bearer token is required"
            log.warning("refused a /twilio handshake: %s", reason)
            body: dict[str, object] = {"error": "unauthorized", "message": reason}
            return Admission(refusal=json_response(HTTPStatus.UNAUTHORIZED, body, {"WWW-Authenticate": "Bearer"}))
        if not principal.allows("call"):
            body = {"error": "forbidden", "message": "the token lacks the call scope"}
            return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, body))
        return Admission(principal=principal)

    def _twilio_signed(self, token: str, request: Request) -> bool:
        """The signature matches the public URL Twilio called (``public_url``, else ``wss://Host/twilio``)."""
        try:
            host = single_header(request.headers, "Host") or ""
            signature = single_header(request.headers, "X-Twilio-Signature")
        except ValueError:
            return False
        url = self._settings.twilio.public_url or f"wss://{host}{TWILIO_PATH}"
        return twilio.valid_signature(token, url, signature)
