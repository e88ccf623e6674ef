"""MCP tools: the tools of one MCP server (streamable HTTP), listed and called with the ``mcp`` package.

Reason to change: how this server talks to an MCP server (the ``mcp`` client, its requests, its errors). What a
connection may reach and read is ``agent.adapters.mcp_transport``'s.

Each listing and each call is one short MCP connection (``mcp.Client`` over ``streamable_http_client``) inside
the server's ``timeout_s``, on an ``httpx2`` client kept per event loop (its connections are reused). The first
connection negotiates the protocol (``server/discover``, else the ``initialize`` handshake); later ones reuse
what it learnt, so a call on a 2026-era server costs no handshake. Cancelling a call closes its connection.

The hosts: the URL passes ``HostPolicy.url_refusal`` before each connection, and the transport connects only to
addresses the host rules allow (``GuardedTransport``). No redirect is followed (``max_redirects=0``; the SDK
would otherwise follow one within the server's origin). No proxy from the environment is used.

Bytes: a call reads at most ``answer_bytes`` in all (every HTTP response of its connection together; the
``ToolBox`` gives ``8 * max_output_chars + 65,536``: the output it keeps, escaped as JSON and given twice, as
text and as structured content, with the JSON-RPC and SSE framing), a listing at most ``LISTING_BYTES``; past it
the connection is dropped and the call fails with ``ToolFailed`` ("the MCP server's answer is over N bytes").

Listing: at most ``MAX_PAGES`` pages and ``MAX_LISTED_TOOLS`` tools are taken; a tool is offered when it is on the
server's allow-list, its name is one the model APIs accept, and its input schema is an object schema of at most
``MAX_SCHEMA_CHARS`` that ``agent.config.tool_schema`` can check (else it is left out, with a warning). The
schemas are checked in a thread: a long listing never holds the event loop.

Output: the text blocks of the result, joined by newlines (other blocks are named, not passed on; a result with
no text gives its structured content as JSON). ``isError`` raises ``ToolFailed`` with the start of the server's
text; no answer in time raises ``ProviderTimeout``; every exception of the SDK, ``httpx2`` and the network
becomes ``ToolFailed`` here.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx2
import mcp_types
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from agent.adapters.http_tools import USER_AGENT, HostRefused
from agent.adapters.mcp_transport import ACCEPT_ENCODING, AnswerRefused, GuardedTransport, Reading, reading
from agent.adapters.mcp_transport import GuardedBackend as GuardedBackend
from agent.config.tool_file import MAX_DESCRIPTION_CHARS, MAX_SCHEMA_CHARS, TOOL_NAME, McpServer
from agent.config.tool_hosts import HostPolicy
from agent.config.tool_schema import ArgumentsCheck
from agent.errors import ProviderTimeout, ToolFailed
from agent.ports import ToolSpec
from agent.security.logsafe import shown

log = logging.getLogger(__name__)

MAX_PAGES = 10
"""Pages of ``tools/list`` read at most (a server that pages forever cannot hang a listing)."""
MAX_LISTED_TOOLS = 64
"""Tools taken from one server's listing at most (the rest are left out, with a warning)."""
LISTING_BYTES = 4 * 1024 * 1024
"""What one listing may read, all its pages together (64 tools of the largest schema fit four times)."""
ANSWER_BYTES = 8 * 4000 + 65_536
"""What one call may read, for the default output bound (4,000 characters): ``ToolBox`` gives its own."""
MAX_ERROR_CHARS = 300
_CLIENT = mcp_types.Implementation(name="voice-agent-server", version="1")


