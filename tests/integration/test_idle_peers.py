"""Idle, slow and unauthenticated peers cost a real caller nothing (real sockets, real tiny.en and Piper).

Admission counts work, not sockets: sessions that started and say nothing, and sockets that never authenticate,
are not load. Sockets whose session has not started are bounded per client address (429) and in total (503),
and never counted as sessions. Clients come from several loopback addresses (127.0.0.0/8 is all this machine),
so one address's bound is seen not to touch another's. A bad token is told so (401, or ``error`` and 1008),
never 503 for load. Nothing is timed: waits only guard against a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agent.front_door.listener import running_server
from agent.runtime.components import Components
from agent.security.auth import mint_token
from testing.sockets import read_until
from testing.speech import silence, speech_pcm16
from testing.waits import within
from tests.integration.conftest import local_settings, models_at_rest

pytestmark = pytest.mark.models

SECRET = "idle-peers-test-secret-0123456789abcdefgh"
PATIENCE_S = 60.0  # only against a hang


def token(*, issued: float | None = None, ttl: int = 3600) -> str:
    now = time.time() if issued is None else issued
    return mint_token(SECRET.encode(), "default", ("call",), ttl, now=now, max_ttl_s=86400)


def start(tok: str | None) -> str:
    message: dict[str, Any] = {"type": "session.start", "sample_rate": 16000, "voice": None}
    if tok is not None:
        message["token"] = tok
    return json.dumps(message)


async def from_address(url: str, host: str, port: int, **kwargs: Any) -> ClientConnection:
    """A WebSocket client whose TCP connection comes from ``host`` (a loopback address of this machine)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await connect(url, sock=sock, **kwargs)


async def next_of(ws: ClientConnection, kind: str) -> dict[str, Any]:
    return (await read_until(ws, kind, PATIENCE_S))[-1]


def health(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url + "/healthz") as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def test_twenty_idle_sessions_and_twenty_unauthenticated_sockets_leave_a_caller_served(
    components: Components,
) -> None:
    settings = local_settings(auth={"secret": SECRET}, server={"admission_wait_ms": 500})
    async with running_server(settings, lambda: components) as server, contextlib.AsyncExitStack() as stack:
        await server.wait_ready()
        await models_at_rest(components)  # what earlier tests left running is load, and admission counts it
        url, port = server.ws_url, server.port
        # Twenty sessions that started with a valid token and then say nothing at all.
        for i in range(20):
            idle = await stack.enter_async_context(await from_address(url, f"127.0.1.{i + 1}", port))
            await idle.send(start(token()))
            await next_of(idle, "session.started")
        # Twenty sockets that never authenticate, from twenty addresses: opening, never load.
        for i in range(20):
            await stack.enter_async_context(await from_address(url, f"127.0.2.{i + 1}", port))
        # One address opening many: past its bound it gets 429, and nobody else notices.
        crowd = [await stack.enter_async_context(await from_address(url, "127.0.3.1", port)) for _ in range(8)]
        with pytest.raises(InvalidStatus) as info:
            await from_address(url, "127.0.3.1", port)
        assert info.value.response.status_code == 429 and "Retry-After" in info.value.response.headers
        assert json.loads(info.value.response.body)["reason"] == "peer_limit"
        assert len(crowd) == 8

        status, body = await asyncio.to_thread(health, server.http_url)
        assert status == 200 and body["status"] == "ok", body
        assert (body["sessions"], body["opening"], body["speaking"]) == (20, 28, 0), body

        # A real caller is admitted and answered.
        async with await from_address(url, "127.0.0.1", port) as caller:
            await caller.send(start(token()))
            await next_of(caller, "session.started")
            pcm = silence(300) + speech_pcm16("What time is it?") + silence(1500)
            for i in range(0, len(pcm), 3200):
                await caller.send(pcm[i : i + 3200])
            transcript = await next_of(caller, "transcript")
            assert "time" in transcript["text"].lower(), transcript
            await next_of(caller, "audio.start")

            async def audio() -> None:
                while not isinstance(await caller.recv(), bytes):
                    pass

            await within(audio(), PATIENCE_S, "reply audio to reach the caller")


