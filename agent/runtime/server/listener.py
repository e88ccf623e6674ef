"""The listener: WebSockets ``/ws`` (protocol v1), ``/twilio``, ``/telnyx`` and ``/vonage`` (phone gateways),
plus the HTTP routes answered during the handshake phase (``/healthz``, ``/metrics``, the browser page at
``/``), and the Asterisk AudioSocket TCP listener when ``audiosocket.port`` is set
(``agent.wires.audiosocket.listener``).

``running_server(settings, load)`` starts listening at once and loads the components in a worker thread;
``GET /healthz`` answers 503 until they are loaded, then 200; 503 again while the server is full or
draining (``agent.runtime.server.admission``; upgrades are then refused with 503 and ``Retry-After``).
``RunningServer.drain`` lets the live calls finish (``agent.runtime.server.drain``); leaving ``running_server``
closes whatever is still open with 1001. WebSocket limits are explicit: no compression, ``max_size``,
``max_queue``, ping interval/timeout, open/close timeouts, no server header.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from agent.config import ServerSettings, Settings
from agent.core.session import SHUTTING_DOWN
from agent.errors import ProtocolError
from agent.runtime.call.connection import Connection
from agent.runtime.call.prestart import Credentials, Opening, PreStart
from agent.runtime.call.socket import CallSocket
from agent.runtime.components import Components
from agent.runtime.metrics.registry import CONTENT_TYPE as METRICS_CONTENT_TYPE
from agent.runtime.metrics.registry import ServerMetrics
from agent.runtime.server.admission import Refusal, refusal
from agent.runtime.server.drain import LiveCalls
from agent.runtime.server.forwarded import client_address, networks, peer_key
from agent.runtime.server.occupancy import Limits, Occupancy, Occupant, Seat
from agent.runtime.server.responses import READ_METHODS, for_method, json_response, method_not_allowed, secured
from agent.runtime.server.static import StaticFiles
from agent.runtime.server.upgrade import (
    GATEWAY_CALLERS,
    REALTIME_PATH,
    TELNYX_PATH,
    VONAGE_PATH,
    Admission,
    UpgradeGate,
)
from agent.security.auth import Authenticator, Principal
from agent.wires.audiosocket.listener import AudioSocketListener

log = logging.getLogger(__name__)

WS_PATH = "/ws"
TWILIO_PATH = "/twilio"
SOCKET_PATHS: dict[str, Opening] = {
    WS_PATH: PreStart.open_browser,
    TWILIO_PATH: PreStart.open_twilio,
    TELNYX_PATH: PreStart.open_telnyx,
    VONAGE_PATH: PreStart.open_vonage,
    REALTIME_PATH: PreStart.open_realtime,
}
"""The WebSocket paths, and how each one's session starts."""


@dataclass(slots=True)
class ServerState:
    limits: Limits = field(default_factory=lambda: _limits(ServerSettings()))
    components: Components | None = None
    load_error: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    metrics: ServerMetrics = field(default_factory=ServerMetrics)
    auth: Authenticator = field(default_factory=lambda: Authenticator(None))
    """Checks ``token`` fields of messages (``auth.from_token``); the upgrade's header is checked already."""
    admissions: weakref.WeakKeyDictionary[ServerConnection, Admission] = field(
        default_factory=weakref.WeakKeyDictionary
    )
    calls: LiveCalls = field(default_factory=LiveCalls)
    """The open connections (told to finish on drain)."""
    occupancy: Occupancy = field(init=False)
    """Sockets opening, sessions, callers speaking (``agent.runtime.server.occupancy``)."""
    seats: weakref.WeakKeyDictionary[CallSocket, Seat] = field(default_factory=weakref.WeakKeyDictionary)

    def __post_init__(self) -> None:
        self.occupancy = Occupancy(self.limits)

    @property
    def sessions(self) -> int:
        """Sessions started and not closed."""
        return self.occupancy.sessions

    @property
    def connections(self) -> int:
        """Every socket held: opening or in a session."""
        return self.occupancy.sessions + self.occupancy.opening

    def refusal(self, server: ServerSettings) -> Refusal | None:
        """Why a new call would be refused now (``None``: it would be taken). Load is work: the models' queues
        and one turn for each caller speaking now, never sockets that have not spoken."""
        occupancy = self.occupancy
        queues = self.components.queue_stats(occupancy.speaking) if self.components is not None else None
        return refusal(
            loaded=self.components is not None,
            failed=self.load_error is not None,
            draining=self.calls.draining,
            sessions=occupancy.sessions,
            max_sessions=server.max_sessions,
            first_audio_wait_s=queues.first_audio_wait_s if queues is not None else 0.0,
            max_wait_s=server.admission_wait_ms / 1000,
        )

    def seat(self, socket: CallSocket, peer: str) -> Seat:
        """A place for a socket that starts opening (``Occupancy.open``), given back when the socket is
        collected if no handler ever closes it (a handshake that failed after the upgrade's checks)."""
        seat = self.occupancy.open(peer)
        self.seats[socket] = seat
        weakref.finalize(socket, self.occupancy.close, seat)
        return seat

    def occupant(self, seat: Seat) -> Occupant:
        """What a connection on ``seat`` reports to (its session's start and end reach ``/metrics``)."""
        metrics = self.metrics
        return Occupant(self.occupancy, seat, lambda on: metrics.session_opened() if on else metrics.session_closed())

    def header_principal(self, ws: ServerConnection) -> Principal | None:
        """The caller named by the upgrade's ``Authorization: Bearer`` header, checked at the upgrade.

        ``None``: no header while auth is on (a ``token`` in ``session.start`` must decide). Raises
        ``ProtocolError("unauthorized", reason)`` for a bad, forged or expired header token (answer
        ``error`` and close 1008). On ``/twilio`` always a principal (the upgrade refused the others).
        Auth off: ``ANONYMOUS``.
        """
        admission = self.admissions.get(ws)
        if admission is None:
            return self.auth.from_header(None)
        if admission.error is not None:
            raise ProtocolError(admission.error.code, admission.error.message)
        return admission.principal


