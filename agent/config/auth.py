"""Who may call (``AGENT_AUTH__*``): the token key and the lifetimes of tokens; see docs/security.md.

Reason to change: the token scheme gains or loses an option.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

MIN_SECRET_BYTES = 32


class AuthSettings(BaseModel):
    """Who may call: signed, expiring tokens (see docs/security.md). Auth is on when ``secret`` is set."""

    secret: SecretStr | None = Field(
        None, description="HMAC key for tokens, at least 32 bytes; unset = auth off (every caller is anonymous)."
    )
    allow_anonymous: bool = Field(
        False, description="Allow auth off (or an unsigned /twilio) on a non-loopback address."
    )
    default_ttl_s: int = Field(3600, ge=1, description="Lifetime of a minted token when none is asked for.")
    max_ttl_s: int = Field(86400, ge=1, description="Longest token lifetime minted or accepted.")

    @field_validator("secret", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("secret")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().encode()) < MIN_SECRET_BYTES:
            raise ValueError(
                f"auth.secret must be at least {MIN_SECRET_BYTES} bytes; make one with "
                "python -c 'import secrets; print(secrets.token_urlsafe(48))'"
            )
        return value

    @model_validator(mode="after")
    def _ttls(self) -> AuthSettings:
        if self.default_ttl_s > self.max_ttl_s:
            raise ValueError("auth.default_ttl_s must not exceed auth.max_ttl_s")
        return self
