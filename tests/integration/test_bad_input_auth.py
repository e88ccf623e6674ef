"""The front door over real sockets: origins, credentials and HTTP hygiene, each with a bystander session.

Raw HTTP requests (every method, duplicate headers, bodies, spoofed Host) go over plain TCP; WebSocket
cases use the websockets client. The server runs with auth on (``AGENT_AUTH__SECRET``) and one configured
origin; a bystander session, opened with a valid token before each case, must still answer afterwards.
Documented answers: docs/security.md and docs/protocol.md ("Authentication").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from agent.security.auth import mint_token
from agent.wires.phone.twilio import codec as twilio
from testing.sockets import next_json
from tests.integration.conftest import local_settings

SECRET = "front-door-test-secret-0123456789abcdef"
ALLOWED = "https://agent.example.com"
START: dict[str, Any] = {"type": "session.start", "sample_rate": 16000, "voice": None}
KEY = "dGhlIHNhbXBsZSBub25jZQ=="


def token(*scopes: str, secret: str = SECRET, issued: float | None = None, ttl: int = 3600) -> str:
    now = time.time() if issued is None else issued
    return mint_token(secret.encode(), "default", scopes or ("call",), ttl, now=now, max_ttl_s=86400)


def credentials() -> dict[str, str]:
    """Minted when a case runs (never at collection), so a long test run cannot expire them."""
    return {
        "token": token("call"),
        "expired": token("call", issued=time.time() - 7200, ttl=600),
        "forged": token("call", secret="an-attacker-guessed-this-secret-000000"),
        "enroll_only": token("enroll"),
    }


async def alive(ws: ClientConnection) -> None:
    """The bystander's session still answers."""
    await ws.send('{"type":"session.dance"}')
    message = await next_json(ws)
    assert message["type"] == "error" and message["code"] == "unknown_type", message


@pytest.fixture
async def guarded(components: Components) -> AsyncIterator[RunningServer]:
    settings = local_settings(auth={"secret": SECRET}, server={"allowed_origins": [ALLOWED]})
    async with running_server(settings, lambda: components) as running:
        await running.wait_ready()
        yield running


@pytest.fixture
async def bystander(guarded: RunningServer) -> AsyncIterator[ClientConnection]:
    async with connect(guarded.ws_url, additional_headers={"Authorization": f"Bearer {token()}"}) as ws:
        await ws.send(json.dumps(START))
        assert (await next_json(ws))["type"] == "session.started"
        yield ws


# --- HTTP level -------------------------------------------------------------------------------------------


def request(method: str, path: str, *headers: str, host: str = "127.0.0.1:{port}", body: str = "") -> str:
    return "\r\n".join([f"{method} {path} HTTP/1.1", f"Host: {host}", *headers]) + "\r\n\r\n" + body


def upgrade(path: str = "/ws", *headers: str, method: str = "GET", host: str = "127.0.0.1:{port}") -> str:
    hello = ("Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {KEY}", "Sec-WebSocket-Version: 13")
    return request(method, path, *hello, *headers, host=host)


@dataclass
class Answer:
    status: int | None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


async def send_raw(server: RunningServer, raw: str) -> Answer:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(raw.format(port=server.port, **credentials()).encode())
        await writer.drain()
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except asyncio.IncompleteReadError as exc:
            assert exc.partial == b"", exc.partial  # closed without an answer
            return Answer(None)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = b"" if status == 101 else await asyncio.wait_for(reader.read(), 10)  # the server closes after
        return Answer(status, headers, body)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


JSON_REFUSAL = {"content-type": "application/json", "x-content-type-options": "nosniff"}
ALLOW_GET = {"allow": "GET"}
ALLOW_READ = {"allow": "GET, HEAD"}

