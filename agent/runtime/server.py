"""The listener: WebSocket ``/ws`` plus the HTTP routes answered during the handshake phase.

``running_server(settings, load)`` starts listening at once and loads the components in a worker thread;
``GET /healthz`` answers 503 until they are loaded, then 200. WebSocket limits are explicit: no
compression, ``max_size``, ``max_queue``, ping interval/timeout, open/close timeouts, no server header.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from agent.config import Settings
from agent.runtime.components import Components
from agent.runtime.connection import Connection, await_start

log = logging.getLogger(__name__)

WS_PATH = "/ws"


@dataclass(slots=True)
class ServerState:
    components: Components | None = None
    load_error: str | None = None
    sessions: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)


def _json_response(status: HTTPStatus, body: dict[str, object]) -> Response:
    data = json.dumps(body).encode()
    headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    headers["Cache-Control"] = "no-store"
    return Response(status.value, status.phrase, headers, data)


class RunningServer:
    """Handle on a listening server (see ``running_server``)."""

    def __init__(self, server: Server, state: ServerState, settings: Settings) -> None:
        self._server = server
        self._state = state
        self._settings = settings

    @property
    def port(self) -> int:
        sock = next(iter(self._server.sockets))
        return int(sock.getsockname()[1])

    @property
    def host(self) -> str:
        return self._settings.server.host

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}{WS_PATH}"

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def state(self) -> ServerState:
        return self._state

    async def wait_ready(self) -> None:
        """Wait until the components are loaded. Raises ``RuntimeError`` if loading failed."""
        await self._state.ready.wait()
        if self._state.load_error is not None:
            raise RuntimeError(self._state.load_error)

    async def serve_forever(self) -> None:
        await self._server.serve_forever()


class _Routes:
    def __init__(self, settings: Settings, state: ServerState) -> None:
        self._settings = settings
        self._state = state

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return self._health()
        if path != WS_PATH:
            return _json_response(HTTPStatus.NOT_FOUND, {"error": "not found", "websocket": WS_PATH})
        if self._state.components is None:
            return _json_response(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "server is still loading models"})
        if self._state.sessions >= self._settings.server.max_sessions:
            return _json_response(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "server is at its session limit"})
        return None

    def _health(self) -> Response:
        state = self._state
        if state.components is None:
            status = "failed" if state.load_error else "loading"
            body: dict[str, object] = {"status": status, "ready": False}
            if state.load_error:
                body["error"] = state.load_error
            return _json_response(HTTPStatus.SERVICE_UNAVAILABLE, body)
        return _json_response(HTTPStatus.OK, {"status": "ok", "ready": True, "sessions": state.sessions})

    async def handle(self, ws: ServerConnection) -> None:
        components = self._state.components
        if components is None:  # process_request already refused; defensive
            await ws.close(1013, "server not ready")
            return
        self._state.sessions += 1
        try:
            started = await await_start(ws, self._settings, components)
            if started is None:
                return
            start, voice = started
            await Connection(ws, self._settings, components, start, voice).run()
        except Exception:
            log.exception("connection handler failed")
            await ws.close(1011, "internal error")
        finally:
            self._state.sessions -= 1


async def _load(state: ServerState, load: Callable[[], Components]) -> None:
    try:
        state.components = await asyncio.to_thread(load)
        log.info("models loaded; ready for calls")
    except Exception as exc:
        log.exception("loading components failed")
        state.load_error = f"{type(exc).__name__}: {exc}"
    finally:
        state.ready.set()


@asynccontextmanager
async def running_server(settings: Settings, load: Callable[[], Components]) -> AsyncIterator[RunningServer]:
    """Listen on ``settings.server`` host/port (port 0 picks a free one) while ``load`` runs in a thread."""
    state = ServerState()
    routes = _Routes(settings, state)
    cfg = settings.server
    server = await serve(
        routes.handle,
        cfg.host,
        cfg.port,
        process_request=routes.process_request,
        compression=None,
        max_size=cfg.max_message_bytes,
        max_queue=cfg.max_queue,
        ping_interval=cfg.ping_interval_s,
        ping_timeout=cfg.ping_timeout_s,
        open_timeout=cfg.open_timeout_s,
        close_timeout=cfg.close_timeout_s,
        server_header=None,
    )
    loader = asyncio.create_task(_load(state, load), name="load-components")
    try:
        yield RunningServer(server, state, settings)
    finally:
        server.close()
        await server.wait_closed()
        if not loader.done():
            loader.cancel()
        await asyncio.gather(loader, return_exceptions=True)
