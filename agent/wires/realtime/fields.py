"""Checked fields of OpenAI Realtime client events (pure): each check returns the value or raises
``RealtimeError`` naming the parameter, as the API's ``error`` event does."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from agent.errors import ProtocolError

MAX_TEXT_CHARS = 100_000
MAX_ID_CHARS = 64


class RealtimeError(ProtocolError):
    """A refused client event: sent back as ``error`` with ``param`` and the event's ``event_id``."""

    def __init__(self, code: str, message: str, param: str | None = None, event_id: str | None = None) -> None:
        super().__init__(code, message)
        self.param = param
        self.event_id = event_id


def obj(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RealtimeError("invalid_value", f"{param} must be an object", param)
    return value


def audio(value: Any, param: str) -> bytes:
    if not isinstance(value, str) or not value:
        raise RealtimeError("invalid_value", f"{param} must be a non-empty base64 string", param)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise RealtimeError("invalid_value", f"{param} is not valid base64", param) from None


def identifier(value: Any, param: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID_CHARS:
        raise RealtimeError("invalid_value", f"{param} must be a string of 1-{MAX_ID_CHARS} characters", param)
    return value


def optional_id(value: Any, param: str) -> str | None:
    return None if value is None else identifier(value, param)


def optional_text(value: Any, param: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_TEXT_CHARS:
        raise RealtimeError("invalid_value", f"{param} must be a string of at most {MAX_TEXT_CHARS} characters", param)
    return value


def integer(value: Any, param: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RealtimeError("invalid_value", f"{param} must be an integer from {low} to {high}", param)
    return value


def optional_int(value: Any, param: str, low: int, high: int) -> int | None:
    return None if value is None else integer(value, param, low, high)


def boolean(value: Any, param: str) -> bool:
    if not isinstance(value, bool):
        raise RealtimeError("invalid_value", f"{param} must be true or false", param)
    return value
