"""Checked reads of JSON message fields, shared by the phone codecs (Twilio, Telnyx, Vonage).

Each raises ``ProtocolError`` with the code protocol v1 uses for it (``bad_json``, ``bad_message``,
``bad_audio``, ``frame_too_long``); nothing here knows a provider.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from agent.errors import ProtocolError

MAX_PARAMETERS = 32  # custom parameters: name → value strings
MAX_PARAMETER_CHARS = 1024
MAX_NAME_CHARS = 256  # ids, mark names, versions


def json_object(text: str | bytes, provider: str) -> dict[str, Any]:
    """A text frame holding a JSON object. Binary frames are ``bad_message``, bad JSON ``bad_json``."""
    if isinstance(text, bytes):
        raise ProtocolError("bad_message", f"{provider} sends text frames only")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        raise ProtocolError("bad_json", "not JSON") from None
    return obj(message, "a message")


def obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolError("bad_message", f"{what} must be an object")
    return value


def text(message: dict[str, Any], key: str, what: str) -> str:
    """A non-empty string of at most ``MAX_NAME_CHARS``."""
    value = message.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME_CHARS:
        raise ProtocolError("bad_message", f"{what} needs a string {key!r} of 1-{MAX_NAME_CHARS} characters")
    return value


def parameters(value: Any, what: str) -> dict[str, str]:
    """Custom parameters: string names to string values (absent: none)."""
    params = obj(value if value is not None else {}, what)
    if len(params) > MAX_PARAMETERS:
        raise ProtocolError("bad_message", f"{what} holds over {MAX_PARAMETERS} entries")
    for key, item in params.items():
        if not isinstance(item, str) or len(key) > MAX_NAME_CHARS or len(item) > MAX_PARAMETER_CHARS:
            raise ProtocolError(
                "bad_message", f"{what} values must be strings of at most {MAX_PARAMETER_CHARS} characters"
            )
    return dict(params)


def event(message: dict[str, Any]) -> str:
    """The message's ``event`` name (``bad_message`` when it is missing or not a string)."""
    name = message.get("event")
    if not isinstance(name, str):
        raise ProtocolError("bad_message", "every message needs a string 'event'")
    return name


def unknown(name: str) -> ProtocolError:
    return ProtocolError("unknown_type", f"unknown event {name[:40]!r}")


def payload(value: Any, max_bytes: int) -> bytes:
    """A base64 media payload: non-empty, valid, at most ``max_bytes`` once decoded."""
    if not isinstance(value, str):
        raise ProtocolError("bad_audio", "media needs a base64 string payload")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError("bad_audio", "media payload is not valid base64") from None
    if not data:
        raise ProtocolError("bad_audio", "empty media payload")
    if len(data) > max_bytes:
        raise ProtocolError("frame_too_long", f"media payload of {len(data)} bytes")
    return data