HTTP_CASES = [
    # a page from another origin may not use the server, whatever it carries
    pytest.param(upgrade("/ws", "Origin: https://evil.example"), 403, JSON_REFUSAL, id="foreign-origin"),
    pytest.param(
        upgrade("/ws", "Origin: https://evil.example", "Authorization: Bearer {token}"),
        403,
        JSON_REFUSAL,
        id="foreign-origin-with-valid-token",
    ),
    pytest.param(
        upgrade("/twilio", "Origin: https://evil.example", "Authorization: Bearer {token}"),
        403,
        JSON_REFUSAL,
        id="foreign-origin-on-twilio",
    ),
    pytest.param(upgrade("/ws", "Origin: null"), 403, {}, id="null-origin-sandboxed-frame"),
    pytest.param(upgrade("/ws", "Origin: https://agent.example.com/app"), 403, {}, id="origin-with-a-path"),
    pytest.param(upgrade("/ws", "Origin: http://agent.example.com"), 403, {}, id="origin-scheme-differs"),
    pytest.param(upgrade("/ws", "Origin: http://localhost.evil.example"), 403, {}, id="origin-localhost-lookalike"),
    pytest.param(upgrade("/ws", "Origin: javascript:alert(1)"), 403, {}, id="origin-not-a-url"),
    pytest.param(upgrade("/ws", f"Origin: {ALLOWED}", "Origin: https://evil.example"), 403, {}, id="origin-repeated"),
    pytest.param(
        upgrade("/ws", "Origin: http://evil.example:{port}", host="evil.example:{port}"),
        403,
        {},
        id="dns-rebinding-host-and-origin-agree",
    ),
    # only GET upgrades
    pytest.param(upgrade("/ws", method="POST"), 405, ALLOW_GET, id="post-upgrade"),
    pytest.param(upgrade("/twilio", method="PUT"), 405, ALLOW_GET, id="put-upgrade-twilio"),
    pytest.param(request("HEAD", "/ws"), 405, ALLOW_GET, id="head-ws"),
    # /twilio without a Twilio token, auth on: a bearer with the call scope, else 401/403 at the handshake
    pytest.param(upgrade("/twilio"), 401, {"www-authenticate": "Bearer"}, id="twilio-no-credentials"),
    pytest.param(upgrade("/twilio", "Authorization: Bearer {forged}"), 401, {}, id="twilio-forged-token"),
    pytest.param(upgrade("/twilio", "Authorization: Bearer {expired}"), 401, {}, id="twilio-expired-token"),
    pytest.param(upgrade("/twilio", "Authorization: Basic dXNlcjpwdw=="), 401, {}, id="twilio-basic-auth"),
    pytest.param(
        upgrade("/twilio", "Authorization: Bearer {token}", "Authorization: Bearer {forged}"),
        401,
        {},
        id="twilio-authorization-repeated",
    ),
    pytest.param(upgrade("/twilio", "Authorization: Bearer {enroll_only}"), 403, {}, id="twilio-without-call-scope"),
    # HTTP routes: GET and HEAD only
    pytest.param(request("POST", "/"), 405, ALLOW_READ, id="post-page"),
    pytest.param(request("PUT", "/healthz"), 405, ALLOW_READ, id="put-healthz"),
    pytest.param(request("DELETE", "/metrics"), 405, ALLOW_READ, id="delete-metrics"),
    pytest.param(request("PATCH", "/app.js"), 405, ALLOW_READ, id="patch-asset"),
    pytest.param(request("OPTIONS", "/"), 405, ALLOW_READ, id="options-page"),
    pytest.param(request("TRACE", "/"), 405, ALLOW_READ, id="trace-page"),
    pytest.param(request("POST", "/healthz", "Content-Length: 0"), 405, ALLOW_READ, id="post-empty-body"),
    pytest.param(request("get", "/"), 405, ALLOW_READ, id="lower-case-method"),
    pytest.param(request("DELETE", "/nope"), 404, {}, id="delete-unknown-path"),
    pytest.param(request("GET", "/%2e%2e/pyproject.toml"), 404, {}, id="encoded-traversal"),
    pytest.param(
        request("POST", "/", "Content-Length: 5", body="hello"), None, {}, id="post-with-body-closed-unanswered"
    ),
    pytest.param(
        request("POST", "/", "Transfer-Encoding: chunked", body="5\r\nhello\r\n0\r\n\r\n"),
        None,
        {},
        id="chunked-body-closed-unanswered",
    ),
]


