"""Real local servers that server-side tools call, for the tool tests and ``bench/tools.py``: an HTTP tool server
(``aiohttp``, in the caller's event loop) and an MCP server built with the ``mcp`` package's own ``MCPServer``
(streamable HTTP, served by ``uvicorn`` on a thread of its own). Both listen on 127.0.0.1 on a port of their own.

Reason to change: what the tool tests and the benchmark need a tool server to do.

``HttpToolServer`` routes: ``/weather`` (GET ``?city=``, or POST ``{"city": ...}``: a small JSON forecast),
``/echo`` (what it was sent, as JSON), ``/hang`` (never answers; ``abandoned`` counts the requests whose client
gave up), ``/held`` (answers as ``/weather`` does once the test calls ``release()``: a tool still working while the
test acts), ``/redirect`` (302 to ``/weather``), ``/error`` (500), ``/big?chars=N`` (N characters, written in
64 KiB pieces as the client takes them: ``big_sent`` holds how many each request got written before its client
went or the body ended). Every request is recorded in ``seen``.

``McpToolServer`` tools: ``get_forecast(city)``, ``fail(reason)`` (the tool raises: an ``isError`` result),
``hang()`` (answers only when the server stops), ``flood(chars)`` (answered by the server's front, not the SDK:
a JSON-RPC result of ``chars`` characters, made as it is written, so the test process never holds it;
``flood_sent`` holds how many characters each call got written before its client went or the answer ended).
With ``required_header`` it answers 401 to a request without it; ``headers_seen`` holds each request's headers,
``calls`` the name of each ``tools/call`` and ``listings`` the number of ``tools/list`` requests. ``/moved``
redirects (307) to ``/mcp``. ``hold()`` makes every request wait (``held`` counts them) until ``release()``;
``remove_tool(name)`` stops offering a tool.
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
import anyio.lowlevel
import uvicorn
from aiohttp import web
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from testing.emulators.scripted import wait_for_client_close
from testing.waits import until_sync

FORECAST = {"temp_c": 21, "conditions": "sunny"}
_PIECE = b"x" * 65_536
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
    pairs: tuple[tuple[str, str], ...] = ()
    """Every pair of its query, in order, repeated keys included (``query`` keeps one per key)."""


class HttpToolServer:
    """The HTTP tool server: ``async with HttpToolServer() as server``; ``server.url("/weather")``."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.abandoned = 0
        self.big_sent: list[int] = []
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._held = asyncio.Event()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self._port}{path}"

    async def __aenter__(self) -> HttpToolServer:
        app = web.Application()
        for path, handler in [
            ("/weather", self._weather),
            ("/echo", self._echo),
            ("/hang", self._hang),
            ("/held", self._held_weather),
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
        pairs = tuple(request.query.items())
        seen = Seen(
            request.method, request.path, dict(request.query), dict(request.headers), body, time.monotonic(), pairs
        )
        self.seen.append(seen)
        return seen

    async def _weather(self, request: web.Request) -> web.Response:
        return _forecast(await self._record(request))

    async def _echo(self, request: web.Request) -> web.Response:
        seen = await self._record(request)
        body = json.loads(seen.body) if seen.body else None
        return web.json_response({"method": seen.method, "query": seen.query, "json": body})

    async def _hang(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        await wait_for_client_close(request)
        self.abandoned += 1
        return web.Response()  # never reaches the client: it has gone

    def release(self) -> None:
        """``/held`` answers: the requests waiting now, and every later one at once."""
        self._held.set()

    async def _held_weather(self, request: web.Request) -> web.Response:
        seen = await self._record(request)
        await self._held.wait()
        return _forecast(seen)

    async def _redirect(self, request: web.Request) -> web.Response:
        await self._record(request)
        raise web.HTTPFound("/weather?city=Elsewhere")

    async def _error(self, request: web.Request) -> web.Response:
        await self._record(request)
        return web.json_response({"error": "the weather service is down"}, status=500)

    async def _big(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        chars = int(request.query.get("chars", "100000"))
        response = web.StreamResponse(headers={"Content-Type": "text/plain; charset=utf-8"})
        response.content_length = chars
        await response.prepare(request)
        sent = 0
        try:
            while sent < chars:
                piece = _PIECE[: chars - sent]
                await response.write(piece)  # waits while the client does not read
                sent += len(piece)
            await response.write_eof()
        except ConnectionError:  # the client went
            pass
        finally:
            self.big_sent.append(sent)
        return response


def _forecast(seen: Seen) -> web.Response:
    """The ``/weather`` answer to ``seen``: the forecast for its ``city`` (the query's, or a POST body's)."""
    city = seen.query.get("city", "")
    if seen.method == "POST":
        city = str(json.loads(seen.body or b"{}").get("city", ""))
    return web.json_response({"city": city, **FORECAST})


class McpToolServer:
    """The MCP server: ``with McpToolServer() as server``; ``server.url`` is its endpoint (``/mcp``)."""

    def __init__(self, required_header: tuple[str, str] | None = None) -> None:
        self.headers_seen: list[dict[str, str]] = []
        self.calls: list[str] = []
        self.listings = 0
        self.held = 0
        self.flood_sent: list[int] = []
        self._required = required_header
        self._stopping = threading.Event()
        self._holding = threading.Event()
        self._mcp_server: MCPServer | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/mcp"

    def hold(self) -> None:
        """Every request from now on waits, unanswered, until ``release()`` (or the server stops)."""
        self._holding.set()

    def release(self) -> None:
        self._holding.clear()

    def remove_tool(self, name: str) -> None:
        """Stop offering ``name``: later listings leave it out."""
        assert self._mcp_server is not None
        self._mcp_server.remove_tool(name)

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

        @server.tool()
        def flood(chars: int) -> str:
            """A very long answer (answered by the server's front: ``_flood``)."""
            return "x" * min(chars, 10)

        self._mcp_server = server
        return server

    async def _wait_while_held(self) -> None:
        if self._holding.is_set():
            self.held += 1
            while self._holding.is_set() and not self._stopping.is_set():  # noqa: ASYNC110 - threading.Events
                await anyio.sleep(0.01)

    async def _flood(self, request_id: object, chars: int, receive: Receive, send: Send) -> None:
        """Answer a ``flood`` call with ``chars`` characters of text, written as the client takes them, until it
        goes (``receive`` says so)."""
        gone = anyio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        head = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": ""}]}})
        before, after = head.split('"text": ""', 1)
        sent = 0
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch)
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": (before + '"text": "').encode(), "more_body": True})
            while sent < chars and not gone.is_set():
                piece = _PIECE[: chars - sent]
                await send({"type": "http.response.body", "body": piece, "more_body": True})
                sent += len(piece)
                await anyio.lowlevel.checkpoint()  # uvicorn drops a send after a disconnect: let the watcher see it
            if not gone.is_set():
                await send({"type": "http.response.body", "body": ('"' + after).encode(), "more_body": False})
            self.flood_sent.append(sent)
            tasks.cancel_scope.cancel()

    def _app(self) -> Asgi:
        inner: Asgi = self._mcp().streamable_http_app(host="127.0.0.1")
        required = self._required

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            self.headers_seen.append(headers)
            await self._wait_while_held()
            if scope["path"] == "/moved":  # a redirect within the server's origin, keeping the method
                await send({"type": "http.response.start", "status": 307, "headers": [(b"location", b"/mcp")]})
                await send({"type": "http.response.body", "body": b""})
                return
            if required is not None and headers.get(required[0].lower()) != required[1]:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
            body, more = b"", scope["method"] == "POST"
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message["type"] == "http.request" and message.get("more_body", False)
            request = json.loads(body) if body.strip().startswith(b"{") else {}
            params = request.get("params") or {}
            if request.get("method") == "tools/list":
                self.listings += 1
            elif request.get("method") == "tools/call":
                self.calls.append(str(params.get("name")))
                if params.get("name") == "flood":
                    await self._flood(request.get("id"), int(params["arguments"]["chars"]), receive, send)
                    return
            replayed = False

            async def replay() -> MutableMapping[str, Any]:
                nonlocal replayed
                if replayed or scope["method"] != "POST":
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            await inner(scope, replay, send)

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
