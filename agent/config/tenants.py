"""Tenant names: what a valid one is, and the one a caller without a token belongs to.

One reason to change: the rule for tenant names. Below the settings (a tools file names tenants) and the token
codec (``agent.security.auth``, which re-exports these names), so both check names by the same rule.
"""

from __future__ import annotations

import re

DEFAULT_TENANT = "default"
MAX_TENANT = 64
_TENANT = re.compile(r"[a-z0-9][a-z0-9_-]*")


def is_valid_tenant(tenant: str) -> bool:
    """1-64 lower-case letters, digits, ``-`` and ``_``, starting with a letter or digit."""
    return isinstance(tenant, str) and 0 < len(tenant) <= MAX_TENANT and _TENANT.fullmatch(tenant) is not None
