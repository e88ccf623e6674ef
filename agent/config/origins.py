"""Which browser pages may open a WebSocket here: the ``Origin`` allowlist (pure: no sockets, no settings).

Its one reason to change is the rule for origins. The settings normalise ``AGENT_SERVER__ALLOWED_ORIGINS`` with
it at load time (``agent.config.server``), and the upgrade applies ``OriginPolicy`` (``agent.runtime.server.upgrade``).

A browser always sends ``Origin`` on a WebSocket upgrade, and a page cannot forge it; so checking it stops
any web page the user happens to visit from driving their local server (cross-site WebSocket hijacking).
Allowed: the configured list, the server's own address (from its configuration and the listening socket,
never from the ``Host`` header, which a DNS-rebinding attacker controls) and loopback pages on any port.
An upgrade without ``Origin`` does not come from a browser; it is judged by its credentials alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOSTNAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?")
_IPV6 = re.compile(r"[0-9a-f:.]+")
MAX_ORIGIN = 512


def format_host(host: str) -> str:
    """A host as it appears in an origin: lower case, IPv6 literals in brackets."""
    host = host.lower()
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def normalize_origin(value: str) -> str | None:
    """``scheme://host[:port]`` in canonical form (lower case, default port dropped), or ``None``.

    Only ``http`` and ``https`` origins exist for our purposes; ``null`` (sandboxed frames, ``file:``) and
    anything with a path, query, fragment or user name is not an origin.
    """
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ORIGIN or not value.isascii():
        return None
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    if parts.username is not None or parts.password is not None or parts.hostname is None:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        if _IPV6.fullmatch(host) is None:
            return None
    elif _HOSTNAME.fullmatch(host) is None:
        return None
    suffix = "" if port is None or port == _DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{format_host(host)}{suffix}"


def _host_and_port(origin: str) -> tuple[str, int]:
    parts = urlsplit(origin)
    assert parts.hostname is not None  # normalize_origin checked it
    return format_host(parts.hostname), parts.port or _DEFAULT_PORTS[parts.scheme]


class OriginPolicy:
    """``allows(origin, local_address)``: may a page from ``origin`` use the server listening at ``local_address``?

    ``allowed``: configured origins (``AGENT_SERVER__ALLOWED_ORIGINS``); ``host``: the configured listen host.
    """

    def __init__(self, allowed: Iterable[str], host: str) -> None:
        self._allowed = frozenset(o for o in (normalize_origin(a) for a in allowed) if o is not None)
        configured = format_host(host)
        self._host = None if configured in WILDCARD_HOSTS else configured

    def allows(self, origin: str | None, local_address: tuple[str, int] | None) -> bool:
        if origin is None:
            return True  # not a browser: the credentials decide
        found = normalize_origin(origin)
        if found is None:
            return False
        if found in self._allowed:
            return True
        host, port = _host_and_port(found)
        if host in LOOPBACK_HOSTS:
            return True
        if local_address is None:
            return False
        own = {format_host(str(local_address[0]))}
        if self._host is not None:
            own.add(self._host)
        return port == int(local_address[1]) and host in own - WILDCARD_HOSTS