_json_response = json_response


def _limits(server: ServerSettings) -> Limits:
    return Limits(server.max_sessions, server.max_opening, server.max_opening_per_peer)


def _refused(refused: Refusal) -> Response:
    return _json_response(
        HTTPStatus(refused.status),
        {"error": refused.message, "reason": refused.reason},
        {"Retry-After": str(refused.retry_after_s)},
    )


def _bound_send_buffer(connection: ServerConnection, size: int) -> None:
    """A small kernel send buffer: a client that stops reading blocks our next send soon (``send_timeout_s``)."""
    sock = connection.transport.get_extra_info("socket") if size > 0 else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)


class RunningServer:
    """Handle on a listening server (see ``running_server``)."""

    def __init__(
        self, server: Server, state: ServerState, settings: Settings, audiosocket: AudioSocketListener | None = None
    ) -> None:
        self._server = server
        self._state = state
        self._settings = settings
        self._audiosocket = audiosocket

    @property
    def port(self) -> int:
        sock = next(iter(self._server.sockets))
        return int(sock.getsockname()[1])

    @property
    def host(self) -> str:
        return self._settings.server.host

    @property
    def realtime_base_url(self) -> str:
        """What an OpenAI client takes as ``base_url`` (it connects to ``.../v1/realtime``)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}{WS_PATH}"

    @property
    def twilio_url(self) -> str:
        return f"ws://{self.host}:{self.port}{TWILIO_PATH}"

    @property
    def telnyx_url(self) -> str:
        return f"ws://{self.host}:{self.port}{TELNYX_PATH}"

    @property
    def vonage_url(self) -> str:
        return f"ws://{self.host}:{self.port}{VONAGE_PATH}"

    @property
    def audiosocket_port(self) -> int | None:
        """The AudioSocket listener's TCP port (``None``: ``audiosocket.port`` is not set)."""
        return self._audiosocket.port if self._audiosocket is not None else None

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

    async def drain(self, drain_s: float | None = None) -> bool:
        """Stop taking calls (``/healthz`` and upgrades: 503 ``draining``) and let every live call finish its
        reply, hear the goodbye and close 1001, within ``drain_s`` (default ``AGENT_SERVER__DRAIN_S``).
        ``True`` when all closed in time; the rest are closed 1001 when ``running_server`` exits."""
        return await self._state.calls.drain(self._settings.server.drain_s if drain_s is None else drain_s)


