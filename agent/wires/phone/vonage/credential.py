"""Vonage's credential: the ``Authorization`` of its handshake, a JWT it signs or a custom value it is given.

Its one reason to change is how Vonage authenticates a WebSocket. On when ``AGENT_VONAGE__SIGNATURE_SECRET``
(NCCO authorization type ``vonage``: a JWT signed with it, younger than ``max_token_age_s``) or
``AGENT_VONAGE__AUTHORIZATION`` (type ``custom``: that exact value) is set. Vonage can be told to send our bearer
token (type custom), so with auth on it needs neither.
"""

from __future__ import annotations

from agent.config import Settings
from agent.runtime.server.responses import single_header
from agent.runtime.server.upgrade import Upgrade
from agent.security.auth import DEFAULT_TENANT, Principal
from agent.wires.phone.credential import ProviderCredential
from agent.wires.phone.vonage import codec as vonage

SECRET, CUSTOM = "AGENT_VONAGE__SIGNATURE_SECRET", "AGENT_VONAGE__AUTHORIZATION"


def _configured(settings: Settings) -> bool:
    return settings.vonage.signature_secret is not None or settings.vonage.authorization is not None


def _authorized(upgrade: Upgrade) -> str | None:
    """``Authorization``: a JWT signed with the signature secret, or the configured custom value."""
    cfg = upgrade.settings.vonage
    try:
        header = single_header(upgrade.request.headers, "Authorization")
    except ValueError:
        return "Authorization header repeated"
    secret, custom = cfg.signature_secret, cfg.authorization
    if secret is not None and vonage.valid_jwt(secret.get_secret_value(), header, upgrade.now, cfg.max_token_age_s):
        return None
    if custom is not None and vonage.valid_authorization(custom.get_secret_value(), header):
        return None
    return "invalid or missing Authorization"


AUTHORIZATION = ProviderCredential(
    caller=Principal(tenant=DEFAULT_TENANT, scopes=frozenset({"call"}), subject="vonage"),
    settings=(SECRET, CUSTOM),
    fix=f"set {SECRET} (NCCO authorization type vonage) or {CUSTOM} (type custom) so every handshake must carry it",
    sends_bearer=True,
    configured=_configured,
    verify=_authorized,
)
