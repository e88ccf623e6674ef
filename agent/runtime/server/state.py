"""What the front door shares between its listeners: the components, the load, the calls, the callers' seats.

Its one reason to change is what a listener needs to know to take or refuse a call. One ``ServerState`` per
server, made by ``running_server`` and read by the WebSocket routes (``agent.front_door.routes``) and by any
other listener an endpoint brings (``Endpoint.listener``, e.g. AudioSocket's TCP one).
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection

from agent.config import ServerSettings
from agent.errors import ProtocolError
from agent.runtime.call.socket import CallSocket
from agent.runtime.components import Components
from agent.runtime.metrics.server import ServerMetrics
from agent.runtime.server.admission import Refusal, refusal
from agent.runtime.server.drain import LiveCalls
from agent.runtime.server.occupancy import PEER_LIMIT, TENANT_LIMIT, Limits, Occupancy, Occupant, Seat
from agent.runtime.server.upgrade import Admission
from agent.security.auth import Authenticator, Principal
from agent.security.limiter import UNCHECKED, Limiter

PLACE_MARGIN_S = 30.0
"""A place in the shared count of sockets opening lapses this long after the socket's own deadlines (the
handshake's and the session start's), should its replica die before giving it back."""


def limits(server: ServerSettings) -> Limits:
    """The bounds of sockets a server holds, from its settings."""
    return Limits(
        server.max_sessions,
        server.max_opening,
        server.max_opening_per_peer,
        server.max_opening_per_tenant,
        server.opening_anonymous,
    )


@dataclass(slots=True)
class ServerState:
    limits: Limits = field(default_factory=lambda: limits(ServerSettings()))
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
    limiter: Limiter = field(default_factory=Limiter)
    """Where the per-tenant and per-address limits are counted; ``limiter.shared``: across replicas too."""
    _releasing: set[asyncio.Task[None]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.occupancy = Occupancy(self.limits, self._give_back)

    async def share(self, seat: Seat, server: ServerSettings) -> Refusal | None:
        """Count ``seat`` (opening, already counted here) in the count every replica shares of its tenant's or its
        address's sockets opening; the refusal when that count is at its bound. A counter that cannot answer in
        time takes it (fail open: this process's own bound still holds). Ask only while ``limiter.shared``."""
        limits = self.limits
        if seat.tenant is not None and seat.per_peer and limits.max_opening_per_tenant:
            held = await self.limiter.hold(
                "opening_tenant", seat.tenant, limits.max_opening_per_tenant, self._ttl(server)
            )
            refused = TENANT_LIMIT
        elif seat.anonymous and limits.max_opening_per_peer:
            held = await self.limiter.hold("opening_peer", seat.peer, limits.max_opening_per_peer, self._ttl(server))
            refused = PEER_LIMIT
        else:
            return None
        if held is None:
            return refused
        if held != UNCHECKED:
            seat.place = held
            if seat.state != "opening":  # it stopped opening while the counter answered
                self._give_back(seat)
        return None

    @staticmethod
    def _ttl(server: ServerSettings) -> float:
        return server.open_timeout_s + server.start_timeout_s + PLACE_MARGIN_S

    def _give_back(self, seat: Seat) -> None:
        """``seat`` stopped opening: its shared place, if any, is released (in the background: never awaited)."""
        place, seat.place = seat.place, None
        if place is None:
            return
        try:
            task = asyncio.get_running_loop().create_task(self.limiter.release(place), name="release-place")
        except RuntimeError:
            return  # no loop (a socket collected at exit): the place lapses at its deadline
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

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

    def figures(self, server: ServerSettings, peer: str, tenant: str | None = None) -> str:
        """The counts behind a decision to take or refuse a socket from ``peer`` (of ``tenant``), for its log line:
        each with its bound (``-``: none)."""
        occupancy, limits = self.occupancy, self.limits
        queues = self.components.queue_stats(occupancy.speaking) if self.components is not None else None
        wait_ms = round(queues.first_audio_wait_s * 1000) if queues is not None else 0
        anonymous = limits.max_opening if limits.max_opening_anonymous is None else limits.max_opening_anonymous
        parts = [
            f"sessions={occupancy.sessions}/{limits.max_sessions}",
            f"opening={occupancy.opening}/{limits.max_opening}",
            f"anonymous={occupancy.anonymous}/{anonymous}",
            f"peer={occupancy.opening_from(peer)}/{limits.max_opening_per_peer or '-'}",
        ]
        if tenant is not None:
            parts.append(f"tenant={occupancy.opening_of(tenant)}/{limits.max_opening_per_tenant or '-'}")
        wait_bound = server.admission_wait_ms or "-"
        parts += [f"speaking={occupancy.speaking}", f"first_audio_wait_ms={wait_ms}/{wait_bound}"]
        if self.components is None:
            parts.append("models=failed" if self.load_error is not None else "models=loading")
        if self.calls.draining:
            parts.append("draining")
        return " ".join(parts)

    def seat(self, socket: CallSocket, peer: str, *, tenant: str | None = None, per_peer: bool = True) -> Seat:
        """A place for a socket that starts opening (``Occupancy.open``: ``tenant`` and ``per_peer`` as its
        ``refusal_to_open`` was asked), until its handler ``claim``s it or it is ``release``d; given back when the
        socket is collected in any case (a last resort: a handshake that fails below the routes is released by
        them at once)."""
        seat = self.occupancy.open(peer, tenant=tenant, per_peer=per_peer)
        self.seats[socket] = seat
        weakref.finalize(socket, self.occupancy.close, seat)
        return seat

    def claim(self, socket: CallSocket) -> Seat | None:
        """The handler of ``socket`` takes its seat (``None``: it has none): from now on the handler's ``Occupant``
        gives it back, and ``release`` no longer does."""
        return self.seats.pop(socket, None)

    def release(self, socket: CallSocket) -> None:
        """``socket`` is gone, or refused, before any handler claimed its seat: its place is given back now (not
        when the socket is collected). Nothing happens once a handler has claimed it."""
        seat = self.seats.pop(socket, None)
        if seat is not None:
            self.occupancy.close(seat)

    def occupant(self, seat: Seat) -> Occupant:
        """What a connection on ``seat`` reports to (its session's start and end reach ``/metrics``)."""
        metrics = self.metrics
        return Occupant(self.occupancy, seat, lambda on: metrics.session_opened() if on else metrics.session_closed())

    def header_principal(self, ws: ServerConnection) -> Principal | None:
        """The caller named by the upgrade's ``Authorization: Bearer`` header, checked at the upgrade.

        ``None``: no header while auth is on (a ``token`` in ``session.start`` must decide). Raises
        ``ProtocolError("unauthorized", reason)`` for a bad, forged or expired header token (answer
        ``error`` and close 1008). On an endpoint that decides at the upgrade (a phone gateway, Realtime) always
        a principal (the upgrade refused the others). Auth off: ``ANONYMOUS``.
        """
        admission = self.admissions.get(ws)
        if admission is None:
            return self.auth.from_header(None)
        if admission.error is not None:
            raise ProtocolError(admission.error.code, admission.error.message)
        return admission.principal
