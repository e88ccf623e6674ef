"""Secure by default: the start-up decision (pure: settings in, refusals and warnings out)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.config import Settings
from agent.exposure import check_exposure, is_loopback

SECRET = "k" * 40


def settings(host: str, **sections: dict[str, Any]) -> Settings:
    return Settings(server={"host": host}, **sections)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("", False),
        ("192.168.1.5", False),
        ("agent.example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_loopback_with_auth_off_starts_and_warns_that_twilio_is_open() -> None:
    exposure = check_exposure(settings("127.0.0.1"))
    assert exposure.refusals == []
    assert any("/twilio is open" in w for w in exposure.warnings)


def test_public_address_with_auth_off_is_refused_with_why_and_how() -> None:
    exposure = check_exposure(settings("0.0.0.0"))
    assert len(exposure.refusals) == 2
    auth, twilio = exposure.refusals
    assert "AGENT_AUTH__SECRET" in auth and "'0.0.0.0'" in auth and "ALLOW_ANONYMOUS" in auth
    assert "/twilio" in twilio and "AGENT_TWILIO__AUTH_TOKEN" in twilio


def test_public_address_with_a_twilio_token_but_auth_off_is_still_refused() -> None:
    exposure = check_exposure(settings("0.0.0.0", twilio={"auth_token": "t"}))
    assert len(exposure.refusals) == 1 and "AGENT_AUTH__SECRET" in exposure.refusals[0]


def test_allow_anonymous_turns_refusals_into_warnings() -> None:
    exposure = check_exposure(settings("0.0.0.0", auth={"allow_anonymous": True}))
    assert exposure.refusals == []
    assert len(exposure.warnings) == 2 and all("ALLOW_ANONYMOUS=true" in w for w in exposure.warnings)


def test_public_address_with_auth_on_starts() -> None:
    exposure = check_exposure(settings("0.0.0.0", auth={"secret": SECRET}))
    assert exposure.refusals == []
    assert [w for w in exposure.warnings if "bearer token" in w]  # /twilio then needs a bearer
    signed = check_exposure(settings("0.0.0.0", auth={"secret": SECRET}, twilio={"auth_token": "t"}))
    assert signed.refusals == [] and signed.warnings == []
