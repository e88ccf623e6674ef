"""A malformed WebSocket handshake is named before any question of load (``agent.runtime.server.handshake``), and
the verdict agrees with the ``websockets`` library's own check (``ServerProtocol.accept``) on every request here:
well formed for one means well formed for the other, so nothing the routes let through is refused below them
for its form.
"""

from __future__ import annotations

import base64
from http import HTTPStatus

import pytest
from websockets.datastructures import Headers
from websockets.http11 import Request
from websockets.server import ServerProtocol

from agent.runtime.server.handshake import bad_handshake

KEY = base64.b64encode(b"0123456789abcdef").decode()
GOOD = (("Host", "127.0.0.1"), ("Upgrade", "websocket"), ("Connection", "Upgrade"))


def headers(*pairs: tuple[str, str], key: str | None = KEY, version: str | None = "13") -> Headers:
    made = Headers(list(pairs) if pairs else list(GOOD))
    if key is not None:
        made["Sec-WebSocket-Key"] = key
    if version is not None:
        made["Sec-WebSocket-Version"] = version
    return made


CASES: list[tuple[str, Headers, str | None]] = [
    ("well formed", headers(), None),
    ("keep-alive, Upgrade", headers(("Upgrade", "WebSocket"), ("Connection", "keep-alive, Upgrade")), None),
    ("no Connection", headers(("Upgrade", "websocket")), "not_websocket"),
    ("Connection: close", headers(("Upgrade", "websocket"), ("Connection", "close")), "not_websocket"),
    ("no Upgrade", headers(("Connection", "Upgrade")), "not_websocket"),
    ("Upgrade: h2c", headers(("Upgrade", "h2c"), ("Connection", "Upgrade")), "not_websocket"),
    ("two protocols", headers(("Upgrade", "websocket, h2c"), ("Connection", "Upgrade")), "not_websocket"),
    ("garbled Connection", headers(("Upgrade", "websocket"), ("Connection", "@@")), "not_websocket"),
    ("no key", headers(key=None), "bad_handshake"),
    ("key not base64", headers(key="not base64!"), "bad_handshake"),
    ("key of 8 bytes", headers(key=base64.b64encode(b"01234567").decode()), "bad_handshake"),
    ("key not ASCII", headers(key="\u00e9" * 24), "bad_handshake"),
    ("no version", headers(version=None), "bad_version"),
    ("version 12", headers(version="12"), "bad_version"),
    ("version 8", headers(version="8"), "bad_version"),
]


@pytest.mark.parametrize(("name", "request_headers", "reason"), CASES, ids=[case[0] for case in CASES])
def test_each_malformed_handshake_is_named_as_the_library_would_refuse_it(
    name: str, request_headers: Headers, reason: str | None
) -> None:
    found = bad_handshake(request_headers)
    assert (found.reason if found is not None else None) == reason
    library = ServerProtocol().accept(Request("/ws", request_headers))
    assert (library.status_code == HTTPStatus.SWITCHING_PROTOCOLS) is (found is None), library.body


def test_repeated_keys_and_versions_are_malformed() -> None:
    twice = headers()
    twice["Sec-WebSocket-Key"] = KEY
    assert (found := bad_handshake(twice)) is not None and found.reason == "bad_handshake"
    twice = headers()
    twice["Sec-WebSocket-Version"] = "13"
    assert (found := bad_handshake(twice)) is not None and found.reason == "bad_version"


def test_the_answers_are_rfc_6455s() -> None:
    version = bad_handshake(headers(version="12"))
    assert version is not None and version.status == HTTPStatus.UPGRADE_REQUIRED
    assert ("Sec-WebSocket-Version", "13") in version.headers  # the versions the server understands (4.2.2)
    plain = bad_handshake(headers(("Host", "x")))
    assert (
        plain is not None and plain.status == HTTPStatus.UPGRADE_REQUIRED and ("Upgrade", "websocket") in plain.headers
    )
    key = bad_handshake(headers(key=None))
    assert key is not None and key.status == HTTPStatus.BAD_REQUEST and key.headers == ()
