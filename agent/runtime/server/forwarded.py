"""Which address a client is counted under: through your own proxies, and per host (pure).

Behind a load balancer or an ingress every connection's TCP peer is the proxy, so a bound per client address
(``agent.runtime.server.occupancy``) would be one bound for everyone. When the peer is one of the
``server.trusted_proxies``, the client is the right-most address of ``X-Forwarded-For`` that is not itself a
trusted proxy (each proxy appends the address it saw; only the part your proxies wrote can be believed, so
anything left of the first untrusted address may be forged by the client). With no trusted proxies, or a peer
outside them, the header is ignored: anyone can send it. ``peer_key`` then names what is counted: an IPv4
address, or the /64 of an IPv6 one, since one host usually holds a whole /64.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """Parsed networks (``10.0.0.0/8``, ``::1``); raises ``ValueError`` for one that is not."""
    return tuple(ipaddress.ip_network(cidr.strip(), strict=False) for cidr in cidrs)


def parse_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as a socket or a header gives it (``[::1]``, ``fe80::1%eth0``, ``::ffff:10.0.0.1`` is the IPv4
    address it maps); ``None`` when it is not one."""
    try:
        address = ipaddress.ip_address(text.strip().strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address, proxies: Sequence[Network]) -> bool:
    return any(address.version == net.version and address in net for net in proxies)


def client_address(peer: str, forwarded_for: Sequence[str], proxies: Sequence[Network]) -> str:
    """The address to count a connection from ``peer`` under, given its ``X-Forwarded-For`` header values."""
    address = parse_address(peer)
    if address is None or not proxies or not _trusted(address, proxies):
        return peer
    hops = [hop for value in forwarded_for for hop in value.split(",")]
    for hop in reversed(hops):
        found = parse_address(hop)
        if found is None:
            return peer  # a hop our proxies would not write: believe nothing further left
        if not _trusted(found, proxies):
            return str(found)
    return peer


def peer_key(host: str) -> str:
    """The address a peer is counted under: an IPv4 address, or the /64 of an IPv6 one; other text as given."""
    address = parse_address(host)
    if address is None:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((int(address) >> 64 << 64, 64)))
    return str(address)
