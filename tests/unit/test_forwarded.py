"""The client address behind trusted proxies: X-Forwarded-For believed only as far as our proxies wrote it."""

from __future__ import annotations

import pytest

from agent.runtime.server.forwarded import client_address, networks, peer_key

PROXIES = networks(["10.0.0.0/8", "fd00::/8"])


def test_without_trusted_proxies_the_header_is_ignored() -> None:
    assert client_address("10.1.2.3", ["203.0.113.5"], ()) == "10.1.2.3"


def test_a_peer_that_is_not_a_trusted_proxy_is_the_client_whatever_it_claims() -> None:
    assert client_address("198.51.100.7", ["203.0.113.5"], PROXIES) == "198.51.100.7"


def test_behind_a_trusted_proxy_the_client_is_the_right_most_untrusted_hop() -> None:
    # The client forged the first hop; our proxies wrote the last two.
    assert client_address("10.0.0.2", ["6.6.6.6, 203.0.113.5, 10.0.0.9"], PROXIES) == "203.0.113.5"
    assert client_address("10.0.0.2", ["6.6.6.6", "203.0.113.5"], PROXIES) == "203.0.113.5"  # header repeated
    assert client_address("fd00::1", ["2001:db8::5"], PROXIES) == "2001:db8::5"
    assert client_address("10.0.0.2", ["::ffff:203.0.113.9"], PROXIES) == "203.0.113.9"


@pytest.mark.parametrize("header", [[], [""], ["10.0.0.3"], ["junk, 10.0.0.3"], ["203.0.113.5, junk"]])
def test_no_believable_client_in_the_header_counts_the_proxy(header: list[str]) -> None:
    assert client_address("10.0.0.2", header, PROXIES) == "10.0.0.2"


def test_networks_refuses_what_is_not_one() -> None:
    with pytest.raises(ValueError):
        networks(["not a network"])


def test_peers_are_counted_by_address_and_ipv6_by_its_64() -> None:
    assert peer_key("127.0.0.2") == "127.0.0.2"
    assert peer_key("::ffff:10.1.2.3") == "10.1.2.3"
    assert peer_key("2001:db8::1") == peer_key("2001:db8::ffff:1") == "2001:db8::/64"
    assert peer_key("2001:db8:0:1::1") != peer_key("2001:db8::1")
    assert peer_key("fe80::1%eth0") == "fe80::/64"
    assert peer_key("not an address") == "not an address"
