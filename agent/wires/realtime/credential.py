"""Who may open a Realtime session (``/v1/realtime``): the check of its upgrade, refused as OpenAI refuses.

Its one reason to change is how an OpenAI Realtime client proves who it is. Such clients always send
``Authorization: Bearer KEY``: a token with the ``call`` scope while auth is on, any non-empty key while it is
off. Without one: 401 ``invalid_api_key``; a token without the ``call`` scope: 403 ``forbidden``, each with
OpenAI's error body (clients show its ``message``).
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from websockets.http11 import Response

from agent.runtime.server.responses import json_response, single_header
from agent.runtime.server.upgrade import Admission, Upgrade

log = logging.getLogger(__name__)


def _openai_error(status: HTTPStatus, message: str, code: str) -> Response:
    body: dict[str, object] = {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }
    return json_response(status, body, {"WWW-Authenticate": "Bearer"} if status == HTTPStatus.UNAUTHORIZED else None)


def bearer_key(upgrade: Upgrade) -> Admission:
    """The ``Endpoint.check`` of ``/v1/realtime``: a bearer key, with the ``call`` scope while auth is on."""
    principal, error = upgrade.principal, upgrade.error
    try:
        scheme, _, key = (single_header(upgrade.request.headers, "Authorization") or "").strip().partition(" ")
    except ValueError:
        scheme, key = "", ""
    if error is None and principal is not None and scheme.lower() == "bearer" and key.strip():
        if principal.allows("call"):
            return Admission(principal=principal)
        return Admission(refusal=_openai_error(HTTPStatus.FORBIDDEN, "the token lacks the call scope", "forbidden"))
    reason = error.message if error is not None else "an Authorization: Bearer key is required"
    log.info("refused a %s handshake: %s", upgrade.path, reason)
    return Admission(refusal=_openai_error(HTTPStatus.UNAUTHORIZED, reason, "invalid_api_key"))
