"""Special-purpose addresses are refused to a tool before any connection, through the real adapters (issue 37).

``http://[fec0::1]/x`` (site-local) and ``http://192.0.0.8/x`` (an IETF protocol assignment) are on the
allow-list here, but in no private network: the HTTP tool, the MCP server and the connection-time guards
(aiohttp's resolver, httpcore2's backend) all refuse them, naming the block, without opening a socket; with the
block listed as private they pass the host rules. The same adapters reach a tool server on loopback (a real
socket) when loopback is permitted, so a refusal here is the host rules', not an unreachable network. Before the
table (``agent.config.special_addresses``) these addresses were "global" to Python 3.11.7's ``ipaddress`` and
were connected to.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.adapters.http_tools import GuardedResolver, HostRefused, HttpTools
from agent.adapters.mcp_tools import GuardedBackend, McpTools
from agent.config.tool_file import HttpTool, McpServer, parse_tools
from agent.config.tool_hosts import HostPolicy
from agent.errors import ConfigError, ToolFailed
from testing.tool_servers import HttpToolServer

SPECIAL = {
    "fec0::1": ("fec0::/10", "Site-Local (deprecated)", "RFC 3879", "http://[fec0::1]/x"),
    "192.0.0.8": ("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", "http://192.0.0.8/x"),
}
TIMEOUT_S = 2.0
"""A tool's limit: only what an attempted connection would run into; a refusal comes before any."""


@pytest.fixture
async def tool_server() -> AsyncIterator[HttpToolServer]:
    async with HttpToolServer() as server:
        yield server


def policy(*networks: str) -> HostPolicy:
    return HostPolicy.of(["127.0.0.1", *SPECIAL], ["127.0.0.0/8", *networks])


@pytest.mark.parametrize("host", sorted(SPECIAL))
async def test_an_http_tool_on_a_special_address_is_refused_before_any_connection(
    host: str, tool_server: HttpToolServer
) -> None:
    block, name, rfc, url = SPECIAL[host]
    tools = HttpTools(policy(), max_output_chars=1000, default_timeout_s=TIMEOUT_S)
    try:
        # The same adapter reaches a real server on loopback: the network works, loopback is permitted.
        assert "Paris" in await tools.run(HttpTool(name="weather", url=tool_server.url("/weather")), {"city": "Paris"})
        with pytest.raises(ToolFailed) as caught:
            await tools.run(HttpTool(name="special", url=url), {})
        detail = caught.value.detail
        assert "refused" in detail and f"{block} ({name}, {rfc})" in detail and "not a public address" in detail
        # The connection-time guard says the same for a name that resolves there (here, the literal itself).
        with pytest.raises(HostRefused, match="resolves to a refused address"):
            await GuardedResolver(policy()).resolve(host, 80, socket.AF_UNSPEC)
    finally:
        await tools.aclose()
    assert [seen.path for seen in tool_server.seen] == ["/weather"]


@pytest.mark.parametrize("host", sorted(SPECIAL))
async def test_an_mcp_server_on_a_special_address_is_refused_before_any_connection(host: str) -> None:
    block, _, _, url = SPECIAL[host]
    tools = McpTools(McpServer(name="special", url=url + "/mcp"), policy(), default_timeout_s=TIMEOUT_S)
    try:
        with pytest.raises(ToolFailed) as listing:
            await tools.list()
        with pytest.raises(ToolFailed) as calling:
            await tools.call("anything", {})
        for caught in (listing, calling):
            assert "refused" in caught.value.detail and block in caught.value.detail
        with pytest.raises(HostRefused, match=block.replace(".", r"\.")):
            await GuardedBackend(policy()).connect_tcp(host, 80)
    finally:
        await tools.aclose()


@pytest.mark.parametrize("host", sorted(SPECIAL))
def test_the_tools_file_refuses_such_a_url_unless_the_block_is_private(host: str) -> None:
    block, _, _, url = SPECIAL[host]
    data = {
        "allowed_hosts": [host],
        "tenants": {"default": {"http": [{"name": "special", "url": url}]}},
    }
    with pytest.raises(ConfigError, match="not a public address"):
        parse_tools(data, environ={}, base=Path("."))
    parse_tools(data | {"private_networks": [block]}, environ={}, base=Path("."))
    assert policy(block).url_refusal(url) is None
