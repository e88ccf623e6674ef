"""The hosts a server-side tool may reach: the allow-list and the address rules (pure decisions, no sockets).

The address rules are a table (``agent.config.special_addresses``): every block of it is walked, and the answers
that differ between Python patch releases when ``ipaddress``'s ``is_global`` decides are pinned here.
"""

from __future__ import annotations

import ipaddress

import pytest

from agent.config.special_addresses import CARRIERS, IPV4_BLOCKS, IPV6_BLOCKS, Address, carried_ipv4, special_block
from agent.config.tool_hosts import HostPolicy, is_public, normalize_host, parse_address

BLOCKS = IPV4_BLOCKS + IPV6_BLOCKS


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("93.184.216.34", True),
        ("2001:4860:4860::8888", True),
        ("127.0.0.1", False),
        ("127.8.9.10", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # the cloud metadata service
        ("100.64.0.1", False),  # carrier-grade NAT: not private to Python, not public either
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),  # IPv4-mapped
        ("::ffff:8.8.8.8", True),
        ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
        ("2002:808:808::", True),
        ("64:ff9b::7f00:1", False),  # NAT64 of 127.0.0.1
        ("64:ff9b::808:808", True),
        ("64:ff9b::c000:8", False),  # NAT64 of 192.0.0.8
        ("::ffff:192.0.0.8", False),
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", True),  # Teredo, client 8.8.8.8 (its bits inverted)
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", False),  # Teredo, client 127.0.0.1
        ("2002:c000:0008::1", False),  # 6to4 of 192.0.0.8
    ],
)
def test_public_addresses(address: str, public: bool) -> None:
    assert is_public(ipaddress.ip_address(address)) is public


def test_the_default_policy_reaches_nothing() -> None:
    policy = HostPolicy()
    assert policy.url_refusal("https://api.weather.example/v1") is not None
    assert policy.address_refusal("127.0.0.1") is not None
    assert policy.address_refusal("8.8.8.8") is None  # addresses alone: the host's name is checked first


def test_private_networks_let_their_addresses_through_and_no_others() -> None:
    policy = HostPolicy.of([], ["10.20.0.0/24", "::1"])
    assert policy.address_refusal("10.20.0.15") is None
    assert policy.address_refusal("::ffff:10.20.0.15") is None  # the same address, mapped into IPv6
    assert policy.address_refusal("::1") is None
    refusal = policy.address_refusal("10.20.1.1")
    assert refusal is not None and "10.20.1.1" in refusal
    assert policy.address_refusal("127.0.0.1") is not None
    assert policy.address_refusal("169.254.169.254") is not None
    assert policy.address_refusal("not-an-address") is not None


