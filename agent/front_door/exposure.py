"""Secure by default: may the server start with these settings, and what should the operator be told?

Its one reason to change is the start-up decision as a whole; what each endpoint exposes is its row's rule
(``Endpoint.exposure`` in ``agent.wires.endpoints``: the phone gateways open unless their provider's credential
is set, an AudioSocket listener that lets everyone in). Pure (settings in, sentences out). ``python -m agent``
refuses to start (exit code 2) on any refusal: a non-loopback address with auth off, and whatever a rule refuses.
``AGENT_AUTH__ALLOW_ANONYMOUS=true`` turns the refusals into warnings, for a trusted network.

A credential given empty or blank (``AGENT_TWILIO__AUTH_TOKEN=``) is unset (``agent.config.WithSecrets``), and
every sentence about it says it was set but empty, so that a forgotten value is not mistaken for a check; one the
rules did not name gets a warning of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.config import Settings, WithSecrets
from agent.security.exposure_rules import Posture, env_name, is_loopback
from agent.wires.endpoints import ENDPOINTS, Endpoint

__all__ = ["MAKE_SECRET", "Exposure", "blank_secrets", "check_exposure", "is_loopback"]

MAKE_SECRET = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"


@dataclass(frozen=True, slots=True)
class Exposure:
    refusals: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def blank_secrets(settings: Settings) -> list[str]:
    """The credentials given empty or blank (now unset), as the operator writes them."""
    names = []
    for section in type(settings).model_fields:
        value = getattr(settings, section)
        if isinstance(value, WithSecrets):
            names += [env_name(section, field) for field in value.secret_fields() if field in value.blank_secrets]
    return names


def check_exposure(settings: Settings, endpoints: Sequence[Endpoint] = ENDPOINTS) -> Exposure:
    """The refusals and warnings for ``settings``: auth's, then each endpoint's rule in table order, then the
    blank credentials no rule named."""
    blank = blank_secrets(settings)
    posture = Posture(settings, tuple(blank))
    host = posture.host
    refusals: list[str] = []
    warnings: list[str] = []
    if posture.exposed and not posture.auth_on:
        problem = (
            f"auth is off (AGENT_AUTH__SECRET is not set) while listening on {host!r}, an address other "
            "machines can reach: anyone who reaches it can hold conversations, enrol and list voices and "
            "spend your cloud credits"
        )
        if posture.allowed:
            warnings.append(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)")
        else:
            refusals.append(
                f"{problem}. Fix: set AGENT_AUTH__SECRET to a random value of 32+ bytes ({MAKE_SECRET}) "
                "and give callers tokens (python -m agent tokens mint ...), or listen on 127.0.0.1, or, on a "
                "trusted network only, set AGENT_AUTH__ALLOW_ANONYMOUS=true"
            )
    told: set[str] = set()
    for endpoint in endpoints:
        if endpoint.exposure is not None:
            said = endpoint.exposure(posture, endpoint.path)
            refusals += said.refusals
            warnings += said.warnings
            told.update(said.named)
    warnings += [
        f"{name} is set but empty: treated as unset (give it its value, or remove the line)"
        for name in blank
        if name not in told
    ]
    return Exposure(refusals=refusals, warnings=warnings)
