"""MCP tools: the tools of one MCP server (streamable HTTP), listed and called with the ``mcp`` package.

Reason to change: how this server talks to an MCP server (the ``mcp`` client, its transport, its errors).

Each listing and each call is one short MCP connection (``mcp.Client`` over ``streamable_http_client``) inside
the server's ``timeout_s``, on an ``httpx2`` client kept per event loop (its connections are reused). The first
connection negotiates the protocol (``server/discover``, else the ``initialize`` handshake); later ones reuse
what it learnt, so a call on a 2026-era server costs no handshake. Cancelling a call closes its connection.

The hosts: the URL passes ``HostPolicy.url_refusal`` before each connection, and the ``httpx2`` transport connects
through ``GuardedBackend``, which resolves the host itself, drops every address the host rules refuse and
connects to an allowed address only (no DNS rebinding). No redirect is followed (``max_redirects=0``; the SDK
would otherwise follow one within the server's origin). No proxy from the environment is used.

Output: the text blocks of the result, joined by newlines (other blocks are named, not passed on; a result with
no text gives its structured content as JSON). ``isError`` raises ``ToolFailed`` with the start of the server's
text; no answer in time raises ``ProviderTimeout``; every exception of the SDK, ``httpx2`` and the network
becomes ``ToolFailed`` here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Iterable, Mapping

import httpcore2
import httpx2
import mcp_types
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from agent.adapters.http_tools import USER_AGENT, HostRefused
from agent.config.tool_file import MAX_DESCRIPTION_CHARS, MAX_SCHEMA_CHARS, TOOL_NAME, McpServer
from agent.config.tool_hosts import HostPolicy
from agent.errors import ProviderTimeout, ToolFailed
from agent.ports import ToolSpec
from agent.security.logsafe import shown

log = logging.getLogger(__name__)

MAX_PAGES = 10
"""Pages of ``tools/list`` read at most (a server that pages forever cannot hang a listing)."""
MAX_ERROR_CHARS = 300
_CLIENT = mcp_types.Implementation(name="voice-agent-server", version="1")


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """``httpcore2``'s network backend, connecting only to addresses the host rules allow."""

    def __init__(self, policy: HostPolicy) -> None:
        self._policy = policy
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore2's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if not self._policy.host_allowed(host):
            raise HostRefused(f"host {host!r} is not on the allowed hosts")
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        refusals = [self._policy.address_refusal(address) for address in addresses]
        allowed = [address for address, refusal in zip(addresses, refusals, strict=True) if refusal is None]
        if not allowed:
            raise HostRefused(f"host {host!r} resolves to a refused address: {refusals[0] if refusals else 'none'}")
        failure: Exception | None = None
        for address in allowed:  # connect to the address checked, never to the name (resolved again)
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore2's interface
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise HostRefused("a tool may not connect to a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """``httpx2``'s transport over ``GuardedBackend``, without proxies from the environment."""

    def __init__(self, policy: HostPolicy) -> None:
        super().__init__(trust_env=False)
        # httpx2 takes no network backend: its pool is replaced by one built alike over the guarded backend.
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=httpx2.create_ssl_context(trust_env=False), network_backend=GuardedBackend(policy)
        )


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, in order; ``exc`` itself when it is none."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def mapped(tool: str, exc: BaseException) -> ToolFailed | ProviderTimeout:
    """The port's error for what the SDK, ``httpx2`` or the network raised (groups from its task groups too)."""
    leaves = [leaf for leaf in _leaves(exc) if not isinstance(leaf, asyncio.CancelledError)] or [exc]
    for leaf in leaves:
        if isinstance(leaf, HostRefused):
            return ToolFailed(tool, f"the MCP server's host is refused: {leaf}")
    for leaf in leaves:
        if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
            return ProviderTimeout(tool, "the MCP server did not answer in time")
    leaf = leaves[0]
    if isinstance(leaf, MCPError):
        return ToolFailed(tool, f"MCP error {leaf.code}: {leaf.message[:MAX_ERROR_CHARS]}")
    if isinstance(leaf, httpx2.TransportError | OSError):
        return ToolFailed(tool, "the MCP server cannot be reached")
    return ToolFailed(tool, f"the MCP server's answer was not understood ({type(leaf).__name__})")


def result_text(result: mcp_types.CallToolResult) -> str:
    """A call's output as text: its text blocks joined, other blocks named, else its structured content."""
    parts = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content not shown]")
    text = "\n".join(parts)
    if not result.content and result.structured_content is not None:
        text = json.dumps(result.structured_content)
    return text