async def test_an_expired_token_is_told_unauthorized_even_on_a_full_server(components: Components) -> None:
    settings = local_settings(auth={"secret": SECRET}, server={"max_sessions": 1})
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        expired = token(issued=time.time() - 7200, ttl=600)
        async with connect(server.ws_url) as live:  # the one session: the server is full now
            await live.send(start(token()))
            await next_of(live, "session.started")
            with pytest.raises(InvalidStatus) as full:
                await connect(server.ws_url, additional_headers={"Authorization": f"Bearer {token()}"})
            assert full.value.response.status_code == 503

            # /ws: the upgrade is taken so that the protocol can say why: error unauthorized, then 1008.
            async with connect(server.ws_url, additional_headers={"Authorization": f"Bearer {expired}"}) as ws:
                error = await next_of(ws, "error")
                assert error["code"] == "unauthorized"
                with contextlib.suppress(ConnectionClosed):
                    await within(ws.recv(), PATIENCE_S, "the close after the error")
            assert ws.close_code == 1008

            # /v1/realtime: 401 at the upgrade, as OpenAI answers.
            with pytest.raises(InvalidStatus) as realtime:
                await connect(
                    server.http_url.replace("http", "ws") + "/v1/realtime",
                    additional_headers={"Authorization": f"Bearer {expired}"},
                )
            assert realtime.value.response.status_code == 401


async def test_behind_trusted_proxies_each_client_is_bounded_by_its_forwarded_address(
    components: Components,
) -> None:
    proxied = local_settings(server={"trusted_proxies": ["127.0.0.0/8"], "max_opening_per_peer": 2})
    async with running_server(proxied, lambda: components) as server, contextlib.AsyncExitStack() as stack:
        await server.wait_ready()
        url, port = server.ws_url, server.port

        def via_proxy(client: str) -> dict[str, str]:
            return {"X-Forwarded-For": f"6.6.6.6, {client}"}  # the first hop is the client's own claim

        for _ in range(2):
            await stack.enter_async_context(
                await from_address(url, "127.0.5.1", port, additional_headers=via_proxy("203.0.113.5"))
            )
        with pytest.raises(InvalidStatus) as info:
            await from_address(url, "127.0.5.2", port, additional_headers=via_proxy("203.0.113.5"))
        assert info.value.response.status_code == 429
        # Another client through the same proxy is not touched.
        other = await stack.enter_async_context(
            await from_address(url, "127.0.5.1", port, additional_headers=via_proxy("203.0.113.6"))
        )
        await other.send(start(None))
        await next_of(other, "session.started")

    direct = local_settings(server={"max_opening_per_peer": 2})
    async with running_server(direct, lambda: components) as server, contextlib.AsyncExitStack() as stack:
        await server.wait_ready()
        # No trusted proxies: a forged header changes nothing.
        for i in range(2):
            headers = {"X-Forwarded-For": f"198.51.100.{i}"}
            await stack.enter_async_context(
                await from_address(server.ws_url, "127.0.6.1", server.port, additional_headers=headers)
            )
        with pytest.raises(InvalidStatus) as info:
            await from_address(
                server.ws_url, "127.0.6.1", server.port, additional_headers={"X-Forwarded-For": "198.51.100.9"}
            )
        assert info.value.response.status_code == 429


async def test_a_phone_provider_whose_credential_checked_out_is_held_to_the_total_bound_only(
    components: Components,
) -> None:
    token = "telnyx-stream-token-for-the-test"
    settings = local_settings(server={"max_opening_per_peer": 1}, telnyx={"stream_auth_token": token})
    async with running_server(settings, lambda: components) as server, contextlib.AsyncExitStack() as stack:
        await server.wait_ready()
        # Telnyx's media servers carry many calls from a few addresses: two streams not started yet, one address.
        for _ in range(2):
            await stack.enter_async_context(connect(f"{server.url('telnyx')}?token={token}"))
        assert server.state.occupancy.opening == 2
        # Anyone else: one connection that has not started per address, then 429.
        await stack.enter_async_context(await from_address(server.ws_url, "127.0.7.1", server.port))
        with pytest.raises(InvalidStatus) as info:
            await from_address(server.ws_url, "127.0.7.1", server.port)
        assert info.value.response.status_code == 429
