"""Secure by default: the start-up decision (pure: settings in, refusals and warnings out)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.config import Settings
from agent.front_door.exposure import check_exposure, is_loopback

SECRET = "k" * 40


def settings(host: str, **sections: Any) -> Settings:
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


SIGNED = {
    "twilio": {"auth_token": "t"},
    "telnyx": {"stream_auth_token": "t"},
    "vonage": {"signature_secret": "s"},
}


def test_public_address_with_auth_off_is_refused_with_why_and_how() -> None:
    exposure = check_exposure(settings("0.0.0.0"))
    assert len(exposure.refusals) == 4
    auth, twilio, telnyx, vonage = exposure.refusals
    assert "AGENT_AUTH__SECRET" in auth and "'0.0.0.0'" in auth and "ALLOW_ANONYMOUS" in auth
    assert "/twilio" in twilio and "AGENT_TWILIO__AUTH_TOKEN" in twilio
    assert "/telnyx" in telnyx and "AGENT_TELNYX__STREAM_AUTH_TOKEN" in telnyx
    assert "/vonage" in vonage and "AGENT_VONAGE__SIGNATURE_SECRET" in vonage and "AUTHORIZATION" in vonage


def test_public_address_with_every_gateway_signed_but_auth_off_is_still_refused() -> None:
    exposure = check_exposure(settings("0.0.0.0", **SIGNED))
    assert len(exposure.refusals) == 1 and "AGENT_AUTH__SECRET" in exposure.refusals[0]


@pytest.mark.parametrize("provider", ["twilio", "telnyx", "vonage"])
def test_each_gateway_left_unsigned_is_refused_on_a_public_address(provider: str) -> None:
    sections = {name: value for name, value in SIGNED.items() if name != provider}
    exposure = check_exposure(settings("0.0.0.0", **sections))
    assert len(exposure.refusals) == 2 and f"/{provider} is open" in exposure.refusals[1]


def test_vonage_custom_authorization_counts_as_signed() -> None:
    sections = {**SIGNED, "vonage": {"authorization": "Bearer x"}}
    assert len(check_exposure(settings("0.0.0.0", **sections)).refusals) == 1


def test_allow_anonymous_turns_refusals_into_warnings() -> None:
    exposure = check_exposure(settings("0.0.0.0", auth={"allow_anonymous": True}))
    assert exposure.refusals == []
    assert len(exposure.warnings) == 4 and all("ALLOW_ANONYMOUS=true" in w for w in exposure.warnings)


def test_public_address_with_auth_on_starts() -> None:
    exposure = check_exposure(settings("0.0.0.0", auth={"secret": SECRET}))
    assert exposure.refusals == []
    needs_bearer = [w for w in exposure.warnings if "bearer token" in w]
    # /twilio and /telnyx then need a bearer their provider cannot send; Vonage can send one (custom authorization)
    assert len(needs_bearer) == 2 and "/twilio" in needs_bearer[0] and "/telnyx" in needs_bearer[1]
    signed = check_exposure(settings("0.0.0.0", auth={"secret": SECRET}, **SIGNED))
    assert signed.refusals == [] and signed.warnings == []


# --- credentials given empty or blank (issue 19): unset, and said so -----------------------------------------

BLANKS = ["", " ", "\t \n"]


@pytest.mark.parametrize("blank", BLANKS)
def test_an_empty_twilio_token_on_a_public_address_is_refused_as_an_unset_one_and_said_so(blank: str) -> None:
    unset = check_exposure(settings("0.0.0.0", **{k: v for k, v in SIGNED.items() if k != "twilio"}))
    empty = check_exposure(settings("0.0.0.0", **{**SIGNED, "twilio": {"auth_token": blank}}))
    assert len(empty.refusals) == len(unset.refusals) == 2
    twilio = empty.refusals[1]
    assert "/twilio is open on '0.0.0.0'" in twilio
    assert "AGENT_TWILIO__AUTH_TOKEN is set but empty (treated as unset)" in twilio
    assert "AGENT_TWILIO__AUTH_TOKEN is not set" in unset.refusals[1]


@pytest.mark.parametrize(
    ("provider", "field", "name"),
    [
        ("telnyx", "stream_auth_token", "AGENT_TELNYX__STREAM_AUTH_TOKEN"),
        ("vonage", "signature_secret", "AGENT_VONAGE__SIGNATURE_SECRET"),
        ("vonage", "authorization", "AGENT_VONAGE__AUTHORIZATION"),
    ],
)
def test_every_empty_gateway_credential_is_refused_on_a_public_address(provider: str, field: str, name: str) -> None:
    exposure = check_exposure(settings("0.0.0.0", **{**SIGNED, provider: {field: ""}}))
    assert len(exposure.refusals) == 2
    assert f"/{provider} is open" in exposure.refusals[1]
    assert f"{name} is set but empty" in exposure.refusals[1]


def test_an_empty_vonage_secret_on_loopback_with_auth_off_warns_that_vonage_is_open() -> None:
    exposure = check_exposure(settings("127.0.0.1", vonage={"signature_secret": ""}))
    assert exposure.refusals == []
    (vonage,) = [w for w in exposure.warnings if "/vonage" in w]
    assert "/vonage is open" in vonage and "AGENT_VONAGE__SIGNATURE_SECRET is set but empty" in vonage
    assert not any(w.startswith("AGENT_VONAGE__SIGNATURE_SECRET") for w in exposure.warnings)  # said once


def test_both_vonage_credentials_empty_are_both_named() -> None:
    exposure = check_exposure(settings("127.0.0.1", vonage={"signature_secret": "", "authorization": " "}))
    (vonage,) = [w for w in exposure.warnings if "/vonage" in w]
    assert "AGENT_VONAGE__SIGNATURE_SECRET and AGENT_VONAGE__AUTHORIZATION are set but empty" in vonage


def test_with_auth_on_an_empty_twilio_token_still_needs_a_bearer_and_says_why() -> None:
    exposure = check_exposure(settings("0.0.0.0", auth={"secret": SECRET}, **{**SIGNED, "twilio": {"auth_token": ""}}))
    assert exposure.refusals == []
    (twilio,) = exposure.warnings
    assert "/twilio needs a bearer token (AGENT_TWILIO__AUTH_TOKEN is set but empty (treated as unset))" in twilio


@pytest.mark.parametrize(
    ("sections", "name"),
    [
        ({"llm": {"api_key": ""}}, "AGENT_LLM__API_KEY"),
        ({"tts": {"api_key": "  "}}, "AGENT_TTS__API_KEY"),
        # /vonage is still checked (the custom Authorization): the empty secret is said on its own line
        ({"vonage": {"signature_secret": "", "authorization": "Bearer x"}}, "AGENT_VONAGE__SIGNATURE_SECRET"),
        # auth on: Vonage can send the bearer, so no line about /vonage; the empty secret is still said
        ({"vonage": {"signature_secret": ""}, "auth": {"secret": SECRET}}, "AGENT_VONAGE__SIGNATURE_SECRET"),
    ],
)
def test_other_empty_secrets_get_a_warning_of_their_own(sections: dict[str, Any], name: str) -> None:
    exposure = check_exposure(settings("127.0.0.1", **sections))
    assert exposure.refusals == []
    assert [w for w in exposure.warnings if w.startswith(name)] == [
        f"{name} is set but empty: treated as unset (give it its value, or remove the line)"
    ]


def test_secrets_with_a_value_are_not_blank() -> None:
    exposure = check_exposure(settings("0.0.0.0", auth={"secret": SECRET}, llm={"api_key": " k "}, **SIGNED))
    assert exposure.refusals == [] and exposure.warnings == []
