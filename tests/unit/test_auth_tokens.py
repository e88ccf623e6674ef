"""Token codec and Authenticator: pure, with an injected clock (no event loop, no sockets)."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import ValidationError

from agent.config import AuthSettings, Settings
from agent.errors import ProtocolError
from agent.security.auth import (
    ANONYMOUS,
    MAX_TOKEN_CHARS,
    Authenticator,
    Principal,
    TokenError,
    mint_token,
    verify_token,
)

SECRET = b"s" * 32
OTHER = b"t" * 32
NOW = 1_800_000_000.0
DAY = 86400


def mint(**kw: object) -> str:
    args: dict[str, object] = {"tenant": "acme", "scopes": ["call"], "ttl_s": 600, "now": NOW, "max_ttl_s": DAY}
    args.update(kw)
    secret = args.pop("secret", SECRET)
    return mint_token(secret, **args)  # type: ignore[arg-type]


def verify(token: str, now: float = NOW, secret: bytes = SECRET, max_ttl_s: int = DAY) -> Principal:
    return verify_token(secret, token, now=now, max_ttl_s=max_ttl_s)


def test_round_trip_names_tenant_scopes_and_token_id() -> None:
    token = mint(scopes=["enroll", "call"], token_id="abc123")
    principal = verify(token)
    assert principal == Principal("acme", frozenset({"call", "enroll"}), "tok:abc123")
    assert principal.allows("call") and not principal.allows("admin")
    assert token.startswith("v1.") and token.count(".") == 2
    assert "=" not in token and "+" not in token and "/" not in token  # URL- and header-safe


def test_token_ids_are_random() -> None:
    assert verify(mint()).subject != verify(mint()).subject


def test_expiry_is_exact_with_the_injected_clock() -> None:
    token = mint(ttl_s=600)
    assert verify(token, now=NOW + 599).tenant == "acme"
    with pytest.raises(TokenError, match="expired"):
        verify(token, now=NOW + 600)


def test_issued_in_the_future_beyond_skew_is_refused() -> None:
    token = mint(now=NOW + 3600)
    with pytest.raises(TokenError, match="future"):
        verify(token, now=NOW)
    assert verify(mint(now=NOW + 30), now=NOW).tenant == "acme"  # small skew between servers is fine


def test_forged_signature_and_other_secret_are_refused() -> None:
    token = mint()
    with pytest.raises(TokenError, match="signature"):
        verify(token, secret=OTHER)
    version, payload, signature = token.split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    with pytest.raises(TokenError, match="signature"):
        verify(f"{version}.{payload}.{flipped}")


def test_edited_payload_is_refused() -> None:
    token = mint(scopes=["call"])
    version, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["scp"] = ["admin"]
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    with pytest.raises(TokenError, match="signature"):
        verify(f"{version}.{forged}.{signature}")


def test_lifetime_above_the_maximum_is_refused_when_minting_and_verifying() -> None:
    with pytest.raises(TokenError, match="ttl"):
        mint(ttl_s=DAY + 1)
    with pytest.raises(TokenError, match="ttl"):
        mint(ttl_s=0)
    long_lived = mint(ttl_s=DAY)
    with pytest.raises(TokenError, match="lifetime"):
        verify(long_lived, max_ttl_s=3600)  # the server lowered its maximum since


@pytest.mark.parametrize(
    ("tenant", "scopes", "match"),
    [
        ("ACME", ["call"], "tenant"),
        ("", ["call"], "tenant"),
        ("a" * 65, ["call"], "tenant"),
        ("../x", ["call"], "tenant"),
        ("acme", [], "scope"),
        ("acme", ["root"], "unknown scope"),
        ("acme", ["call", "Call"], "unknown scope"),
    ],
)
def test_minting_refuses_bad_tenants_and_scopes(tenant: str, scopes: list[str], match: str) -> None:
    with pytest.raises(TokenError, match=match):
        mint(tenant=tenant, scopes=scopes)


def _signed(claims: object, secret: bytes = SECRET) -> str:
    """A correctly signed token around arbitrary claims (what a holder of the secret could make)."""
    import hashlib
    import hmac

    from agent.security import auth

    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    key = auth._key(secret)
    mac = hmac.new(key, f"v1.{payload}".encode(), hashlib.sha256).digest()
    return f"v1.{payload}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


GOOD = {"ten": "acme", "scp": ["call"], "iat": int(NOW), "exp": int(NOW) + 60, "jti": "x"}


@pytest.mark.parametrize(
    "claims",
    [
        [],
        "x",
        {**GOOD, "extra": 1},
        {k: v for k, v in GOOD.items() if k != "jti"},
        {**GOOD, "scp": ["superuser"]},
        {**GOOD, "scp": "call"},
        {**GOOD, "ten": "Other Tenant"},
        {**GOOD, "iat": True},
        {**GOOD, "exp": "soon"},
        {**GOOD, "exp": 1.5e12},
        {**GOOD, "jti": 7},
        {**GOOD, "exp": int(NOW) - 10, "iat": int(NOW)},
    ],
)
def test_signed_but_invalid_claims_are_refused(claims: object) -> None:
    with pytest.raises(TokenError):
        verify(_signed(claims))
    assert verify(_signed(GOOD)).tenant == "acme"


@pytest.mark.parametrize(
    "token",
    [
        "",
        "v1",
        "v1..",
        "v2.e30.AAAA",
        "v1.e30.A",
        "v1.!!!.AAAA",
        "v1.e30.AAAA.AAAA",
        "v1.é.AAAA",
        "v1." + "A" * MAX_TOKEN_CHARS + ".AAAA",
    ],
)
def test_malformed_tokens_are_refused_with_our_error(token: str) -> None:
    with pytest.raises(TokenError):
        verify(token)


def auth(clock: list[float]) -> Authenticator:
    return Authenticator(SECRET, max_ttl_s=DAY, default_ttl_s=600, clock=lambda: clock[0])


def test_authenticator_off_makes_every_caller_anonymous() -> None:
    off = Authenticator(None)
    assert not off.enabled
    assert off.from_header(None) is ANONYMOUS
    assert off.from_header("Bearer garbage") is ANONYMOUS
    assert off.from_token(None) is ANONYMOUS
    assert off.from_token("garbage") is ANONYMOUS
    with pytest.raises(RuntimeError, match="AGENT_AUTH__SECRET"):
        off.mint("acme", ["call"])


def test_authenticator_on_checks_header_and_token() -> None:
    clock = [NOW]
    authn = auth(clock)
    token = authn.mint("acme", ["call", "enroll"])
    assert authn.enabled
    assert authn.from_header(None) is None
    assert authn.from_header(f"Bearer {token}") == authn.from_token(token)
    assert authn.from_header(f"bearer  {token} ") is not None
    assert authn.from_token(token).scopes == frozenset({"call", "enroll"})
    clock[0] = NOW + 600  # default ttl 600 s
    with pytest.raises(ProtocolError, match="expired") as caught:
        authn.from_token(token)
    assert caught.value.code == "unauthorized"


@pytest.mark.parametrize("header", ["", "Bearer", "Bearer ", "Basic dXNlcjpwdw==", "Bearer a b", "Token abc"])
def test_malformed_authorization_headers_are_unauthorized(header: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        auth([NOW]).from_header(header)
    assert caught.value.code == "unauthorized"


@pytest.mark.parametrize("token", [None, "", "nonsense"])
def test_missing_or_bad_message_tokens_are_unauthorized(token: str | None) -> None:
    with pytest.raises(ProtocolError) as caught:
        auth([NOW]).from_token(token)
    assert caught.value.code == "unauthorized" and caught.value.message


def test_settings_refuse_short_secrets_and_treat_empty_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="at least 32 bytes"):
        AuthSettings(secret="short")
    monkeypatch.setenv("AGENT_AUTH__SECRET", "")
    assert Settings().auth.secret is None
    monkeypatch.setenv("AGENT_AUTH__SECRET", "k" * 32)
    settings = Settings()
    assert Authenticator.from_settings(settings.auth).enabled
    assert "k" * 32 not in repr(settings)  # a SecretStr is never printed
    with pytest.raises(ValidationError, match="default_ttl_s"):
        AuthSettings(default_ttl_s=100, max_ttl_s=10)