@pytest.mark.parametrize(("raw", "status", "headers"), HTTP_CASES)
async def test_http_and_upgrade_refusals(
    guarded: RunningServer, bystander: ClientConnection, raw: str, status: int | None, headers: dict[str, str]
) -> None:
    answer = await send_raw(guarded, raw)
    assert answer.status == status, answer
    for name, value in headers.items():
        assert answer.headers.get(name, "").startswith(value), (name, answer.headers)
    if status in (401, 403, 405):
        body = json.loads(answer.body)
        assert body["error"]  # a JSON reason
    await alive(bystander)


@pytest.mark.parametrize("path", ["/", "/healthz", "/metrics", "/app.js"])
async def test_head_has_the_headers_of_get_without_a_body(guarded: RunningServer, path: str) -> None:
    got = await send_raw(guarded, request("GET", path))
    head = await send_raw(guarded, request("HEAD", path))
    assert head.status == got.status == 200
    assert head.body == b"" and len(got.body) > 0
    assert head.headers["content-length"] == got.headers["content-length"] == str(len(got.body))
    assert head.headers["content-type"] == got.headers["content-type"]


async def test_page_security_headers(guarded: RunningServer) -> None:
    page = await send_raw(guarded, request("GET", "/"))
    csp = page.headers["content-security-policy"]
    for directive in ("default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"):
        assert directive in csp
    assert "worker-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["x-frame-options"] == "DENY"
    assert "microphone=(self)" in page.headers["permissions-policy"]
    for path in ("/healthz", "/metrics", "/app.js"):
        other = await send_raw(guarded, request("GET", path))
        assert other.headers["x-content-type-options"] == "nosniff", path
        assert other.headers["referrer-policy"] == "no-referrer", path


ACCEPTED_UPGRADES = [
    pytest.param(upgrade("/ws", f"Origin: {ALLOWED}", "Authorization: Bearer {token}"), id="configured-origin"),
    pytest.param(upgrade("/ws", "Origin: http://localhost:5173"), id="localhost-page-any-port"),
    pytest.param(upgrade("/ws", "Origin: http://127.0.0.1:{port}"), id="own-origin"),
    pytest.param(upgrade("/ws", "Origin: http://[::1]:3000"), id="ipv6-loopback-page"),
    pytest.param(upgrade("/ws", "Authorization: Bearer {token}"), id="no-origin-valid-token"),
    pytest.param(upgrade("/ws"), id="no-origin-no-token-session-start-decides"),
    pytest.param(upgrade("/twilio", "Authorization: Bearer {token}"), id="twilio-valid-bearer"),
]


@pytest.mark.parametrize("raw", ACCEPTED_UPGRADES)
async def test_allowed_upgrades_switch_protocols(guarded: RunningServer, raw: str) -> None:
    assert (await send_raw(guarded, raw)).status == 101


# --- WebSocket level: the credentials decide ------------------------------------------------------------


async def answers(ws: ClientConnection, start: dict[str, Any]) -> list[dict[str, Any]]:
    """Send ``start`` (if still possible) and collect the text messages until the server closes."""
    with contextlib.suppress(ConnectionClosed):
        await ws.send(json.dumps(start))
    messages: list[dict[str, Any]] = []
    with contextlib.suppress(ConnectionClosed):
        while True:
            messages.append(await next_json(ws))
    return messages


