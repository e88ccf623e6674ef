"""The Origin allowlist: pure decisions (no sockets)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent.config import ServerSettings
from agent.config.origins import OriginPolicy, normalize_origin


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://Agent.Example.com", "https://agent.example.com"),
        ("https://agent.example.com:443", "https://agent.example.com"),
        ("http://agent.example.com:80/", "http://agent.example.com"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("http://[::1]:9000", "http://[::1]:9000"),
        ("null", None),
        ("", None),
        ("file://", None),
        ("ftp://agent.example.com", None),
        ("https://agent.example.com/path", None),
        ("https://user@agent.example.com", None),
        ("https://agent.example.com?x=1", None),
        ("https://agent.example.com:99999", None),
        ("https://bad_host!.com", None),
        ("https://ex\u00e4mple.com", None),
    ],
)
def test_normalize_origin(value: str, expected: str | None) -> None:
    assert normalize_origin(value) == expected


LOCAL = ("127.0.0.1", 8765)


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # not a browser: credentials decide
        ("http://127.0.0.1:8765", True),
        ("http://localhost:3000", True),
        ("https://localhost", True),
        ("http://[::1]:5173", True),
        ("https://agent.example.com", True),
        ("HTTPS://AGENT.EXAMPLE.COM:443", True),
        ("http://agent.example.com", False),  # scheme differs from the configured one
        ("https://evil.example", False),
        ("http://evil.example:8765", False),  # DNS rebinding: the attacker's name, our port
        ("null", False),
        ("", False),
        ("http://127.0.0.1.evil.example:8765", False),
        ("http://localhost.evil.example", False),
    ],
)
def test_policy_on_loopback(origin: str | None, allowed: bool) -> None:
    policy = OriginPolicy(["https://agent.example.com"], "127.0.0.1")
    assert policy.allows(origin, LOCAL) is allowed


def test_own_address_comes_from_configuration_and_socket_never_from_host() -> None:
    policy = OriginPolicy([], "0.0.0.0")
    assert policy.allows("http://192.168.1.5:8765", ("192.168.1.5", 8765))
    assert not policy.allows("http://192.168.1.5:9999", ("192.168.1.5", 8765))  # another server's page
    assert not policy.allows("http://0.0.0.0:8765", ("0.0.0.0", 8765))
    named = OriginPolicy([], "voice.lan")
    assert named.allows("http://voice.lan:8765", ("10.0.0.2", 8765))
    assert not named.allows("http://voice.lan:8765", None)


def test_settings_normalize_and_refuse_bad_origins() -> None:
    assert ServerSettings(allowed_origins=["https://A.example:443/"]).allowed_origins == ["https://a.example"]
    with pytest.raises(ValidationError, match="not an origin"):
        ServerSettings(allowed_origins=["a.example"])
