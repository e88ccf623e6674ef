"""Which hosts a server-side tool may reach: the operator's allow-list and the address rules (pure: no sockets).

Its one reason to change is what the server lets a tool's request reach. A tool's URL (an HTTP tool's, an MCP
server's) passes ``HostPolicy.url_refusal`` when the tools file is loaded and again before each request; every
address its host resolves to passes ``address_refusal`` at connection time (the adapters' resolvers,
``agent.adapters.http_tools`` and ``agent.adapters.mcp_tools``), so a name that resolves to a public address when
checked and to ``127.0.0.1`` when connected (DNS rebinding) still cannot reach this machine or its network.

- The host must be on ``allowed_hosts``: exact names (lower case, no wildcards) or IP addresses.
- An address that is not public (loopback, private, link-local, carrier-grade NAT, multicast, reserved,
  unspecified, and the IPv4 forms inside IPv6: mapped, 6to4, Teredo, NAT64) is refused unless it lies in one of
  the operator's ``private_networks`` (none by default).
- Only ``http`` and ``https``; no user name or password in the URL (credentials go in headers, from secrets).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

SCHEMES = frozenset({"http", "https"})
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


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


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries to the IPv4 internet (mapped, 6to4, Teredo, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: Address) -> bool:
    """An address on the public internet: none of this machine's, a private network's or a special range's."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return is_public(embedded)
    special = (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )
    # is_global is also False for the shared (carrier-grade NAT) range 100.64.0.0/10, which is_private is not.
    return address.is_global and not special


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
        if is_public(parsed):
            return None
        candidates: list[Address] = [parsed]
        if isinstance(parsed, ipaddress.IPv6Address) and (embedded := _embedded_ipv4(parsed)) is not None:
            candidates.append(embedded)
        for network in self.private_networks:
            if any(candidate.version == network.version and candidate in network for candidate in candidates):
                return None
        return f"{parsed} is not a public address and not in the permitted private networks"

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
