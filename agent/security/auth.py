"""Who is calling: the ``Principal`` every connection runs as, and tenant names.

The token codec (sign, verify, expiry, scopes) lives here too; the check happens once, at the upgrade or
the first message, in the runtime. The session core never sees credentials, only a tenant.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.config.tenants import (  # part of this module's interface too
    DEFAULT_TENANT as DEFAULT_TENANT,
)
from agent.config.tenants import (
    MAX_TENANT as MAX_TENANT,
)
from agent.config.tenants import (
    is_valid_tenant as is_valid_tenant,
)
from agent.errors import ProtocolError

if TYPE_CHECKING:
    from agent.config import AuthSettings
SCOPES: tuple[str, ...] = ("call", "enroll", "admin")
"""``call``: hold a conversation; ``enroll``: add and remove voices; ``admin``: everything (all tenants' CLI)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller: its tenant, what it may do, and who it is for audit lines."""

    tenant: str
    scopes: frozenset[str]
    subject: str
    """``tok:<token id>`` for a token, ``anonymous`` when auth is off, ``cli`` for the local command line."""

    def allows(self, scope: str) -> bool:
        return scope in self.scopes or "admin" in self.scopes


ANONYMOUS = Principal(tenant=DEFAULT_TENANT, scopes=frozenset(SCOPES), subject="anonymous")
"""Every caller when auth is off (``AGENT_AUTH__SECRET`` unset)."""
CLI = Principal(tenant=DEFAULT_TENANT, scopes=frozenset(SCOPES), subject="cli")
TWILIO_CALLER = Principal(tenant=DEFAULT_TENANT, scopes=frozenset({"call"}), subject="twilio")
"""A ``/twilio`` call whose handshake carried a valid ``X-Twilio-Signature``."""

# --- tokens ------------------------------------------------------------------------------------------------
# v1.<payload>.<signature>: payload = base64url(JSON {ten, scp, iat, exp, jti}), signature =
# base64url(HMAC-SHA256(key, "v1." + payload)), key = HMAC-SHA256(secret, "voice-agent token key v1").
# The signature is checked (in constant time) before the payload is even decoded.

TOKEN_VERSION = "v1"
MAX_TOKEN_CHARS = 1024
CLOCK_SKEW_S = 60
"""A token issued up to this far in the future (another server's clock) is still accepted."""
_KEY_LABEL = b"voice-agent token key v1"
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
_FIELDS = frozenset({"ten", "scp", "iat", "exp", "jti"})


class TokenError(ValueError):
    """A token that cannot be minted or accepted; ``str(exc)`` says why (safe to send to the caller)."""


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if _B64URL.fullmatch(text) is None or len(text) % 4 == 1:
        raise TokenError("malformed token")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key(secret: bytes) -> bytes:
    return hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest()


def _check_claims(tenant: object, scopes: object) -> tuple[str, frozenset[str]]:
    if not isinstance(tenant, str) or not is_valid_tenant(tenant):
        raise TokenError("invalid tenant (1-64 of a-z 0-9 - _, starting with a letter or digit)")
    if not isinstance(scopes, (list, tuple, frozenset, set)) or not scopes:
        raise TokenError(f"a token needs at least one scope of {', '.join(SCOPES)}")
    unknown = sorted(str(s) for s in scopes if s not in SCOPES)
    if unknown:
        raise TokenError(f"unknown scope {unknown[0]!r} (known: {', '.join(SCOPES)})")
    return tenant, frozenset(str(s) for s in scopes)


def mint_token(
    secret: bytes,
    tenant: str,
    scopes: Iterable[str],
    ttl_s: int,
    *,
    now: float,
    max_ttl_s: int,
    token_id: str | None = None,
) -> str:
    """A signed token for ``tenant`` with ``scopes``, valid ``ttl_s`` seconds from ``now``."""
    ten, scp = _check_claims(tenant, list(scopes))
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or not 0 < ttl_s <= max_ttl_s:
        raise TokenError(f"ttl must be 1..{max_ttl_s} seconds")
    iat = int(now)
    claims = {
        "ten": ten,
        "scp": sorted(scp),
        "iat": iat,
        "exp": iat + ttl_s,
        "jti": token_id or secrets.token_hex(8),
    }
    payload = _b64encode(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    signed = f"{TOKEN_VERSION}.{payload}"
    return f"{signed}.{_b64encode(hmac.new(_key(secret), signed.encode(), hashlib.sha256).digest())}"


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TokenError("malformed token")
    return value


def verify_token(secret: bytes, token: str, *, now: float, max_ttl_s: int) -> Principal:
    """The principal a token names, or ``TokenError`` (forged, malformed, expired, too long-lived)."""
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS or not token.isascii():
        raise TokenError("malformed token")
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("malformed token")
    version, payload, signature = parts
    if version != TOKEN_VERSION:
        raise TokenError("unsupported token version")
    expected = hmac.new(_key(secret), f"{version}.{payload}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, _b64decode(signature)):
        raise TokenError("bad token signature")
    try:
        claims = json.loads(_b64decode(payload))
    except ValueError as exc:  # json and unicode errors
        raise TokenError("malformed token") from exc
    if not isinstance(claims, dict) or set(claims) != _FIELDS:
        raise TokenError("malformed token")
    tenant, scopes = _check_claims(claims["ten"], claims["scp"])
    iat, exp, jti = _int(claims["iat"]), _int(claims["exp"]), claims["jti"]
    if not isinstance(jti, str) or not 0 < len(jti) <= 64:
        raise TokenError("malformed token")
    if exp <= iat or exp - iat > max_ttl_s:
        raise TokenError(f"token lifetime exceeds the maximum of {max_ttl_s} s")
    if iat > now + CLOCK_SKEW_S:
        raise TokenError("token issued in the future")
    if now >= exp:
        raise TokenError("token expired")
    return Principal(tenant=tenant, scopes=scopes, subject=f"tok:{jti}")


class Authenticator:
    """Checks credentials for the runtime. Off (``secret`` None): every caller is ``ANONYMOUS``.

    Failures raise ``ProtocolError("unauthorized", reason)``; the connection answers ``error`` and closes 1008.
    """

    def __init__(
        self,
        secret: bytes | None,
        *,
        max_ttl_s: int = 86400,
        default_ttl_s: int = 3600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._secret = secret
        self.max_ttl_s = max_ttl_s
        self.default_ttl_s = default_ttl_s
        self._clock = clock

    @classmethod
    def from_settings(cls, settings: AuthSettings, clock: Callable[[], float] = time.time) -> Authenticator:
        secret = settings.secret.get_secret_value().encode() if settings.secret is not None else None
        return cls(secret, max_ttl_s=settings.max_ttl_s, default_ttl_s=settings.default_ttl_s, clock=clock)

    @property
    def enabled(self) -> bool:
        return self._secret is not None

    def mint(self, tenant: str, scopes: Iterable[str], ttl_s: int | None = None) -> str:
        """A new token (``TokenError`` for a bad tenant, scope or ttl; ``RuntimeError`` when auth is off)."""
        if self._secret is None:
            raise RuntimeError("auth is off: set AGENT_AUTH__SECRET to mint tokens")
        ttl = self.default_ttl_s if ttl_s is None else ttl_s
        return mint_token(self._secret, tenant, scopes, ttl, now=self._clock(), max_ttl_s=self.max_ttl_s)

    def from_token(self, token: str | None) -> Principal:
        """The caller a message's ``token`` names; a missing one is refused while auth is on."""
        if self._secret is None:
            return ANONYMOUS
        if not token:
            raise ProtocolError("unauthorized", 'a token is required (Authorization: Bearer, or "token")')
        try:
            return verify_token(self._secret, token, now=self._clock(), max_ttl_s=self.max_ttl_s)
        except TokenError as exc:
            raise ProtocolError("unauthorized", str(exc)) from None

    def from_header(self, value: str | None) -> Principal | None:
        """The caller an ``Authorization`` header names; ``None`` without a header (auth on)."""
        if self._secret is None:
            return ANONYMOUS
        if value is None:
            return None
        scheme, _, token = value.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or " " in token:
            raise ProtocolError("unauthorized", "the Authorization header must be 'Bearer TOKEN'")
        return self.from_token(token)
