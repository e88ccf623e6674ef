"""Who may open a WebSocket: the checks made on the upgrade request, before any handler runs.

In order: the method (GET only, else 405), the browser ``Origin`` (a foreign one gets 403, see
``agent.security.origins``), then the credentials. On ``/ws`` a bad ``Authorization`` header does not refuse the
upgrade: the connection opens, answers ``error`` ``unauthorized`` and closes 1008 (the protocol's own way
to explain); a missing one leaves the ``token`` in ``session.start`` to decide. The phone gateways
(``/twilio``, ``/telnyx``, ``/vonage``) have no such message, so it is decided here: the provider's credential
when one is configured (a valid ``X-Twilio-Signature``; Telnyx's ``stream_auth_token``; Vonage's signed JWT or
custom ``Authorization``), else a bearer token with the ``call`` scope when auth is on (HTTP 403/401 otherwise).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from websockets.http11 import Request, Response

from agent.config import Settings
from agent.errors import ProtocolError
from agent.runtime.server.responses import json_response, method_not_allowed, single_header
from agent.security.auth import DEFAULT_TENANT, TWILIO_CALLER, Authenticator, Principal
from agent.security.origins import OriginPolicy
from agent.wires.phone.telnyx import codec as telnyx
from agent.wires.phone.twilio import codec as twilio
from agent.wires.phone.vonage import codec as vonage

log = logging.getLogger(__name__)

TWILIO_PATH = "/twilio"
TELNYX_PATH = "/telnyx"
VONAGE_PATH = "/vonage"
GATEWAY_CALLERS: dict[str, Principal] = {
    TWILIO_PATH: TWILIO_CALLER,
    TELNYX_PATH: Principal(tenant=DEFAULT_TENANT, scopes=frozenset({"call"}), subject="telnyx"),
    VONAGE_PATH: Principal(tenant=DEFAULT_TENANT, scopes=frozenset({"call"}), subject="vonage"),
}
"""The phone gateways' paths, and who a call is once its provider's credential checked out."""


@dataclass(frozen=True, slots=True)
class Admission:
    """The gate's verdict: a ``refusal`` to send, or the caller (``principal`` or a deferred ``error``)."""

    refusal: Response | None = None
    principal: Principal | None = None
    error: ProtocolError | None = None


def _shown(value: str) -> str:
    return repr(value[:80])


REALTIME_PATH = "/v1/realtime"


def _openai_error(status: HTTPStatus, message: str, code: str) -> Response:
    body: dict[str, object] = {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }
    return json_response(status, body, {"WWW-Authenticate": "Bearer"} if status == HTTPStatus.UNAUTHORIZED else None)


