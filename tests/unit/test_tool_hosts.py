"""The hosts a server-side tool may reach: the allow-list and the address rules (pure decisions, no sockets)."""

from __future__ import annotations

import ipaddress

import pytest

from agent.config.tool_hosts import HostPolicy, is_public, normalize_host, parse_address


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
