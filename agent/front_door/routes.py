"""The routes: what the WebSocket listener answers, read from the ``ENDPOINTS`` table.

Its one reason to change is how a request reaches its endpoint. An upgrade to an endpoint's path is checked
(``agent.runtime.server.upgrade``: method, the handshake's form, Origin, the endpoint's credential check), then
admitted by load (``ServerState.refusal``: 503 with ``Retry-After``) and by the sockets still opening
(``agent.runtime.server.occupancy``: one with no credential at the upgrade is bounded per address, 429; one whose
credential checked out per tenant, 429, never by the address's anonymous sockets; a phone provider's, which
carries many callers from a few addresses, by the total only; with limits shared across replicas, the bounds per
address and per tenant are also asked of the shared count, ``ServerState.share``, failing open); its handler
runs a ``Connection`` with the endpoint's opening, beside the keepalive (``agent.runtime.server.liveness``). Any
other path is plain HTTP, GET and HEAD only: ``/healthz``, ``/metrics`` and the browser page
(``agent.runtime.server.static``).

Every refused upgrade goes through ``_refuse``: counted by reason (``voice_agent_refusals_total``: ``method``,
``not_websocket``, ``bad_handshake``, ``bad_version``, ``origin``, ``credential``, ``not_found``, then the
admission's ``loading``, ``failed``, ``draining``, ``full``, ``busy``, ``peer_limit``, ``tenant_limit``,
``opening_full``) and logged on one INFO line with the counts behind the decision (``ServerState.figures``);
while tracing is on, also a span ``upgrade.refused`` with the same reason and counts (``refusal_span``).
A socket admitted here holds a seat until its handler claims it; a handshake that ends without a handler
(``websockets`` refusing it after all, or the peer gone before the answer) gives the seat back at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from http import HTTPStatus

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from agent.config import Settings
from agent.errors import ProtocolError
from agent.runtime.call.connection import Connection
from agent.runtime.call.prestart import Credentials
from agent.runtime.metrics.registry import CONTENT_TYPE as METRICS_CONTENT_TYPE
from agent.runtime.server.admission import Refusal
from agent.runtime.server.forwarded import client_address, networks, peer_key
from agent.runtime.server.liveness import Liveness
from agent.runtime.server.refusal_span import refusal_span
from agent.runtime.server.responses import READ_METHODS, for_method, json_response, method_not_allowed, secured
from agent.runtime.server.state import ServerState
from agent.runtime.server.static import StaticFiles
from agent.runtime.server.upgrade import Admission, UpgradeGate
from agent.security.logsafe import shown
from agent.wires.endpoints import ENDPOINTS, PATHS

log = logging.getLogger(__name__)

HOME = ENDPOINTS[0]
"""The server's own protocol: a 404 points to its path, and a handler with no request runs its opening."""


def _refused(refused: Refusal) -> Response:
    return json_response(
        HTTPStatus(refused.status),
        {"error": refused.message, "reason": refused.reason},
        {"Retry-After": str(refused.retry_after_s)},
    )


def _path(request: Request) -> str:
    return request.path.split("?", 1)[0]


def _asks_upgrade(request: Request) -> bool:
    return any("upgrade" in value.lower() for value in request.headers.get_all("Connection"))


