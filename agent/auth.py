"""Who is calling: the ``Principal`` every connection runs as, and tenant names.

The token codec (sign, verify, expiry, scopes) lives here too; the check happens once, at the upgrade or
the first message, in the runtime. The session core never sees credentials, only a tenant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCOPES: tuple[str, ...] = ("call", "enroll", "admin")
"""``call``: hold a conversation; ``enroll``: add and remove voices; ``admin``: everything (all tenants' CLI)."""
DEFAULT_TENANT = "default"
MAX_TENANT = 64
_TENANT = re.compile(r"[a-z0-9][a-z0-9_-]*")


def is_valid_tenant(tenant: str) -> bool:
    """1-64 lower-case letters, digits, ``-`` and ``_``, starting with a letter or digit."""
    return isinstance(tenant, str) and 0 < len(tenant) <= MAX_TENANT and _TENANT.fullmatch(tenant) is not None


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller: its tenant, what it may do, and who it is for audit lines."""

    tenant: str
    scopes: frozenset[str]
    subject: str
    """``tok:<token id>`` for a token, ``anonymous`` when auth is off, ``cli`` for the local command line."""

    def allows(self, scope: str) -> bool:
        return scope in self.scopes or "admin" in self.scopes


ANONYMOUS = Principal(tenant=DEFAULT_TENANT, scopes=frozenset(SCOPES), subject="anonymous")
"""Every caller when auth is off (``AGENT_AUTH__SECRET`` unset)."""
CLI = Principal(tenant=DEFAULT_TENANT, scopes=frozenset(SCOPES), subject="cli")
