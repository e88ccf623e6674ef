"""The vocabulary of the start-up exposure check: what the settings expose, and what a rule says about it.

Its one reason to change is what an endpoint's exposure rule (``Endpoint.exposure``, ``agent.wires.endpoints``)
reads and answers. Pure: settings in, sentences out. ``agent.front_door.exposure`` runs the rules of every
endpoint; a rule lives with its protocol (``agent.wires.phone.credential``, ``agent.wires.audiosocket.credential``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from agent.config import Settings


def is_loopback(host: str) -> bool:
    """Only this machine can connect: ``localhost``, 127.0.0.0/8, ``::1``. Wildcards and names are not."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def env_name(section: str, field: str) -> str:
    """``("twilio", "auth_token")`` -> ``AGENT_TWILIO__AUTH_TOKEN``."""
    return f"AGENT_{section}__{field}".upper()


@dataclass(frozen=True, slots=True)
class Posture:
    """What the settings expose, as every rule reads it."""

    settings: Settings
    blank: tuple[str, ...]
    """The credentials given empty or blank (now unset), as the operator writes them."""

    @property
    def host(self) -> str:
        return self.settings.server.host

    @property
    def exposed(self) -> bool:
        """Other machines can reach the WebSocket listener."""
        return not is_loopback(self.settings.server.host)

    @property
    def auth_on(self) -> bool:
        return self.settings.auth.secret is not None

    @property
    def allowed(self) -> bool:
        """``AGENT_AUTH__ALLOW_ANONYMOUS=true``: refusals become warnings, for a trusted network."""
        return self.settings.auth.allow_anonymous


@dataclass(frozen=True, slots=True)
class Said:
    """What one rule says: refusals (the server does not start) and warnings."""

    refusals: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    named: tuple[str, ...] = ()
    """The blank credentials (``Posture.blank``) these sentences name: not said again on a line of their own."""


ExposureRule = Callable[[Posture, "str | None"], Said]
"""An endpoint's rule, given the posture and the endpoint's path (``None``: not a WebSocket endpoint)."""
