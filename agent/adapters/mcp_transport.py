"""How an MCP connection reaches its server and reads its answers: ``httpx2``'s transport, connecting only to the
addresses the host rules allow, and reading at most a bounded number of bytes, whatever the server sends.

Reason to change: what an MCP server's connection may reach or read (addresses, bytes, encodings).

``GuardedBackend`` resolves the host itself, drops every address the host rules refuse and connects to an
allowed address only (no DNS rebinding); a Unix socket is refused. ``GuardedTransport`` is ``httpx2``'s
transport over it, without proxies from the environment, whose every response body is counted while it is read:
the bytes of all the responses of one MCP call or listing together (``reading(limit)`` sets the bound for the
work inside it) may not pass ``limit``. Past it, the read raises ``AnswerTooLarge`` and the connection is
dropped: memory holds at most ``limit`` bytes of answer (and one network chunk, 64 KiB) at a time, however much
the server sends. Answers are asked for uncompressed (``Accept-Encoding: identity``) and a compressed one is
refused (``AnswerRefused``), so the bytes counted are the bytes held (a small compressed body can inflate
a thousandfold). The ``mcp`` SDK swallows some errors of an SSE stream: ``Reading.refused`` keeps the reason
for the caller to tell.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpcore2
import httpx2

from agent.adapters import trace_context
from agent.adapters.http_tools import HostRefused
from agent.config.tool_hosts import HostPolicy

ACCEPT_ENCODING = "identity"


class AnswerRefused(Exception):
    """An MCP server's answer was not read: ``str()`` says why, in words the model may be told."""


class AnswerTooLarge(AnswerRefused):
    """An MCP server's answers to one call or listing went past their bound in bytes."""


class Reading:
    """What one MCP call or listing may read (``limit`` bytes in all) and has read; ``refused``: why its
    reading was stopped, if it was."""

    __slots__ = ("limit", "read", "refused")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.read = 0
        self.refused: str | None = None

    def count(self, size: int) -> None:
        self.read += size
        if self.read > self.limit:
            self.refused = f"the MCP server's answer is over {self.limit} bytes"
            raise AnswerTooLarge(self.refused)


_READING: ContextVar[Reading | None] = ContextVar("mcp_reading", default=None)


@contextmanager
def reading(limit: int) -> Iterator[Reading]:
    """Bound what the MCP connections made inside (by this task and the tasks it starts) read, to ``limit``
    bytes in all."""
    bound = Reading(limit)
    token = _READING.set(bound)
    try:
        yield bound
    finally:
        _READING.reset(token)


class _Counted(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, bound: Reading) -> None:
        self._inner = inner
        self._bound = bound

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._bound.count(len(chunk))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


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
    """``httpx2``'s transport over ``GuardedBackend``, without proxies from the environment, counting what it
    reads against the bound of the ``reading`` it runs in (``default_limit`` bytes per response outside any)."""

    def __init__(self, policy: HostPolicy, default_limit: int) -> None:
        super().__init__(trust_env=False)
        # httpx2 takes no network backend: its pool is replaced by one built alike over the guarded backend.
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=httpx2.create_ssl_context(trust_env=False), network_backend=GuardedBackend(policy)
        )
        self._default_limit = default_limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        trace_context.inject(request.headers)  # the turn's span is the call's parent (while tracing is on)
        response = await super().handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        bound = _READING.get() or Reading(self._default_limit)
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", ACCEPT_ENCODING):
            await stream.aclose()
            bound.refused = f"the MCP server compressed its answer ({encoding[:20]}), though asked not to"
            raise AnswerRefused(bound.refused)
        counted = _Counted(stream, bound)
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=counted, extensions=response.extensions
        )