@pytest.mark.parametrize(
    ("url", "refused_for"),
    [
        ("https://api.weather.example/v1/current?x=1", None),
        ("http://API.Weather.Example./v1", None),  # case and a final dot do not matter
        ("https://api.weather.example:8443/", None),
        ("https://evil.example/", "not on the allowed hosts"),
        ("https://api.weather.example.evil.example/", "not on the allowed hosts"),
        ("https://sub.api.weather.example/", "not on the allowed hosts"),  # exact names, no wildcards
        ("ftp://api.weather.example/", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("https://user:pw@api.weather.example/", "user name or password"),
        ("https://api.weather.example:99999/", "not a valid URL"),
        ("https:///path", "no host"),
        ("http://127.0.0.1:8080/", "not a public address"),  # listed, but loopback and not permitted
        ("http://[::1]:8080/", "not on the allowed hosts"),
        ("http://10.20.0.15/bookings", None),
        ("http://10.20.0.16/", "not on the allowed hosts"),
    ],
)
def test_url_refusals(url: str, refused_for: str | None) -> None:
    policy = HostPolicy.of(["api.weather.example", "127.0.0.1", "10.20.0.15"], ["10.20.0.0/24"])
    refusal = policy.url_refusal(url)
    if refused_for is None:
        assert refusal is None
    else:
        assert refusal is not None and refused_for in refusal


def test_an_address_literal_is_allowed_once_listed_and_permitted() -> None:
    policy = HostPolicy.of(["127.0.0.1", "::1"], ["127.0.0.0/8", "::1/128"])
    assert policy.url_refusal("http://127.0.0.1:9000/weather") is None
    assert policy.url_refusal("http://[::1]:9000/weather") is None
    assert policy.url_refusal("http://[0:0:0:0:0:0:0:1]:9000/") is None  # the same address, written out


def test_hosts_are_normalised() -> None:
    assert normalize_host("API.Example.COM.") == "api.example.com"
    assert normalize_host("[0:0:0:0:0:0:0:1]") == "::1"
    assert parse_address("fe80::1%eth0") == ipaddress.ip_address("fe80::1")
    assert parse_address("example.com") is None
    assert HostPolicy.of(["  ", "Example.com"]).allowed_hosts == frozenset({"example.com"})


def test_a_bad_network_is_named() -> None:
    with pytest.raises(ValueError, match=r"'10\.0\.0\.0/33'"):
        HostPolicy.of([], ["10.0.0.0/33"])


def _middle(first: Address, last: Address) -> Address:
    return type(first)((int(first) + int(last)) // 2)


def _points(block_index: int) -> list[Address]:
    network = BLOCKS[block_index].network
    return [network[0], _middle(network[0], network[-1]), network[-1]]


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[str(b.network) for b in BLOCKS])
def test_every_block_of_the_table_is_refused_unless_it_is_listed_as_private(index: int) -> None:
    block = BLOCKS[index]
    listed = HostPolicy.of([], [str(block.network)])
    for address in _points(index):
        carried = carried_ipv4(address)
        refusal = HostPolicy().address_refusal(address)
        if carried is None:
            assert refusal is not None and "not a public address" in refusal, address
            named = special_block(address)
            assert named is not None and str(named.network) in refusal and named.rfc in refusal
        else:  # mapped, NAT64, Teredo, 6to4: the IPv4 address carried decides
            assert (refusal is None) is is_public(carried), address
        assert listed.address_refusal(address) is None, address


def test_the_neighbours_just_outside_each_block_are_public_where_no_other_block_holds_them() -> None:
    checked = 0
    for block in BLOCKS:
        network = block.network
        for value in (int(network[0]) - 1, int(network[-1]) + 1):
            if not 0 <= value < 2**network.max_prefixlen:
                continue
            neighbour = ipaddress.ip_address(value) if network.version == 4 else ipaddress.IPv6Address(value)
            if special_block(neighbour) is None and carried_ipv4(neighbour) is None:
                assert HostPolicy().address_refusal(neighbour) is None, neighbour
                checked += 1
    assert checked >= 30


@pytest.mark.parametrize(
    "address",
    [
        "1.0.0.0",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "128.0.0.0",
        "172.32.0.0",
        "192.0.1.0",
        "192.0.3.0",
        "192.88.98.255",
        "192.88.100.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "2000::",
        "2001:200::",  # just past 2001::/23
        "2001:db9::",
        "2003::",
        "2620:4f:8001::",
        "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "3fff:1000::",  # just past 3fff::/20
    ],
)
def test_public_neighbours_are_reached(address: str) -> None:
    assert HostPolicy().address_refusal(address) is None


@pytest.mark.parametrize(
    "address",
    [
        "192.0.0.8",  # IPv4 dummy address: "global" to ipaddress on 3.11.7
        "192.0.0.9",  # PCP anycast: globally reachable, yet no tool's
        "192.88.99.2",
        "192.31.196.1",
        "fec0::1",  # site-local: "global" to ipaddress on 3.11.7
        "2001:1::3",
        "2001:20::1",
        "3fff::1",
        "5f00::1",
        "100:0:0:1::1",
        "64:ff9b:1::1",
        "::808:808",  # IPv4-compatible, deprecated
        "4000::1",  # outside 2000::/3
    ],
)
def test_answers_that_ipaddress_gives_differently_across_releases_are_the_tables(address: str) -> None:
    refusal = HostPolicy().address_refusal(address)
    assert refusal is not None and "not a public address" in refusal


def test_a_refusal_names_the_block_and_the_carried_address() -> None:
    policy = HostPolicy()
    assert policy.address_refusal("192.0.0.8") == (
        "192.0.0.8 is in 192.0.0.8/32 (IPv4 dummy address, RFC 7600): not a public address, "
        "and not in the permitted private networks"
    )
    refusal = policy.address_refusal("64:ff9b::a00:1")
    assert refusal is not None and refusal.startswith("64:ff9b::a00:1 carries 10.0.0.1, in 10.0.0.0/8 (Private-Use")
    assert HostPolicy.of([], ["10.0.0.0/8"]).address_refusal("64:ff9b::a00:1") is None  # the carried one listed


def test_the_carriers_are_blocks_of_the_table() -> None:
    v6 = {block.network for block in IPV6_BLOCKS}
    assert all(carrier.network in v6 for carrier in CARRIERS)
