"""Whether an upgrade request is a WebSocket opening handshake at all (RFC 6455 4.2.1), judged before anything
else about it (pure).

Its one reason to change is what makes a handshake well formed. ``websockets``' asyncio server calls
``process_request`` before it validates the handshake itself, so without this check a malformed one would be
answered for the server's load (503) or its sockets (429) instead of for what is wrong with it, and would take a
place among the sockets opening. The checks are the library's own (``ServerProtocol.process_request``), in its
order, with the header parsers it uses; the answers are RFC 6455's:

- no ``Connection: Upgrade`` or no single ``Upgrade: websocket``: 426 Upgrade Required with
  ``Upgrade: websocket`` (RFC 9110 15.5.22: a 426 names the protocol to switch to), reason ``not_websocket``;
- ``Sec-WebSocket-Key`` missing, repeated, or not the base64 of 16 bytes: 400, reason ``bad_handshake``;
- ``Sec-WebSocket-Version`` missing, repeated or not 13: 426 with ``Sec-WebSocket-Version: 13`` (RFC 6455
  4.2.2: the versions the server understands), reason ``bad_version``.

The method is the upgrade gate's first check (405), before this one.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from http import HTTPStatus
from typing import Literal

from websockets.datastructures import Headers
from websockets.exceptions import InvalidHeader
from websockets.headers import parse_connection, parse_upgrade

VERSION = "13"
"""The only WebSocket version there is (RFC 6455)."""

HandshakeReason = Literal["not_websocket", "bad_handshake", "bad_version"]


@dataclass(frozen=True, slots=True)
class BadHandshake:
    """What is wrong with a handshake, and how it is answered."""

    reason: HandshakeReason
    status: HTTPStatus
    message: str
    headers: tuple[tuple[str, str], ...] = ()


def _not_websocket(message: str) -> BadHandshake:
    return BadHandshake("not_websocket", HTTPStatus.UPGRADE_REQUIRED, message, (("Upgrade", "websocket"),))


def _tokens(headers: Headers, name: str) -> list[str] | None:
    """The tokens of every ``name`` header, as ``websockets`` parses them; ``None`` when one does not parse."""
    parse = parse_connection if name == "Connection" else parse_upgrade
    try:
        return [token for value in headers.get_all(name) for token in parse(value)]
    except InvalidHeader:
        return None


def _single(headers: Headers, name: str) -> str | None:
    values = headers.get_all(name)
    return values[0] if len(values) == 1 else None


def bad_handshake(headers: Headers) -> BadHandshake | None:
    """What makes the handshake whose headers are ``headers`` malformed, or ``None`` for a well-formed one."""
    connection = _tokens(headers, "Connection")
    if connection is None or not any(token.lower() == "upgrade" for token in connection):
        return _not_websocket("a WebSocket handshake needs Connection: Upgrade")
    upgrade = _tokens(headers, "Upgrade")
    if upgrade is None or len(upgrade) != 1 or upgrade[0].lower() != "websocket":
        return _not_websocket("a WebSocket handshake needs Upgrade: websocket")
    key = _single(headers, "Sec-WebSocket-Key")
    if key is None or not _is_key(key):
        return BadHandshake(
            "bad_handshake", HTTPStatus.BAD_REQUEST, "Sec-WebSocket-Key must be one base64-encoded 16-byte value"
        )
    if _single(headers, "Sec-WebSocket-Version") != VERSION:
        return BadHandshake(
            "bad_version",
            HTTPStatus.UPGRADE_REQUIRED,
            f"the only WebSocket version served is {VERSION} (Sec-WebSocket-Version)",
            (("Sec-WebSocket-Version", VERSION),),
        )
    return None


def _is_key(key: str) -> bool:
    try:
        return len(base64.b64decode(key.encode(), validate=True)) == 16
    except (binascii.Error, UnicodeEncodeError):
        return False