class Routes:
    """``process_request`` and ``handle`` of the WebSocket listener."""

    def __init__(self, settings: Settings, state: ServerState) -> None:
        self._settings = settings
        self._state = state
        self._static = StaticFiles()
        self._gate = UpgradeGate(settings, state.auth)
        self._proxies = networks(settings.server.trusted_proxies)
        self._liveness = Liveness(settings.server, lambda: state.metrics.error("keepalive_timeout"))

    async def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = _path(request)
        endpoint = PATHS.get(path)
        if endpoint is None:
            response = for_method(request.method, self._http(request, path))
            if _asks_upgrade(request):
                detail = "no WebSocket endpoint at this path"
                return self._refuse(path, self._peer(connection, request), "not_found", response, detail)
            return response
        peer = self._peer(connection, request)
        local = connection.local_address
        admission = self._gate.admit(request, path, (str(local[0]), int(local[1])) if local else None, endpoint.check)
        if admission.refusal is not None:
            return self._refuse(path, peer, admission.reason, admission.refusal, admission.detail)
        state, server = self._state, self._settings.server
        # A bad header token on /ws is told so (error, close 1008), whatever the load: never a 503 for it.
        refused = state.refusal(server) if admission.error is None or state.components is None else None
        # A valid credential is counted against its tenant, never against the address's anonymous sockets; a phone
        # provider whose credential checked out carries many callers from a few addresses: total bound only.
        tenant, per_peer = self._credited_tenant(admission), not admission.provider
        refused = refused or state.occupancy.refusal_to_open(peer, tenant=tenant, per_peer=per_peer)
        if refused is not None:
            return self._refuse(path, peer, refused.reason, _refused(refused), refused.message, tenant)
        state.admissions[connection] = admission
        seat = state.seat(connection, peer, tenant=tenant, per_peer=per_peer)
        # A handshake that ends without its handler (refused by websockets below, or the peer gone before the
        # answer) gives its place back at once, not when the connection object is collected.
        connection.connection_lost_waiter.add_done_callback(lambda _: state.release(connection))
        if state.limiter.shared:  # counted here already; across replicas too
            refused = await state.share(seat, server)
            if refused is not None:
                state.release(connection)
                state.admissions.pop(connection, None)
                detail = f"{refused.message}, counted across replicas"
                return self._refuse(path, peer, refused.reason, _refused(refused), detail, tenant)
        self._liveness.tune(connection)
        return None

    def process_response(self, connection: ServerConnection, request: Request, response: Response) -> None:
        """After ``websockets`` answered a handshake this server let through: a refusal of its own (a handshake
        it found malformed where ``agent.runtime.server.handshake`` did not) is logged and counted like ours, and
        the socket's place is given back."""
        seat = self._state.seats.get(connection)
        if seat is None or response.status_code == HTTPStatus.SWITCHING_PROTOCOLS:
            return
        self._state.release(connection)
        reason = response.body.decode("utf-8", "replace").strip() or response.reason_phrase
        self._refuse(_path(request), seat.peer, "bad_handshake", response, shown(reason), seat.tenant)

    def _peer(self, connection: ServerConnection, request: Request) -> str:
        """Who the upgrade is counted under (``agent.runtime.server.forwarded``)."""
        remote = connection.remote_address
        client = str(remote[0]) if remote else ""
        return peer_key(client_address(client, request.headers.get_all("X-Forwarded-For"), self._proxies))

    def _refuse(
        self, path: str, peer: str, reason: str, response: Response, detail: str, tenant: str | None = None
    ) -> Response:
        """Count a refused upgrade under ``reason`` (``voice_agent_refusals_total``) and log one line saying why,
        with the counts behind the decision; ``response`` is what the caller gets."""
        self._state.metrics.refused(reason)
        figures = self._state.figures(self._settings.server, peer, tenant)
        log.info(
            "refused an upgrade to %s from %s: %d %s (%s); %s",
            shown(path),
            peer,
            response.status_code,
            reason,
            detail,
            figures,
        )
        tracing = self._state.components.tracing if self._state.components is not None else None
        if tracing is not None:  # the same line as a span (a server still loading has no tracing yet)
            at = time.time_ns()
            tracing.span(refusal_span(at, shown(path), peer, reason, response.status_code, detail, figures, tenant))
        return response

    def _credited_tenant(self, admission: Admission) -> str | None:
        """The tenant a credential checked at the upgrade names (a bearer token while auth is on, a phone
        provider's signature); ``None``: the socket is anonymous (no header yet, or auth off)."""
        principal = admission.principal
        if principal is None or admission.error is not None:
            return None
        return principal.tenant if admission.provider or self._state.auth.enabled else None

    def _http(self, request: Request, path: str) -> Response:
        """The plain HTTP routes: ``/healthz``, ``/metrics`` and the page; GET and HEAD only."""
        page = None if _asks_upgrade(request) else self._static.response(path)
        if path not in ("/healthz", "/metrics") and page is None:
            return json_response(HTTPStatus.NOT_FOUND, {"error": "not found", "websocket": HOME.path})
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
            return json_response(HTTPStatus.OK, {"status": "ok", "ready": True} | self._counts() | detail)
        body: dict[str, object] = {"ready": False} | self._counts() | detail
        body |= {"status": refused.reason, "reason": refused.reason}
        if state.load_error:
            body["error"] = state.load_error
        return json_response(HTTPStatus.SERVICE_UNAVAILABLE, body, {"Retry-After": str(refused.retry_after_s)})

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
        seat = state.claim(ws) or state.occupancy.open("")  # none: process_request refused it (defensive)
        components = state.components
        if components is None:  # process_request already refused; defensive
            state.occupancy.close(seat)
            await ws.close(1013, "server not ready")
            return
        keepalive = asyncio.create_task(self._liveness.watch(ws), name="keepalive")
        try:
            try:
                credentials = Credentials(state.auth, state.header_principal(ws))
            except ProtocolError as exc:  # a bad header token: answered and closed 1008 by the connection
                credentials = Credentials(state.auth, None, exc)
            endpoint = PATHS.get(_path(ws.request), HOME) if ws.request is not None else HOME
            connection = Connection(
                ws,
                self._settings,
                components,
                credentials,
                state.metrics,
                opening=endpoint.opening,
                side=endpoint.side,
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
            keepalive.cancel()
            await asyncio.gather(keepalive, return_exceptions=True)
            state.occupant(seat).left()