class _Routes:
    def __init__(self, settings: Settings, state: ServerState) -> None:
        self._settings = settings
        self._state = state
        self._static = StaticFiles()
        self._gate = UpgradeGate(settings, state.auth)
        self._proxies = networks(settings.server.trusted_proxies)

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path not in SOCKET_PATHS:
            return for_method(request.method, self._http(request, path))
        local = connection.local_address
        admission = self._gate.admit(request, path, (str(local[0]), int(local[1])) if local else None)
        if admission.refusal is not None:
            return admission.refusal
        state, server = self._state, self._settings.server
        # A bad header token on /ws is told so (error, close 1008), whatever the load: never a 503 for it.
        refused = state.refusal(server) if admission.error is None or state.components is None else None
        remote = connection.remote_address
        client = str(remote[0]) if remote else ""
        peer = peer_key(client_address(client, request.headers.get_all("X-Forwarded-For"), self._proxies))
        # A phone provider whose credential checked out carries many callers from a few addresses: total bound only.
        provider = path in GATEWAY_CALLERS and admission.principal is GATEWAY_CALLERS[path]
        refused = refused or state.occupancy.refusal_to_open(peer, per_peer=not provider)
        if refused is not None:
            state.metrics.refused(refused.reason)
            if refused.status == HTTPStatus.TOO_MANY_REQUESTS:
                log.info("refused an upgrade from %s: %s", peer, refused.message)
            return _refused(refused)
        state.admissions[connection] = admission
        state.seat(connection, peer)
        _bound_send_buffer(connection, server.send_buffer_bytes)
        return None

    def _http(self, request: Request, path: str) -> Response:
        """The plain HTTP routes: ``/healthz``, ``/metrics`` and the page; GET and HEAD only."""
        upgrade = any("upgrade" in v.lower() for v in request.headers.get_all("Connection"))
        page = None if upgrade else self._static.response(path)
        if path not in ("/healthz", "/metrics") and page is None:
            return _json_response(HTTPStatus.NOT_FOUND, {"error": "not found", "websocket": WS_PATH})
        if request.method not in READ_METHODS:
            return method_not_allowed(request.method)
        if path == "/healthz":
            return self._health()
        if path == "/metrics":
            return self._metrics()
        assert page is not None
        return page

    def _health(self) -> Response:
        """200 while calls are taken; else 503 with ``status`` and ``reason`` loading, failed, draining or full."""
        state = self._state
        detail = state.components.health_detail() if state.components is not None else {}
        refused = state.refusal(self._settings.server)
        if refused is None:
            return _json_response(HTTPStatus.OK, {"status": "ok", "ready": True} | self._counts() | detail)
        body: dict[str, object] = {"ready": False} | self._counts() | detail
        body |= {"status": refused.reason, "reason": refused.reason}
        if state.load_error:
            body["error"] = state.load_error
        return _json_response(HTTPStatus.SERVICE_UNAVAILABLE, body, {"Retry-After": str(refused.retry_after_s)})

    def _counts(self) -> dict[str, object]:
        occupancy = self._state.occupancy
        return {"sessions": occupancy.sessions, "speaking": occupancy.speaking, "opening": occupancy.opening}

    def _metrics(self) -> Response:
        components = self._state.components
        speech = components.speech_status() if components else ()
        occupancy = self._state.occupancy
        queues = components.queue_stats(occupancy.speaking) if components else None
        self._state.metrics.occupancy(occupancy.opening, occupancy.speaking)
        if components is not None and components.fidelity is not None:
            for (voice, language), value in components.fidelity.scores().items():
                self._state.metrics.voice_similarity_scored(voice, language, value)
        data = self._state.metrics.render(speech, queues).encode()
        headers = Headers([("Content-Type", METRICS_CONTENT_TYPE), ("Content-Length", str(len(data)))])
        headers["Cache-Control"] = "no-store"
        return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, secured(headers), data)

    async def handle(self, ws: ServerConnection) -> None:
        state = self._state
        seat = state.seats.get(ws) or state.seat(ws, "")
        components = state.components
        if components is None:  # process_request already refused; defensive
            state.occupancy.close(seat)
            await ws.close(1013, "server not ready")
            return
        try:
            try:
                credentials = Credentials(state.auth, state.header_principal(ws))
            except ProtocolError as exc:  # a bad header token: answered and closed 1008 by the connection
                credentials = Credentials(state.auth, None, exc)
            path = ws.request.path.split("?", 1)[0] if ws.request is not None else WS_PATH
            connection = Connection(
                ws,
                self._settings,
                components,
                credentials,
                state.metrics,
                opening=SOCKET_PATHS.get(path, PreStart.open_browser),
                occupant=state.occupant(seat),
            )
            state.calls.add(connection)
            try:
                await connection.run()
            finally:
                state.calls.discard(connection)
        except ConnectionClosed:
            log.info("client went away")  # an ordinary disconnect is not an error: no traceback
        except Exception:
            log.exception("connection handler failed")
            with contextlib.suppress(Exception):
                await ws.close(1011, "internal error")
        finally:
            state.occupant(seat).left()


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
    state = ServerState(_limits(settings.server), auth=Authenticator.from_settings(settings.auth))
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
    audiosocket = AudioSocketListener(settings, state) if settings.audiosocket.port is not None else None
    if audiosocket is not None:
        await audiosocket.start()
    loader = asyncio.create_task(_load(state, load), name="load-components")
    try:
        yield RunningServer(server, state, settings, audiosocket)
    finally:
        state.calls.close_all()  # calls a drain did not end (or none was asked for): 1001 at once
        if audiosocket is not None:
            await audiosocket.close()
        server.close(code=1001, reason=SHUTTING_DOWN)
        await server.wait_closed()
        if not loader.done():
            loader.cancel()
        await asyncio.gather(loader, return_exceptions=True)