class McpTools:
    """The tools of one MCP server of one tenant: ``list`` them, ``call`` one. Safe for many tasks at once."""

    def __init__(self, server: McpServer, policy: HostPolicy, default_timeout_s: float) -> None:
        self.server = server
        self._policy = policy
        self.timeout_s = server.timeout_s if server.timeout_s is not None else default_timeout_s
        self._headers = {"User-Agent": USER_AGENT} | {k: v.get_secret_value() for k, v in server.headers.items()}
        self._http_client: httpx2.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._era: tuple[str, mcp_types.DiscoverResult | None] | None = None
        """The protocol the server spoke last: a 2026-era version and its discover result, or legacy."""

    def _http(self) -> httpx2.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._http_client is None or self._http_loop is not loop or self._http_client.is_closed:
            self._http_client = httpx2.AsyncClient(
                transport=GuardedTransport(self._policy),
                headers=self._headers,
                timeout=httpx2.Timeout(self.timeout_s),
                max_redirects=0,
                trust_env=False,
            )
            self._http_loop = loop
        return self._http_client

    async def aclose(self) -> None:
        client, self._http_client, self._http_loop = self._http_client, None, None
        if client is not None:
            await client.aclose()

    def _client(self) -> Client:
        transport = streamable_http_client(self.server.url, http_client=self._http())
        if self._era is None:
            return Client(transport, mode="auto", cache=None, client_info=_CLIENT)
        version, discovered = self._era
        return Client(transport, mode=version, prior_discover=discovered, cache=None, client_info=_CLIENT)

    def _learn(self, client: Client) -> None:
        discovered = client.session.discover_result
        self._era = (client.protocol_version, discovered) if discovered is not None else ("legacy", None)

    def exposed(self, name: str) -> str:
        return self.server.prefix + name

    def _offered(self, tool: mcp_types.Tool) -> ToolSpec | None:
        """The spec of ``tool`` as the model sees it, or ``None`` when it is not offered (not on the server's
        allow-list, a name the model APIs refuse, an oversized or non-object schema)."""
        allowed = self.server.tools
        name = self.exposed(tool.name)
        if allowed is not None and tool.name not in allowed:
            return None
        schema = json.dumps(tool.input_schema, separators=(",", ":"))
        problem = None
        if TOOL_NAME.fullmatch(name) is None:
            problem = "its name is not one a model accepts"
        elif tool.input_schema.get("type") != "object" or len(schema) > MAX_SCHEMA_CHARS:
            problem = "its argument schema is not an object schema of a sensible size"
        if problem is not None:
            log.warning("MCP server %s: tool %s left out: %s", self.server.name, shown(tool.name), problem)
            return None
        description = (tool.description or "")[:MAX_DESCRIPTION_CHARS]
        return ToolSpec(name, description, schema, runs_on="server", timeout_s=self.timeout_s)

    def _checked(self, work: str) -> None:
        refusal = self._policy.url_refusal(self.server.url)
        if refusal is not None:
            raise ToolFailed(work, f"the MCP server's host is refused: {refusal}")

    async def list(self) -> tuple[ToolSpec, ...]:
        """The server's tools offered to the model. Raises ``ToolFailed`` or ``ProviderTimeout``."""
        what = f"MCP server {self.server.name}"
        specs: list[ToolSpec] = []
        self._checked(what)
        try:
            async with asyncio.timeout(self.timeout_s), self._client() as client:
                self._learn(client)
                cursor: str | None = None
                for _ in range(MAX_PAGES):
                    page = await client.list_tools(cursor=cursor)
                    specs.extend(spec for tool in page.tools if (spec := self._offered(tool)) is not None)
                    cursor = page.next_cursor
                    if cursor is None:
                        break
        except Exception as exc:
            self._era = None
            raise mapped(what, exc) from None
        return tuple(specs)

    async def call(self, name: str, arguments: Mapping[str, object]) -> str:
        """Call the tool offered as ``name``; its output as text. Raises ``ToolFailed`` or ``ProviderTimeout``."""
        remote = name.removeprefix(self.server.prefix)
        self._checked(name)
        try:
            async with asyncio.timeout(self.timeout_s), self._client() as client:
                self._learn(client)
                result = await client.call_tool(remote, dict(arguments))
        except TimeoutError:
            raise ProviderTimeout(name, f"no answer within {self.timeout_s:g} s") from None
        except Exception as exc:
            self._era = None
            raise mapped(name, exc) from None
        text = result_text(result)
        if result.is_error:
            raise ToolFailed(name, text[:MAX_ERROR_CHARS] or "the tool reported an error")
        return text
