"""Addresses and networks in settings: the one parser of the CIDR lists that sections take.

Reason to change: how an address or network a setting names is read.
"""

from __future__ import annotations

import ipaddress


def cidrs(value: list[str]) -> list[str]:
    """Addresses or networks (CIDR), normalised; raises ``ValueError`` naming the first that is neither."""
    networks = []
    for peer in value:
        try:
            networks.append(str(ipaddress.ip_network(peer.strip(), strict=False)))
        except ValueError:
            raise ValueError(f"not an IP address or network (CIDR): {peer!r}") from None
    return networks