REFUSED_CALLERS = [
    pytest.param("Bearer {forged}", None, id="forged-header-token"),
    pytest.param("Bearer {expired}", None, id="expired-header-token"),
    pytest.param("Basic dXNlcjpwdw==", None, id="basic-auth-header"),
    pytest.param("Bearer", None, id="bearer-without-token"),
    pytest.param(None, None, id="no-token-at-all"),
    pytest.param(None, "{forged}", id="forged-token-in-session-start"),
    pytest.param(None, "{expired}", id="expired-token-in-session-start"),
    pytest.param(None, "", id="empty-token-in-session-start"),
    pytest.param(None, "v1.e30.AAAA", id="malformed-token-in-session-start"),
]


@pytest.mark.parametrize(("header", "in_start"), REFUSED_CALLERS)
async def test_unauthenticated_callers_get_unauthorized_then_1008(
    guarded: RunningServer, bystander: ClientConnection, header: str | None, in_start: str | None
) -> None:
    creds = credentials()
    extra = {"Authorization": header.format(**creds)} if header is not None else {}
    start = dict(START)
    if in_start is not None:
        start["token"] = in_start.format(**creds)
    async with connect(guarded.ws_url, additional_headers=extra) as ws:
        messages = await answers(ws, start)
        assert ws.close_code == 1008, (ws.close_code, messages)
    assert [m["code"] for m in messages if m["type"] == "error"] == ["unauthorized"], messages
    assert not [m for m in messages if m["type"] == "session.started"]
    await alive(bystander)


async def test_a_token_without_the_call_scope_cannot_start_a_session(
    guarded: RunningServer, bystander: ClientConnection
) -> None:
    enroll_only = credentials()["enroll_only"]
    async with connect(guarded.ws_url, additional_headers={"Authorization": f"Bearer {enroll_only}"}) as ws:
        messages = await answers(ws, START)
        assert ws.close_code == 1008, (ws.close_code, messages)
    assert [m["code"] for m in messages if m["type"] == "error"] == ["forbidden"], messages
    await alive(bystander)


@pytest.mark.parametrize("where", ["header", "session.start", "both"])
async def test_a_valid_token_starts_a_session(guarded: RunningServer, bystander: ClientConnection, where: str) -> None:
    valid = credentials()["token"]
    extra = {"Authorization": f"Bearer {valid}"} if where in ("header", "both") else {}
    start = {**START, "token": valid} if where in ("session.start", "both") else START
    async with connect(guarded.ws_url, additional_headers=extra) as ws:
        await ws.send(json.dumps(start))
        assert (await next_json(ws))["type"] == "session.started"
    await alive(bystander)


async def test_with_auth_off_any_header_is_ignored(server: RunningServer) -> None:
    async with connect(server.ws_url, additional_headers={"Authorization": "Bearer whatever"}) as ws:
        await ws.send(json.dumps(START))
        assert (await next_json(ws))["type"] == "session.started"
    refused = await send_raw(server, upgrade("/ws", "Origin: https://evil.example"))
    assert refused.status == 403  # the origin check does not depend on auth


async def test_twilio_signature_decides_when_a_twilio_token_is_set(components: Components) -> None:
    settings = local_settings(auth={"secret": SECRET}, twilio={"auth_token": "twilio-token", "public_url": ""})
    async with running_server(settings, lambda: components) as srv:
        await srv.wait_ready()
        url = f"wss://127.0.0.1:{srv.port}/twilio"  # what Twilio signs when no public URL is set
        signed = upgrade("/twilio", f"X-Twilio-Signature: {twilio.signature('twilio-token', url)}")
        assert (await send_raw(srv, signed)).status == 101
        forged = upgrade("/twilio", f"X-Twilio-Signature: {twilio.signature('other-token', url)}")
        assert (await send_raw(srv, forged)).status == 403
        bearer_only = upgrade("/twilio", "Authorization: Bearer {token}")  # a token does not replace the signature
        assert (await send_raw(srv, bearer_only)).status == 403
