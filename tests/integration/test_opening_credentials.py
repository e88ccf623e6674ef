"""Anonymous sockets never cost an authenticated caller its call, over real sockets.

Sockets whose session has not started are bounded three ways (``agent.runtime.server.occupancy``): those with no
valid credential at the upgrade per client address and, together, to a share of the total; those whose upgrade
carried a valid token per tenant; all of them in total. An attacker holding anonymous sockets from the caller's
own address (a NAT, a proxy not listed in ``AGENT_SERVER__TRUSTED_PROXIES``), or from many addresses, therefore
leaves a caller with a token both admitted and answered. Clients come from several loopback addresses
(127.0.0.0/8 is all this machine). Stand-in models; nothing is timed: waits only guard against a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from agent.front_door.listener import RunningServer, running_server
from agent.security.auth import mint_token
from testing.sockets import http_get, read_until
from tests.integration.conftest import local_settings
from tests.integration.standins import standin_components

SECRET = "opening-credentials-test-secret-0123456789"
START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})


def bearer(tenant: str) -> dict[str, str]:
    token = mint_token(SECRET.encode(), tenant, ("call",), 3600, now=time.time(), max_ttl_s=86400)
    return {"Authorization": f"Bearer {token}"}


async def from_address(server: RunningServer, host: str, **kwargs: Any) -> ClientConnection:
    """A WebSocket client of ``/ws`` whose TCP connection comes from ``host`` (a loopback address)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", server.port))
    return await connect(server.ws_url, sock=sock, **kwargs)


async def refused(server: RunningServer, host: str, **kwargs: Any) -> tuple[int, str]:
    """The status and ``reason`` of an upgrade the server must refuse."""
    with pytest.raises(InvalidStatus) as info:
        await from_address(server, host, **kwargs)
    response = info.value.response
    assert "Retry-After" in response.headers
    return response.status_code, json.loads(response.body)["reason"]


async def answered(ws: ClientConnection) -> None:
    """The caller's session starts (the header's token is its credential)."""
    await ws.send(START)
    await read_until(ws, "session.started")


async def test_a_caller_with_a_token_is_not_refused_for_anonymous_sockets_from_its_own_address() -> None:
    components = standin_components()
    settings = local_settings(auth={"secret": SECRET}, server={"max_opening_per_peer": 4})
    async with running_server(settings, lambda: components) as server, contextlib.AsyncExitStack() as stack:
        await server.wait_ready()
        # Silent sockets with no token fill the address's bound; one more is refused, as before.
        for _ in range(4):
            await stack.enter_async_context(await from_address(server, "127.0.9.1"))
        assert await refused(server, "127.0.9.1") == (429, "peer_limit")
        # Callers with a token from the same address are counted against their tenant, not the address.
        callers = [
            await stack.enter_async_context(await from_address(server, "127.0.9.1", additional_headers=bearer("acme")))
            for _ in range(3)
        ]
        for caller in callers:
            await answered(caller)
        health = await asyncio.to_thread(http_get, server.http_url + "/healthz")
        assert health.status == 200 and health.json()["opening"] == 4, health.json()


async def test_anonymous_sockets_from_many_addresses_leave_room_for_callers_with_a_token() -> None:
    components = standin_components()
    # 8 opening in all, at most 6 of them without a credential (the default: a quarter kept); 2 per address; 1 per
    # tenant.
    server_settings = {"max_opening": 8, "max_opening_per_peer": 2, "max_opening_per_tenant": 1}
    settings = local_settings(auth={"secret": SECRET}, server=server_settings)
    async with running_server(settings, lambda: components) as server, contextlib.AsyncExitStack() as stack:
        await server.wait_ready()
        for i in range(3):
            for _ in range(2):
                await stack.enter_async_context(await from_address(server, f"127.0.10.{i + 1}"))
        # Anonymous sockets took their share: a seventh is refused, from an address that holds none yet.
        assert await refused(server, "127.0.10.9") == (503, "opening_full")
        # A caller with a token still gets in, and so does another tenant's; a second of the same tenant's waits.
        acme = await stack.enter_async_context(
            await from_address(server, "127.0.10.9", additional_headers=bearer("acme"))
        )
        assert await refused(server, "127.0.10.9", additional_headers=bearer("acme")) == (429, "tenant_limit")
        beta = await stack.enter_async_context(
            await from_address(server, "127.0.10.1", additional_headers=bearer("beta"))
        )
        assert server.state.occupancy.opening == 8
        # The total still bounds everything.
        assert await refused(server, "127.0.10.8", additional_headers=bearer("gamma")) == (503, "opening_full")
        await answered(acme)
        await answered(beta)
