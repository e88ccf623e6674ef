"""Which hosts a server-side tool may reach: the operator's allow-list and the address rules (pure: no sockets).

Its one reason to change is what the server lets a tool's request reach. A tool's URL (an HTTP tool's, an MCP
server's) passes ``HostPolicy.url_refusal`` when the tools file is loaded and again before each request; every
address its host resolves to passes ``address_refusal`` at connection time (the adapters' resolvers,
``agent.adapters.http_tools`` and ``agent.adapters.mcp_tools``), so a name that resolves to a public address when
checked and to ``127.0.0.1`` when connected (DNS rebinding) still cannot reach this machine or its network.

- The host must be on ``allowed_hosts``: exact names (lower case, no wildcards) or IP addresses.
- An address in a special-purpose block (``agent.config.special_addresses``: every block of the IANA IPv4 and
  IPv6 Special-Purpose Address Registries, multicast, and IPv6 outside 2000::/3) is refused unless it lies in
  one of the operator's ``private_networks`` (none by default). An IPv6 address that carries an IPv4 one
  (mapped, NAT64, Teredo, 6to4) is judged by the IPv4 address it carries, and permitted when either is in a
  private network. The answer is the table's, the same on every Python release.
- Only ``http`` and ``https``; no user name or password in the URL (credentials go in headers, from secrets).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from agent.config.special_addresses import Address, Network, SpecialBlock, carried_ipv4, special_block

SCHEMES = frozenset({"http", "https"})


def parse_address(host: str) -> Address | None:
    """``host`` as an IP address (brackets and an IPv6 zone dropped), or ``None`` for a name."""
    text = host.strip().strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def normalize_host(host: str) -> str:
    """A host as the allow-list holds it: a name in lower case without a final dot, an address in its
    canonical form (``::1``, not ``0:0:0:0:0:0:0:1``)."""
    address = parse_address(host)
    if address is not None:
        return str(address)
    return host.strip().lower().rstrip(".")


def refused_block(address: Address) -> tuple[Address, SpecialBlock] | None:
    """The special-purpose block that keeps ``address`` off the public internet, with the address found in it
    (the IPv4 one it carries, for mapped, NAT64, Teredo and 6to4 addresses); ``None`` for a public address."""
    carried = carried_ipv4(address)
    judged: Address = carried if carried is not None else address
    block = special_block(judged)
    return None if block is None else (judged, block)


def is_public(address: Address) -> bool:
    """An address on the public internet: in no special-purpose block (nor carrying an address that is)."""
    return refused_block(address) is None


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """The hosts tools may reach. Build with ``HostPolicy.of(hosts, networks)``; the default reaches nothing."""

    allowed_hosts: frozenset[str] = frozenset()
    private_networks: tuple[Network, ...] = ()

    @classmethod
    def of(cls, hosts: Iterable[str], networks: Iterable[str] = ()) -> HostPolicy:
        """From the tools file's lists; raises ``ValueError`` naming a network that is not a CIDR or address."""
        parsed: list[Network] = []
        for network in networks:
            try:
                parsed.append(ipaddress.ip_network(network.strip(), strict=False))
            except ValueError:
                raise ValueError(f"not an IP address or network (CIDR): {network!r}") from None
        return cls(frozenset(normalize_host(h) for h in hosts if h.strip()), tuple(parsed))

    def host_allowed(self, host: str) -> bool:
        """``host`` (a name or an address) is on the allow-list."""
        return normalize_host(host) in self.allowed_hosts

    def address_refusal(self, address: Address | str) -> str | None:
        """Why a connection to ``address`` is refused, or ``None`` when it may be made."""
        parsed = parse_address(address) if isinstance(address, str) else address
        if parsed is None:
            return f"{address!r} is not an IP address"
        found = refused_block(parsed)
        if found is None:
            return None
        judged, block = found
        candidates = (parsed, judged)
        for network in self.private_networks:
            if any(candidate.version == network.version and candidate in network for candidate in candidates):
                return None
        where = f"{parsed} is in" if judged == parsed else f"{parsed} carries {judged}, in"
        return f"{where} {block}: not a public address, and not in the permitted private networks"

    def url_refusal(self, url: str) -> str | None:
        """Why a request to ``url`` is refused before any connection (scheme, credentials, host not on the
        allow-list, an address literal that is refused), or ``None``."""
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a port out of range
        except ValueError:
            return "not a valid URL"
        if parts.scheme.lower() not in SCHEMES:
            return f"scheme {parts.scheme!r} is not http or https"
        if parts.username is not None or parts.password is not None:
            return "a URL may not carry a user name or password (use headers from secrets)"
        host = parts.hostname
        if not host:
            return "the URL names no host"
        if not self.host_allowed(host):
            return f"host {normalize_host(host)!r} is not on the allowed hosts"
        address = parse_address(host)
        return None if address is None else self.address_refusal(address)
