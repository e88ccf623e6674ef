"""Sections that hold credentials: a secret given empty or blank is unset, and noted as such.

Reason to change: how a credential in the settings is read or reported.
"""

from __future__ import annotations

import typing
from typing import Any, Self

from pydantic import BaseModel, ModelWrapValidatorHandler, PrivateAttr, SecretStr, model_validator


def is_blank(value: object) -> bool:
    """An empty or whitespace-only secret (``AGENT_TWILIO__AUTH_TOKEN=``): a mistake, never a key."""
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    return isinstance(text, str) and not text.strip()


class WithSecrets(BaseModel):
    """A section whose ``SecretStr | None`` fields are credentials: one given empty or blank is unset (None),
    never the HMAC key ``''`` anyone can sign with, and its name is kept in ``blank_secrets`` so that the start-up
    check (``agent.front_door.exposure``) can say it was set but empty."""

    _blank: frozenset[str] = PrivateAttr(default_factory=frozenset)

    @model_validator(mode="wrap")
    @classmethod
    def _blank_is_unset(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if not isinstance(data, dict):
            return handler(data)  # a section built already keeps what it noted
        blank = frozenset(name for name in cls.secret_fields() if is_blank(data.get(name)))
        section = handler({k: None if k in blank else v for k, v in data.items()})
        section._blank = blank
        return section

    @classmethod
    def secret_fields(cls) -> tuple[str, ...]:
        """The fields holding credentials (annotated ``SecretStr | None``)."""
        return tuple(name for name, info in cls.model_fields.items() if SecretStr in typing.get_args(info.annotation))

    @property
    def blank_secrets(self) -> frozenset[str]:
        """The secret fields given empty or blank, now unset."""
        return self._blank
