"""Who may open a phone gateway's socket: its provider's credential, else a bearer token, and what the settings
expose when neither protects it.

Its one reason to change is how a phone gateway's handshake is trusted; each provider says what its credential
is (``ProviderCredential``, in ``agent.wires.phone.<provider>.credential``). The upgrade (``upgrade_check``):
when the provider's credential is configured, a handshake must carry it (403 otherwise) and the call is the
provider's (``caller``); else a bearer token with the ``call`` scope while auth is on (401/403 otherwise), and
anyone while it is off. At start-up (``exposure_rule``): a gateway whose credential is not configured is open
with auth off (refused on an address other machines reach, warned about on loopback), and with auth on needs a
bearer token its provider may be unable to send (warned about).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

from agent.config import Settings
from agent.runtime.server.responses import json_response
from agent.runtime.server.upgrade import Admission, CredentialCheck, Upgrade
from agent.security.auth import Principal
from agent.security.exposure_rules import ExposureRule, Posture, Said

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ProviderCredential:
    """What makes a phone provider's handshakes verifiable."""

    caller: Principal
    """Who a call is once the provider's credential checked out."""
    settings: tuple[str, ...]
    """The settings that configure it, as the operator writes them (the first is the one a sentence names)."""
    fix: str
    """How to set them (a clause after ``Fix:``)."""
    sends_bearer: bool
    """The provider can be told to send our bearer token (so auth on is enough to take its calls)."""
    configured: Callable[[Settings], bool]
    """Whether the settings turn the check on."""
    verify: Callable[[Upgrade], str | None]
    """Why a handshake is refused (``None``: it carries the credential); called only when ``configured``."""


def upgrade_check(credential: ProviderCredential) -> CredentialCheck:
    """The ``Endpoint.check`` of a gateway whose provider proves itself with ``credential``."""

    def check(upgrade: Upgrade) -> Admission:
        path = upgrade.path
        if credential.configured(upgrade.settings):
            refused = credential.verify(upgrade)
            if refused is not None:
                log.warning("refused a %s handshake: %s", path, refused)
                return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, {"error": refused}))
            return Admission(principal=credential.caller, provider=True)
        principal, error = upgrade.principal, upgrade.error
        if error is not None or principal is None:
            reason = error.message if error is not None else "a bearer token is required"
            log.warning("refused a %s handshake: %s", path, reason)
            body: dict[str, object] = {"error": "unauthorized", "message": reason}
            return Admission(refusal=json_response(HTTPStatus.UNAUTHORIZED, body, {"WWW-Authenticate": "Bearer"}))
        if not principal.allows("call"):
            body = {"error": "forbidden", "message": "the token lacks the call scope"}
            return Admission(refusal=json_response(HTTPStatus.FORBIDDEN, body))
        return Admission(principal=principal)

    return check


def _missing(credential: ProviderCredential, blank: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """Why the check is off: its first setting is not set, or the ones given empty (then named)."""
    given_empty = tuple(name for name in credential.settings if name in blank)
    if not given_empty:
        return f"{credential.settings[0]} is not set", ()
    verb = "is" if len(given_empty) == 1 else "are"
    return f"{' and '.join(given_empty)} {verb} set but empty (treated as unset)", given_empty


def exposure_rule(credential: ProviderCredential) -> ExposureRule:
    """The ``Endpoint.exposure`` of a gateway whose provider proves itself with ``credential``."""

    def rule(posture: Posture, path: str | None) -> Said:
        assert path is not None, "a phone gateway is a WebSocket path"
        if credential.configured(posture.settings):
            return Said()
        setting, host = credential.settings[0], posture.host
        missing, named = _missing(credential, posture.blank)
        if posture.exposed and not posture.auth_on:
            problem = f"{path} is open on {host!r}: {missing}, so any client can place calls there"
            if posture.allowed:
                return Said(warnings=(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)",), named=named)
            refusal = f"{problem}. Fix: {credential.fix}, or set AGENT_AUTH__SECRET (then {path} needs a bearer token)"
            return Said(refusals=(refusal,), named=named)
        if not posture.auth_on:
            warning = (
                f"{path} is open: {missing}, so anyone who can reach this server can place calls there "
                f"(fine for local tests; set it before exposing {path} through a tunnel)"
            )
            return Said(warnings=(warning,), named=named)
        if not credential.sends_bearer:
            provider = path.strip("/").capitalize()
            warning = (
                f"{path} needs a bearer token ({missing}); {provider} itself cannot send one, so set "
                f"{setting} to take phone calls"
            )
            return Said(warnings=(warning,), named=named)
        return Said()

    return rule