class UpgradeGate:
    def __init__(self, settings: Settings, auth: Authenticator, clock: Callable[[], float] = time.time) -> None:
        """``clock``: wall-clock seconds, for the age of a Vonage JWT."""
        self._settings = settings
        self._auth = auth
        self._clock = clock
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
        if path in GATEWAY_CALLERS:
            return self._gateway(path, request, principal, error)
        if path == REALTIME_PATH:
            return self._realtime(request, principal, error)
        return Admission(principal=principal, error=error)

    def _realtime(self, request: Request, principal: Principal | None, error: ProtocolError | None) -> Admission:
        """OpenAI Realtime clients always send ``Authorization: Bearer KEY``: a token with the ``call`` scope
        while auth is on, any non-empty key while it is off. Refused as OpenAI refuses: 401 ``invalid_api_key``."""
        try:
            scheme, _, key = (single_header(request.headers, "Authorization") or "").strip().partition(" ")
        except ValueError:
            scheme, key = "", ""
        if error is None and principal is not None and scheme.lower() == "bearer" and key.strip():
            if principal.allows("call"):
                return Admission(principal=principal)
            return Admission(refusal=_openai_error(HTTPStatus.FORBIDDEN, "the token lacks the call scope", "forbidden"))
        reason = error.message if error is not None else "an Authorization: Bearer key is required"
        log.info("refused a %s handshake: %s", REALTIME_PATH, reason)
        return Admission(refusal=_openai_error(HTTPStatus.UNAUTHORIZED, reason, "invalid_api_key"))

    def _gateway(
        self, path: str, request: Request, principal: Principal | None, error: ProtocolError | None
    ) -> Admission:
        """A phone gateway's upgrade: its provider's credential when one is configured (403 otherwise), else a
        bearer token with the ``call`` scope while auth is on (401/403 otherwise)."""
        check = self._provider_check(path)
        if check is not None:
            refused = check(request)
            if refused is not None:
                log.warning("refused a %s handshake: %s", path, refused)
                return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, {"error": refused}))
            return Admission(principal=GATEWAY_CALLERS[path])
        if error is not None or principal is None:
            reason = error.message if error is not None else "a bearer token is required"
            log.warning("refused a %s handshake: %s", path, reason)
            body: dict[str, object] = {"error": "unauthorized", "message": reason}
            return Admission(refusal=json_response(HTTPStatus.UNAUTHORIZED, body, {"WWW-Authenticate": "Bearer"}))
        if not principal.allows("call"):
            body = {"error": "forbidden", "message": "the token lacks the call scope"}
            return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, body))
        return Admission(principal=principal)

    def _provider_check(self, path: str) -> Callable[[Request], str | None] | None:
        """The check of ``path``'s provider credential (``None``: none is configured); it answers why a
        handshake is refused, or ``None`` to let it in."""
        if path == TWILIO_PATH and self._settings.twilio.auth_token is not None:
            return self._twilio_signed
        if path == TELNYX_PATH and self._settings.telnyx.stream_auth_token is not None:
            return self._telnyx_token
        vonage_settings = self._settings.vonage
        if path == VONAGE_PATH and (vonage_settings.signature_secret or vonage_settings.authorization) is not None:
            return self._vonage_authorized
        return None

    def _twilio_signed(self, request: Request) -> str | None:
        """The signature matches the public URL Twilio called (``public_url``, else ``wss://Host/twilio``)."""
        token = self._settings.twilio.auth_token
        assert token is not None
        try:
            host = single_header(request.headers, "Host") or ""
            signature = single_header(request.headers, "X-Twilio-Signature")
        except ValueError:
            return "invalid X-Twilio-Signature"
        url = self._settings.twilio.public_url or f"wss://{host}{TWILIO_PATH}"
        return (
            None if twilio.valid_signature(token.get_secret_value(), url, signature) else "invalid X-Twilio-Signature"
        )

    def _telnyx_token(self, request: Request) -> str | None:
        """The ``stream_auth_token`` in Telnyx's header, else in the URL's ``token`` (TeXML has no header)."""
        token = self._settings.telnyx.stream_auth_token
        assert token is not None
        try:
            presented = single_header(request.headers, telnyx.AUTH_HEADER)
        except ValueError:
            return f"{telnyx.AUTH_HEADER} repeated"
        if presented is None:
            query = parse_qs(urlsplit(request.path).query).get("token", [])
            presented = query[0] if len(query) == 1 else None
        ok = telnyx.valid_auth_token(token.get_secret_value(), presented)
        return None if ok else f"invalid or missing {telnyx.AUTH_HEADER}"

    def _vonage_authorized(self, request: Request) -> str | None:
        """``Authorization``: a JWT signed with the signature secret, or the configured custom value."""
        cfg = self._settings.vonage
        try:
            header = single_header(request.headers, "Authorization")
        except ValueError:
            return "Authorization header repeated"
        secret, custom = cfg.signature_secret, cfg.authorization
        if secret is not None and vonage.valid_jwt(
            secret.get_secret_value(), header, self._clock(), cfg.max_token_age_s
        ):
            return None
        if custom is not None and vonage.valid_authorization(custom.get_secret_value(), header):
            return None
        return "invalid or missing Authorization"
