"""Fuzzing the front door's pure parts: any token, header or origin gives an answer or our own error type."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent.config.origins import OriginPolicy, normalize_origin
from agent.errors import ProtocolError
from agent.security import auth
from agent.security.auth import SCOPES, Authenticator, Principal, TokenError, is_valid_tenant, verify_token
from tests.fuzzing import JSON_VALUES, budget

SECRET = b"f" * 32
NOW = 1_800_000_000.0
TOKENISH = st.one_of(
    st.text(max_size=200),
    st.lists(st.text(alphabet="AZaz09-_.=+/é", max_size=60), min_size=1, max_size=5).map(".".join),
    st.text(max_size=100).map(lambda t: "v1." + t),
)


def signed(claims: Any) -> str:
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    mac = hmac.new(auth._key(SECRET), f"v1.{payload}".encode(), hashlib.sha256).digest()
    return f"v1.{payload}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def sound(principal: Principal) -> None:
    assert is_valid_tenant(principal.tenant)
    assert principal.scopes and principal.scopes <= set(SCOPES)
    assert principal.subject.startswith("tok:")


@budget(400)
@given(TOKENISH)
def test_any_text_as_a_token_is_refused_with_token_error(token: str) -> None:
    with contextlib.suppress(TokenError):
        sound(verify_token(SECRET, token, now=NOW, max_ttl_s=86400))


@budget(400)
@given(
    st.one_of(
        JSON_VALUES, st.fixed_dictionaries({}, optional=dict.fromkeys(["ten", "scp", "iat", "exp", "jti"], JSON_VALUES))
    )
)
def test_correctly_signed_garbage_claims_give_a_sound_principal_or_token_error(claims: Any) -> None:
    with contextlib.suppress(TokenError):
        sound(verify_token(SECRET, signed(claims), now=NOW, max_ttl_s=86400))


@budget(300)
@given(st.one_of(st.none(), st.text(max_size=120), TOKENISH.map(lambda t: "Bearer " + t)))
def test_any_authorization_header_gives_a_principal_none_or_unauthorized(header: str | None) -> None:
    authn = Authenticator(SECRET, clock=lambda: NOW)
    try:
        found = authn.from_header(header)
    except ProtocolError as exc:
        assert exc.code == "unauthorized" and exc.message
        return
    assert found is None if header is None else found is not None


@budget(400)
@given(st.text(max_size=120), st.sampled_from([("127.0.0.1", 8765), ("::1", 1), ("10.0.0.2", 80)]))
def test_any_origin_is_judged_without_raising(origin: str, local: tuple[str, int]) -> None:
    normalized = normalize_origin(origin)
    assert normalized is None or normalize_origin(normalized) == normalized  # canonical form is stable
    assert isinstance(OriginPolicy(["https://agent.example.com"], "0.0.0.0").allows(origin, local), bool)
