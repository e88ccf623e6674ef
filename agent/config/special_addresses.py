"""The special-purpose address blocks: an explicit table (block, name, RFC) that a tool's request never reaches
unless the operator permits the block (pure: no sockets).

Its one reason to change is the IANA registries this table copies, as published in 2025 (the IPv6 one updated
2025-10-09, with 100:0:0:1::/64 of RFC 9780):

- IANA IPv4 Special-Purpose Address Registry,
  https://www.iana.org/assignments/iana-ipv4-special-registry/ (RFC 6890, RFC 8190);
- IANA IPv6 Special-Purpose Address Registry,
  https://www.iana.org/assignments/iana-ipv6-special-registry/ (RFC 6890, RFC 8190);
- and what those leave to other registries: IPv4 multicast 224.0.0.0/4 (RFC 5771), and every IPv6 block outside
  the global unicast space 2000::/3 (IANA IPv6 Address Space, https://www.iana.org/assignments/ipv6-address-space/:
  "Reserved by IETF", the deprecated site-local fec0::/10 of RFC 3879, multicast ff00::/8).

Every block of the registries is here, the globally reachable ones too (anycast relays, AS112, AMT, ORCHIDv2,
DETs): no tool lives there. Four IPv6 blocks carry an IPv4 address to the IPv4 internet (``CARRIERS``: mapped,
NAT64 64:ff9b::/96, Teredo, 6to4); an address in one of them is judged by the IPv4 address it carries.

The table, not ``ipaddress``'s ``is_private`` / ``is_global`` / ``is_reserved``: those changed between Python
patch releases (the fix of CVE-2024-4032, in 3.11.10 and 3.12.4, moved several blocks; on 3.11.7 192.0.0.8 and
fec0::1 are "global"), so the same address would be refused on one 3.11 and reached on another. Here only
``ipaddress``'s parsing and network membership are used, which never changed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class SpecialBlock:
    """One special-purpose block: where it is, what the registry calls it, and the RFC that set it aside."""

    network: Network
    name: str
    rfc: str

    def __str__(self) -> str:
        return f"{self.network} ({self.name}, {self.rfc})"


def _block(network: str, name: str, rfc: str) -> SpecialBlock:
    return SpecialBlock(ipaddress.ip_network(network), name, rfc)


IPV4_BLOCKS: tuple[SpecialBlock, ...] = (
    _block("0.0.0.0/8", '"This network"', "RFC 791"),
    _block("0.0.0.0/32", '"This host on this network"', "RFC 1122"),
    _block("10.0.0.0/8", "Private-Use", "RFC 1918"),
    _block("100.64.0.0/10", "Shared Address Space", "RFC 6598"),
    _block("127.0.0.0/8", "Loopback", "RFC 1122"),
    _block("169.254.0.0/16", "Link Local", "RFC 3927"),
    _block("172.16.0.0/12", "Private-Use", "RFC 1918"),
    _block("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890"),
    _block("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335"),
    _block("192.0.0.8/32", "IPv4 dummy address", "RFC 7600"),
    _block("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723"),
    _block("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155"),
    _block("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880"),
    _block("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880"),
    _block("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737"),
    _block("192.31.196.0/24", "AS112-v4", "RFC 7535"),
    _block("192.52.193.0/24", "AMT", "RFC 7450"),
    _block("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526"),
    _block("192.88.99.2/32", "6a44-relay anycast address", "RFC 6751"),
    _block("192.168.0.0/16", "Private-Use", "RFC 1918"),
    _block("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534"),
    _block("198.18.0.0/15", "Benchmarking", "RFC 2544"),
    _block("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737"),
    _block("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737"),
    _block("224.0.0.0/4", "Multicast", "RFC 5771"),  # the multicast registry's, not the special-purpose one's
    _block("240.0.0.0/4", "Reserved", "RFC 1112"),
    _block("255.255.255.255/32", "Limited Broadcast", "RFC 8190"),
)
"""The IPv4 Special-Purpose Address Registry, every record (192.0.0.170/32 and .171/32 as two), and multicast."""

IPV6_BLOCKS: tuple[SpecialBlock, ...] = (
    _block("::1/128", "Loopback Address", "RFC 4291"),
    _block("::/128", "Unspecified Address", "RFC 4291"),
    _block("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291"),
    _block("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052"),
    _block("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215"),
    _block("100::/64", "Discard-Only Address Block", "RFC 6666"),
    _block("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780"),
    _block("2001::/23", "IETF Protocol Assignments", "RFC 2928"),
    _block("2001::/32", "TEREDO", "RFC 4380"),
    _block("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723"),
    _block("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155"),
    _block("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665"),
    _block("2001:2::/48", "Benchmarking", "RFC 5180"),
    _block("2001:3::/32", "AMT", "RFC 7450"),
    _block("2001:4:112::/48", "AS112-v6", "RFC 7535"),
    _block("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843"),
    _block("2001:20::/28", "ORCHIDv2", "RFC 7343"),
    _block("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374"),
    _block("2001:db8::/32", "Documentation", "RFC 3849"),
    _block("2002::/16", "6to4", "RFC 3056"),
    _block("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534"),
    _block("3fff::/20", "Documentation", "RFC 9637"),
    _block("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602"),
    _block("fc00::/7", "Unique-Local", "RFC 4193"),
    _block("fe80::/10", "Link-Local Unicast", "RFC 4291"),
    # The IPv6 Address Space registry: all of it outside 2000::/3 that the records above leave.
    _block("::/8", "Reserved by IETF (IPv4-compatible ::/96 deprecated)", "RFC 4291"),
    _block("100::/8", "Reserved by IETF", "RFC 4291"),
    _block("200::/7", "Reserved by IETF", "RFC 4048"),
    _block("400::/6", "Reserved by IETF", "RFC 4291"),
    _block("800::/5", "Reserved by IETF", "RFC 4291"),
    _block("1000::/4", "Reserved by IETF", "RFC 4291"),
    _block("4000::/3", "Reserved by IETF", "RFC 4291"),
    _block("6000::/3", "Reserved by IETF", "RFC 4291"),
    _block("8000::/3", "Reserved by IETF", "RFC 4291"),
    _block("a000::/3", "Reserved by IETF", "RFC 4291"),
    _block("c000::/3", "Reserved by IETF", "RFC 4291"),
    _block("e000::/4", "Reserved by IETF", "RFC 4291"),
    _block("f000::/5", "Reserved by IETF", "RFC 4291"),
    _block("f800::/6", "Reserved by IETF", "RFC 4291"),
    _block("fe00::/9", "Reserved by IETF", "RFC 4291"),
    _block("fec0::/10", "Site-Local (deprecated)", "RFC 3879"),
    _block("ff00::/8", "Multicast", "RFC 4291"),
)
"""The IPv6 Special-Purpose Address Registry, every record, and the rest of the space outside 2000::/3."""


def _low32(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)


def _sixtofour(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF)


def _teredo_client(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(~int(address) & 0xFFFFFFFF)  # RFC 4380 4: the client's address, bits inverted


@dataclass(frozen=True, slots=True)
class Carrier:
    """An IPv6 block whose addresses carry an IPv4 one to the IPv4 internet, and how to read it out."""

    network: ipaddress.IPv6Network
    ipv4: Callable[[ipaddress.IPv6Address], ipaddress.IPv4Address]


CARRIERS: tuple[Carrier, ...] = (
    Carrier(ipaddress.IPv6Network("::ffff:0:0/96"), _low32),  # IPv4-mapped (RFC 4291 2.5.5.2)
    Carrier(ipaddress.IPv6Network("64:ff9b::/96"), _low32),  # NAT64's well-known prefix (RFC 6052 2.1)
    Carrier(ipaddress.IPv6Network("2001::/32"), _teredo_client),  # Teredo (RFC 4380 4)
    Carrier(ipaddress.IPv6Network("2002::/16"), _sixtofour),  # 6to4 (RFC 3056 2)
)
"""The blocks judged by the IPv4 address they carry (mapped, NAT64, Teredo, 6to4)."""


def carried_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries to the IPv4 internet (``CARRIERS``), if any."""
    if isinstance(address, ipaddress.IPv6Address):
        for carrier in CARRIERS:
            if address in carrier.network:
                return carrier.ipv4(address)
    return None


def special_block(address: Address) -> SpecialBlock | None:
    """The most specific block of the table that holds ``address`` (``None``: an ordinary unicast address).
    An address a ``CARRIERS`` block holds is found in its block all the same: its IPv4 is judged apart."""
    blocks = IPV4_BLOCKS if isinstance(address, ipaddress.IPv4Address) else IPV6_BLOCKS
    found: SpecialBlock | None = None
    for block in blocks:
        if address in block.network and (found is None or block.network.prefixlen > found.network.prefixlen):
            found = block
    return found
