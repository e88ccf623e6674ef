"""HTTP tools: the tools file's endpoints, called with ``aiohttp``, and the resolver that keeps every connection
a tool makes to the hosts the operator allows.

Reason to change: how an HTTP tool is called (request shape, limits, errors), or how its connections are checked.

A ``GET`` puts the arguments in the query string (strings as they are, numbers and booleans as JSON writes them,
lists and objects as JSON text, ``null`` left out); a ``POST`` sends them as a JSON object. Redirects are not
followed (a 3xx is a failure: a redirect could lead anywhere). At most ``4 * max_output_chars + 1`` bytes of the
body are read, then the connection is dropped. Any status outside 2xx raises ``ToolFailed`` naming it (not the
body: it may echo the arguments), no answer within the tool's ``timeout_s`` raises ``ProviderTimeout``; every
``aiohttp`` exception is mapped here.

``GuardedResolver`` wraps ``aiohttp``'s resolver: a host that is not on the allow-list, or that resolves only to
addresses the host rules refuse (``agent.config.tool_hosts``), fails to connect with ``HostRefused``; refused
addresses among allowed ones are dropped. ``aiohttp`` does not resolve an address literal, which is why the URL is
checked (``HostPolicy.url_refusal``) before each request as well. One ``aiohttp`` session (one connection pool,
without a bound on connections: each call is bounded by its own timeout, so one caller's slow tool never holds up
another's) is kept per event loop.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from agent.adapters import trace_context
from agent.adapters.aiohttp_pool import LoopSession
from agent.config.tool_file import HttpTool
from agent.config.tool_hosts import HostPolicy
from agent.errors import ProviderTimeout, ToolFailed

USER_AGENT = "voice-agent-server (tools)"


class HostRefused(OSError):
    """A connection the host rules refuse: the host is not allowed, or it resolves only to refused addresses."""


class GuardedResolver(AbstractResolver):
    """Resolves as ``inner`` does (``aiohttp``'s default), keeping only the addresses ``policy`` allows."""

    def __init__(self, policy: HostPolicy, inner: AbstractResolver | None = None) -> None:
        self._policy = policy
        self._inner = inner if inner is not None else DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if not self._policy.host_allowed(host):
            raise HostRefused(f"host {host!r} is not on the allowed hosts")
        results = await self._inner.resolve(host, port, family)
        allowed = [r for r in results if self._policy.address_refusal(r["host"]) is None]
        if not allowed:
            reason = self._policy.address_refusal(results[0]["host"]) if results else "no address"
            raise HostRefused(f"host {host!r} resolves to a refused address: {reason}")
        return allowed

    async def close(self) -> None:
        await self._inner.close()


def query_params(arguments: Mapping[str, object]) -> list[tuple[str, str]]:
    """The arguments as query parameters, in order: ``null`` left out, containers as JSON text."""
    params: list[tuple[str, str]] = []
    for key, value in arguments.items():
        if value is None:
            continue
        if isinstance(value, str):
            params.append((key, value))
        else:  # numbers and booleans as JSON writes them (true, 2.5); lists and objects as JSON text
            params.append((key, json.dumps(value, separators=(",", ":"))))
    return params


async def read_at_most(content: aiohttp.StreamReader, limit: int) -> bytes:
    """Up to ``limit`` bytes of a body: whatever comes first, its end or the bound."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = await content.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class HttpTools:
    """Calls HTTP tools. ``run`` is safe to call from many tasks at once; ``aclose`` closes the pool."""

    def __init__(self, policy: HostPolicy, max_output_chars: int, default_timeout_s: float) -> None:
        self._policy = policy
        self._max_bytes = 4 * max_output_chars + 1  # enough for max_output_chars of any UTF-8, and one more
        self._default_timeout_s = default_timeout_s
        self._pool = LoopSession(self._new_session)

    def _new_session(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(resolver=GuardedResolver(self._policy), limit=0)
        return aiohttp.ClientSession(
            connector=connector, headers={"User-Agent": USER_AGENT, "Accept": "application/json"}
        )

    def _http(self) -> aiohttp.ClientSession:
        return self._pool.get()

    async def aclose(self) -> None:
        """Close the connection pool (on the loop that made it)."""
        await self._pool.aclose()

    def timeout_s(self, tool: HttpTool) -> float:
        return tool.timeout_s if tool.timeout_s is not None else self._default_timeout_s

    def _request(
        self, tool: HttpTool, arguments: Mapping[str, object]
    ) -> AbstractAsyncContextManager[aiohttp.ClientResponse]:
        headers = {name: value.get_secret_value() for name, value in tool.headers.items()}
        trace_context.inject(headers)  # the turn's span is the call's parent (while tracing is on)
        if tool.method == "GET":
            return self._http().get(tool.url, params=query_params(arguments), headers=headers, allow_redirects=False)
        return self._http().post(tool.url, json=dict(arguments), headers=headers, allow_redirects=False)

    async def run(self, tool: HttpTool, arguments: Mapping[str, object]) -> str:
        """Call ``tool`` with ``arguments``; the body as text (at most ``4 * max_output_chars + 1`` bytes of it,
        decoded). Raises ``ToolFailed`` or ``ProviderTimeout``."""
        refusal = self._policy.url_refusal(tool.url)
        if refusal is not None:
            raise ToolFailed(tool.name, f"the tool's host is refused: {refusal}")
        timeout_s = self.timeout_s(tool)
        try:
            async with asyncio.timeout(timeout_s), self._request(tool, arguments) as response:
                if 300 <= response.status < 400:
                    raise ToolFailed(
                        tool.name, f"HTTP {response.status}: the tool redirected, and redirects are refused"
                    )
                if not 200 <= response.status < 300:
                    raise ToolFailed(tool.name, f"HTTP {response.status} {response.reason or ''}".rstrip())
                body = await read_at_most(response.content, self._max_bytes)
                charset = response.charset or "utf-8"
        except TimeoutError:
            raise ProviderTimeout(tool.name, f"no answer within {timeout_s:g} s") from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, HostRefused):
                raise ToolFailed(tool.name, f"the tool's host is refused: {exc.os_error}") from None
            raise ToolFailed(tool.name, "the tool's host cannot be reached") from None
        except aiohttp.ClientError as exc:
            raise ToolFailed(tool.name, f"the request failed ({type(exc).__name__})") from None
        try:
            return body.decode(charset, errors="replace")
        except LookupError:  # a charset Python does not know
            return body.decode("utf-8", errors="replace")