@dataclass(frozen=True, slots=True)
class Listed:
    """A tool an MCP server offers: its spec as the model sees it, and the check of its arguments."""

    spec: ToolSpec
    check: ArgumentsCheck


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
        if isinstance(leaf, AnswerRefused):
            return ToolFailed(tool, str(leaf))
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
    """The tools of one MCP server of one tenant: ``list`` them, ``call`` one. Safe for many tasks at once.

    ``answer_bytes``: what one call may read in all (see the module's docstring; ``ANSWER_BYTES`` is the bound
    for the default ``max_output_chars``)."""

    def __init__(
        self, server: McpServer, policy: HostPolicy, default_timeout_s: float, answer_bytes: int = ANSWER_BYTES
    ) -> None:
        self.server = server
        self._policy = policy
        self.timeout_s = server.timeout_s if server.timeout_s is not None else default_timeout_s
        self.answer_bytes = answer_bytes
        self._headers = {"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING} | {
            k: v.get_secret_value() for k, v in server.headers.items()
        }
        self._http_client: httpx2.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._era: tuple[str, mcp_types.DiscoverResult | None] | None = None
        """The protocol the server spoke last: a 2026-era version and its discover result, or legacy."""

    def _http(self) -> httpx2.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._http_client is None or self._http_loop is not loop or self._http_client.is_closed:
            self._http_client = httpx2.AsyncClient(
                transport=GuardedTransport(self._policy, self.answer_bytes),
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

    def _offered(self, tool: mcp_types.Tool) -> Listed | None:
        """``tool`` as the model sees it and its arguments' check, or ``None`` when it is not offered (not on the
        server's allow-list, a name the model APIs refuse, a schema that is not an object schema of a sensible
        size or that cannot be checked)."""
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
        else:
            try:
                check = ArgumentsCheck(tool.input_schema)
            except ValueError as exc:
                problem = f"its argument schema cannot be used: {exc}"
        if problem is not None:
            log.warning("MCP server %s: tool %s left out: %s", self.server.name, shown(tool.name), shown(problem, 300))
            return None
        description = (tool.description or "")[:MAX_DESCRIPTION_CHARS]
        return Listed(ToolSpec(name, description, schema, runs_on="server", timeout_s=self.timeout_s), check)

    def _offer(self, tools: Sequence[mcp_types.Tool]) -> tuple[Listed, ...]:
        if len(tools) > MAX_LISTED_TOOLS:
            log.warning(
                "MCP server %s: %d tools listed, the first %d taken", self.server.name, len(tools), MAX_LISTED_TOOLS
            )
        return tuple(listed for tool in tools[:MAX_LISTED_TOOLS] if (listed := self._offered(tool)) is not None)

    def _checked(self, work: str) -> None:
        refusal = self._policy.url_refusal(self.server.url)
        if refusal is not None:
            raise ToolFailed(work, f"the MCP server's host is refused: {refusal}")

    def _failure(
        self, work: str, exc: BaseException, bound: Reading, deadline: asyncio.Timeout
    ) -> ToolFailed | ProviderTimeout:
        # The SDK turns a failed SSE read into "stream ended": the transport kept the real reason.
        if bound.refused is not None:
            return ToolFailed(work, bound.refused)
        if deadline.expired():
            # The answer did not come in time. The cancellation the deadline threw in may come out of the SDK's
            # task groups as another error (a closed stream's BrokenResourceError): still a timeout.
            return ProviderTimeout(work, f"no answer within {self.timeout_s:g} s")
        return mapped(work, exc)

    async def list(self) -> tuple[Listed, ...]:
        """The server's tools offered to the model. Raises ``ToolFailed`` or ``ProviderTimeout``."""
        what = f"MCP server {self.server.name}"
        tools: list[mcp_types.Tool] = []
        self._checked(what)
        deadline = asyncio.timeout(self.timeout_s)
        try:
            with reading(LISTING_BYTES) as bound:
                async with deadline, self._client() as client:
                    self._learn(client)
                    cursor: str | None = None
                    for _ in range(MAX_PAGES):
                        page = await client.list_tools(cursor=cursor)
                        tools.extend(page.tools)
                        cursor = page.next_cursor
                        if cursor is None or len(tools) > MAX_LISTED_TOOLS:
                            break
        except Exception as exc:
            self._era = None
            raise self._failure(what, exc, bound, deadline) from None
        return await asyncio.to_thread(self._offer, tools)

    async def call(self, name: str, arguments: Mapping[str, object]) -> str:
        """Call the tool offered as ``name``; its output as text. Raises ``ToolFailed`` or ``ProviderTimeout``."""
        remote = name.removeprefix(self.server.prefix)
        self._checked(name)
        deadline = asyncio.timeout(self.timeout_s)
        try:
            with reading(self.answer_bytes) as bound:
                async with deadline, self._client() as client:
                    self._learn(client)
                    result = await client.call_tool(remote, dict(arguments))
        except TimeoutError:
            raise ProviderTimeout(name, f"no answer within {self.timeout_s:g} s") from None
        except Exception as exc:
            self._era = None
            raise self._failure(name, exc, bound, deadline) from None
        text = result_text(result)
        if result.is_error:
            raise ToolFailed(name, text[:MAX_ERROR_CHARS] or "the tool reported an error")
        return text
