"""Real local servers that server-side tools call, for the tool tests and ``bench/tools.py``: an HTTP tool server
(``aiohttp``, in the caller's event loop) and an MCP server built with the ``mcp`` package's own ``MCPServer``
(streamable HTTP, served by ``uvicorn`` on a thread of its own). Both listen on 127.0.0.1 on a port of their own.

Reason to change: what the tool tests and the benchmark need a tool server to do.

``HttpToolServer`` routes: ``/weather`` (GET ``?city=``, or POST ``{"city": ...}``: a small JSON forecast),
``/echo`` (what it was sent, as JSON), ``/hang`` (never answers; ``abandoned`` counts the requests whose client
gave up), ``/redirect`` (302 to ``/weather``), ``/error`` (500), ``/big?chars=N`` (N characters). Every request is
recorded in ``seen``.

``McpToolServer`` tools: ``get_forecast(city)``, ``fail(reason)`` (the tool raises: an ``isError`` result),
``hang()`` (answers only when the server stops). With ``required_header`` it answers 401 to a request without
it; ``headers_seen`` holds each request's headers. ``/moved`` redirects (307) to ``/mcp``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from aiohttp import web
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from testing.emulators.scripted import wait_for_client_close
from testing.waits import until_sync

FORECAST = {"temp_c": 21, "conditions": "sunny"}
START_WAIT_S = 30.0
"""The bound on a server's start and stop: only against a hang."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Seen:
    """One request the HTTP tool server received."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    at: float = 0.0
    """When it arrived (``time.monotonic``)."""


class HttpToolServer:
    """The HTTP tool server: ``async with HttpToolServer() as server``; ``server.url("/weather")``."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.abandoned = 0
        self._runner: web.AppRunner | None = None
        self._port = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self._port}{path}"

    async def __aenter__(self) -> HttpToolServer:
        app = web.Application()
        for path, handler in [
            ("/weather", self._weather),
            ("/echo", self._echo),
            ("/hang", self._hang),
            ("/redirect", self._redirect),
            ("/error", self._error),
            ("/big", self._big),
        ]:
            app.router.add_route("*", path, handler)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _record(self, request: web.Request) -> Seen:
        body = await request.read()
        seen = Seen(request.method, request.path, dict(request.query), dict(request.headers), body, time.monotonic())
        self.seen.append(seen)
        return seen

    async def _weather(self, request: web.Request) -> web.Response:
        seen = await self._record(request)
        city = seen.query.get("city", "")
        if request.method == "POST":
            city = str(json.loads(seen.body or b"{}").get("city", ""))
        return web.json_response({"city": city, **FORECAST})

    async def _echo(self, request: web.Request) -> web.Response:
        seen = await self._record(request)
        body = json.loads(seen.body) if seen.body else None
        return web.json_response({"method": seen.method, "query": seen.query, "json": body})

    async def _hang(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        await wait_for_client_close(request)
        self.abandoned += 1
        return web.Response()  # never reaches the client: it has gone

    async def _redirect(self, request: web.Request) -> web.Response:
        await self._record(request)
        raise web.HTTPFound("/weather?city=Elsewhere")

    async def _error(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.json_response({"error": "the weather service is down"}, status=500)

    async def _big(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.Response(text="x" * int(request.query.get("chars", "100000")))


class McpToolServer:
    """The MCP server: ``with McpToolServer() as server``; ``server.url`` is its endpoint (``/mcp``)."""

    def __init__(self, required_header: tuple[str, str] | None = None) -> None:
        self.headers_seen: list[dict[str, str]] = []
        self._required = required_header
        self._stopping = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/mcp"

    def _mcp(self) -> MCPServer:
        server: MCPServer = MCPServer("weather", log_level="WARNING")
        stopping = self._stopping

        @server.tool()
        def get_forecast(city: str) -> str:
            """The weather forecast for a city."""
            return f"Sunny in {city}, 21 degrees"

        @server.tool()
        def fail(reason: str) -> str:
            """Always fails, saying why."""
            raise ToolError(reason)

        @server.tool()
        async def hang() -> str:
            """Never answers (until the server stops)."""
            while not stopping.is_set():  # noqa: ASYNC110 - a threading.Event, set from the test's thread
                await anyio.sleep(0.01)
            return "stopped"

        return server

    def _app(self) -> Asgi:
        inner: Asgi = self._mcp().streamable_http_app(host="127.0.0.1")
        required = self._required

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
                self.headers_seen.append(headers)
                if scope["path"] == "/moved":  # a redirect within the server's origin, keeping the method
                    await send({"type": "http.response.start", "status": 307, "headers": [(b"location", b"/mcp")]})
                    await send({"type": "http.response.body", "body": b""})
                    return
                if required is not None and headers.get(required[0].lower()) != required[1]:
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b""})
                    return
            await inner(scope, receive, send)

        return app

    def __enter__(self) -> McpToolServer:
        self._sock = sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self._port = int(sock.getsockname()[1])
        config = uvicorn.Config(self._app(), log_level="warning", lifespan="on", ws="none", timeout_graceful_shutdown=1)
        self._server = server = uvicorn.Server(config)
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        thread = self._thread

        def started() -> bool:
            assert thread.is_alive(), "the MCP tool server stopped before it started"
            return bool(server.started)

        until_sync(started, START_WAIT_S, "the MCP tool server to start", every_s=0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(START_WAIT_S)
            if self._thread.is_alive():
                raise AssertionError("the MCP tool server did not stop")
        if self._sock is not None:
            self._sock.close()  # closed by the server already, unless it failed to start

    async def __aenter__(self) -> McpToolServer:
        return await asyncio.to_thread(self.__enter__)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.__exit__)
