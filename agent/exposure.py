"""Secure by default: may the server start with these settings, and what should the operator be told?

Pure (settings in, sentences out). ``python -m agent`` refuses to start (exit code 2) on any refusal:
a non-loopback address with auth off, which also leaves ``/twilio`` open. ``AGENT_AUTH__ALLOW_ANONYMOUS=true``
turns the refusals into warnings, for a trusted network.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from agent.config import Settings

MAKE_SECRET = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"


def is_loopback(host: str) -> bool:
    """Only this machine can connect: ``localhost``, 127.0.0.0/8, ``::1``. Wildcards and names are not."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Exposure:
    refusals: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_exposure(settings: Settings) -> Exposure:
    host = settings.server.host
    auth_on = settings.auth.secret is not None
    twilio_signed = settings.twilio.auth_token is not None
    exposed = not is_loopback(host)
    allowed = settings.auth.allow_anonymous
    refusals: list[str] = []
    warnings: list[str] = []
    if exposed and not auth_on:
        problem = (
            f"auth is off (AGENT_AUTH__SECRET is not set) while listening on {host!r}, an address other "
            "machines can reach: anyone who reaches it can hold conversations, enrol and list voices and "
            "spend your cloud credits"
        )
        if allowed:
            warnings.append(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)")
        else:
            refusals.append(
                f"{problem}. Fix: set AGENT_AUTH__SECRET to a random value of 32+ bytes ({MAKE_SECRET}) "
                "and give callers tokens (python -m agent tokens mint ...), or listen on 127.0.0.1, or, on a "
                "trusted network only, set AGENT_AUTH__ALLOW_ANONYMOUS=true"
            )
        if not twilio_signed:
            problem = (
                f"/twilio is open on {host!r}: AGENT_TWILIO__AUTH_TOKEN is not set, so any client can place calls there"
            )
            if allowed:
                warnings.append(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)")
            else:
                refusals.append(
                    f"{problem}. Fix: set AGENT_TWILIO__AUTH_TOKEN (and AGENT_TWILIO__PUBLIC_URL) so every "
                    "handshake must carry Twilio's signature, or set AGENT_AUTH__SECRET (then /twilio needs a "
                    "bearer token)"
                )
    elif not auth_on and not twilio_signed:
        warnings.append(
            "/twilio is open: AGENT_TWILIO__AUTH_TOKEN is not set, so anyone who can reach this server can place "
            "calls there (fine for local tests; set it before exposing /twilio through a tunnel)"
        )
    if auth_on and not twilio_signed:
        warnings.append(
            "/twilio needs a bearer token (AGENT_TWILIO__AUTH_TOKEN is not set); Twilio itself cannot send one, "
            "so set AGENT_TWILIO__AUTH_TOKEN to take phone calls"
        )
    return Exposure(refusals=refusals, warnings=warnings)
