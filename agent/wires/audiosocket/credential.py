"""Who may place an AudioSocket call: the peer's address, since AudioSocket has no authentication of its own.

Its one reason to change is how an AudioSocket peer is trusted. At a connection (``peer_allowed``): only peers on
loopback or in ``audiosocket.allowed_peers``. At start-up (``exposure``): a listener reachable from other machines
whose allowed peers include everyone (``0.0.0.0/0``) is refused (warned about with
``AGENT_AUTH__ALLOW_ANONYMOUS=true``); peers on public addresses, or none allowed, are warned about.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from agent.runtime.server.forwarded import parse_address
from agent.security.exposure_rules import Posture, Said, is_loopback


def peer_allowed(host: str, allowed: Sequence[str]) -> bool:
    """May a peer at ``host`` (an IP address) call: loopback, or inside one of the ``allowed`` networks."""
    address = parse_address(host)
    if address is None:
        return False
    if address.is_loopback:
        return True
    return any(address in ipaddress.ip_network(network, strict=False) for network in allowed)


def exposure(posture: Posture, path: str | None) -> Said:
    """The ``Endpoint.exposure`` of AudioSocket (``path``: none, it is TCP)."""
    cfg = posture.settings.audiosocket
    if cfg.port is None or is_loopback(cfg.host):
        return Said()  # off, or only this machine can connect
    refusals: list[str] = []
    warnings: list[str] = []
    networks = [ipaddress.ip_network(peer, strict=False) for peer in cfg.allowed_peers]
    everyone = [str(net) for net in networks if net.prefixlen == 0]
    if everyone:
        problem = (
            f"AGENT_AUDIOSOCKET__ALLOWED_PEERS lets everyone in ({', '.join(everyone)}): AudioSocket has no "
            "authentication, so anyone who reaches the port can place calls and spend your cloud credits"
        )
        if posture.allowed:
            warnings.append(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)")
        else:
            refusals.append(
                f'{problem}. Fix: list only your Asterisk servers\' addresses (e.g. ["10.0.0.5"]), or, on a '
                "trusted network only, set AGENT_AUTH__ALLOW_ANONYMOUS=true"
            )
    public = [str(net) for net in networks if net.prefixlen and not (net.is_private or net.is_loopback)]
    if public:
        warnings.append(
            f"AudioSocket peers on public addresses ({', '.join(public)}): its audio is neither encrypted nor "
            "authenticated; carry it over a VPN or a private network"
        )
    if not networks:
        warnings.append(
            f"AudioSocket listens on {cfg.host!r} but AGENT_AUDIOSOCKET__ALLOWED_PEERS is empty: only this machine "
            "may call; list your Asterisk servers' addresses there"
        )
    return Said(tuple(refusals), tuple(warnings))
