"""The listener: serve every endpoint of ``agent.wires.endpoints`` while the models load, and close them all.

Its one reason to change is the server's life: start, ready, drain, close. ``running_server(settings, load)``
listens at once for WebSockets (the endpoints' paths, and the plain HTTP routes answered during the handshake:
``agent.front_door.routes``), starts every listener a row of the table brings (``Endpoint.listener``, when the
row's settings turn it on; ``RunningServer.listener_port(name)`` says on which port), and loads the components in
a worker thread; ``GET /healthz`` answers 503 until they are loaded, then 200; 503 again while the server is full
or draining
(``agent.runtime.server.admission``; upgrades are then refused with 503 and ``Retry-After``).
``RunningServer.drain`` lets the live calls finish (``agent.runtime.server.drain``); leaving ``running_server``
closes whatever is still open with 1001. WebSocket limits are explicit: no compression, ``max_size``,
``max_queue``, open/close timeouts, no server header; the keepalive and the socket options that find a peer
that does not read are ``agent.runtime.server.liveness``'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager

from websockets.asyncio.server import Server, serve

from agent.config import Settings
from agent.core.events import SHUTTING_DOWN
from agent.front_door.routes import Routes
from agent.runtime.components import Components
from agent.runtime.server.state import ServerState, limits
from agent.security.auth import Authenticator
from agent.security.limiter import Limiter
from agent.wires.endpoints import ENDPOINTS, EndpointListener, endpoint

log = logging.getLogger(__name__)


class RunningServer:
    """Handle on a listening server (see ``running_server``)."""

    def __init__(
        self,
        server: Server,
        state: ServerState,
        settings: Settings,
        listeners: Mapping[str, EndpointListener] | None = None,
    ) -> None:
        """``listeners``: the endpoints' own listeners that were started, by endpoint name."""
        self._server = server
        self._state = state
        self._settings = settings
        self._listeners = dict(listeners or {})

    @property
    def port(self) -> int:
        sock = next(iter(self._server.sockets))
        return int(sock.getsockname()[1])

    @property
    def host(self) -> str:
        return self._settings.server.host

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, name: str, scheme: str = "ws") -> str:
        """The URL of the WebSocket endpoint called ``name`` (``agent.wires.endpoints``). Raises ``KeyError``
        for an endpoint with no path."""
        path = endpoint(name).path
        if path is None:
            raise KeyError(f"{name} is not a WebSocket endpoint")
        return f"{scheme}://{self.host}:{self.port}{path}"

    def listener_port(self, name: str) -> int | None:
        """The port of the listener the endpoint called ``name`` brought (``None``: the settings left it off)."""
        listener = self._listeners.get(name)
        return listener.port if listener is not None else None

    @property
    def ws_url(self) -> str:
        """Protocol v1's URL."""
        return self.url("browser")

    @property
    def realtime_base_url(self) -> str:
        """What an OpenAI client takes as ``base_url`` (it connects to ``.../realtime`` under it)."""
        return self.url("realtime", "http").rsplit("/", 1)[0]

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

    async def drain(self, drain_s: float | None = None) -> bool:
        """Stop taking calls (``/healthz`` and upgrades: 503 ``draining``) and let every live call finish its
        reply, hear the goodbye and close 1001, within ``drain_s`` (default ``AGENT_SERVER__DRAIN_S``).
        ``True`` when all closed in time; the rest are closed 1001 when ``running_server`` exits."""
        return await self._state.calls.drain(self._settings.server.drain_s if drain_s is None else drain_s)


async def _load(state: ServerState, load: Callable[[], Components]) -> None:
    try:
        state.components = await asyncio.to_thread(load)
        if state.components.tools is not None:
            await state.components.tools.warm()  # the MCP listings start now, in the background
        log.info("models loaded; ready for calls")
    except Exception as exc:
        log.exception("loading components failed")
        state.load_error = f"{type(exc).__name__}: {exc}"
    finally:
        state.ready.set()


@asynccontextmanager
async def running_server(
    settings: Settings, load: Callable[[], Components], limiter: Limiter | None = None
) -> AsyncIterator[RunningServer]:
    """Listen on ``settings.server`` host/port (port 0 picks a free one) while ``load`` runs in a thread.
    ``limiter``: where per-tenant and per-address limits are counted (default: this process)."""
    state = ServerState(limits(settings.server), auth=Authenticator.from_settings(settings.auth))
    if limiter is not None:
        state.limiter = limiter
    state.limiter.on_error = state.metrics.shared_limit_error
    routes = Routes(settings, state)
    cfg = settings.server
    server = await serve(
        routes.handle,
        cfg.host,
        cfg.port,
        process_request=routes.process_request,
        process_response=routes.process_response,
        compression=None,
        max_size=cfg.max_message_bytes,
        max_queue=cfg.max_queue,
        ping_interval=None,  # the keepalive is the routes' own (agent.runtime.server.liveness): it has deadlines
        ping_timeout=None,
        open_timeout=cfg.open_timeout_s,
        close_timeout=cfg.close_timeout_s,
        server_header=None,
    )
    listeners: dict[str, EndpointListener] = {}
    for row in ENDPOINTS:
        listener = row.listener(settings, state, row.opening) if row.listener is not None else None
        if listener is not None:
            await listener.start()
            listeners[row.name] = listener
    loader = asyncio.create_task(_load(state, load), name="load-components")
    try:
        yield RunningServer(server, state, settings, listeners)
    finally:
        state.calls.close_all()  # calls a drain did not end (or none was asked for): 1001 at once
        for listener in listeners.values():
            await listener.close()
        server.close(code=1001, reason=SHUTTING_DOWN)
        await server.wait_closed()
        if not loader.done():
            loader.cancel()
        await asyncio.gather(loader, return_exceptions=True)
