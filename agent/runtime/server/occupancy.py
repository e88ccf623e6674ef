"""Who holds the server now: sockets still opening, sessions, and the calls that are speaking (pure).

A socket passes through three states, each with its own bound, and only one of them is load:

- **opening** (from the upgrade until its session starts: ``session.start``, a phone gateway's start, the
  AudioSocket UUID): it has not spoken and may not even be authenticated, so it is never counted as work. It is
  bounded on its own, by who opens it, and the start deadline (``server.start_timeout_s``) ends it:

  - *anonymous* (no credential checked at the upgrade: a browser sends its token in ``session.start``; with auth
    off, every socket): per peer (``max_opening_per_peer``, 429 ``peer_limit``), and all of them together to a
    share of the total (``max_opening_anonymous``, 503 ``opening_full``);
  - *credentialed* (a valid token at the upgrade names its tenant): per tenant (``max_opening_per_tenant``, 429
    ``tenant_limit``), never per peer: anonymous sockets from the caller's own address (a NAT, a proxy) cannot
    refuse it, and those from anywhere can only take their share of the total, never the room kept for it;
  - *trusted* (a peer that carries many callers: a PBX, a phone provider whose credential checked out): only the
    total bound;

  and all of them in total (``max_opening``, 503 ``opening_full``). A few idle or unauthenticated sockets
  therefore cost nothing to the callers who start sessions.
- **session**: bounded by ``max_sessions`` (a memory bound, checked at the upgrade and again when the session
  starts: sockets that were all opening at once cannot start more sessions than that).
- **speaking**: a session whose caller is in the middle of an utterance. Its turn's work (a transcript and a
  first sentence) is about to be queued, so admission counts it ahead of a new caller's
  (``agent.work.scheduling``); a session that only listens, or says nothing at all, costs no forecast.

Peers are keyed as ``agent.runtime.server.forwarded.peer_key`` names them. With limits shared across replicas
(``AGENT_LIMITS__REDIS_URL``) a seat opening also holds a ``place`` in the shared count of its tenant or address
(``ServerState.share``); ``on_left_opening`` tells whoever gives it back that the seat stopped opening.
``Seat`` is one socket's place; ``Occupancy.close`` is idempotent, so a seat may be closed both by its handler
and by whoever gives back a handshake's seat that no handler claimed (``ServerState.release``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from agent.ports import Hold
from agent.runtime.server.admission import Refusal

State = Literal["opening", "session", "closed"]

PEER_LIMIT = Refusal("peer_limit", "too many connections from this address are still opening", 5, status=429)
TENANT_LIMIT = Refusal("tenant_limit", "too many of this tenant's connections are still opening", 5, status=429)
OPENING_FULL = Refusal("opening_full", "too many connections are still opening", 2)
ANONYMOUS_FULL = Refusal("opening_full", "too many connections without a credential are still opening", 2)


@dataclass(slots=True, eq=False)
class Seat:
    """One socket's place: ``opening`` until its session starts, then ``session``, then ``closed``."""

    peer: str
    tenant: str | None = None
    """The tenant a credential checked at the upgrade named (``None``: anonymous)."""
    per_peer: bool = True
    """``False``: a trusted peer, held to the total bound only."""
    state: State = "opening"
    speaking: bool = False
    place: Hold | None = None
    """Its place in the count the replicas share (``ServerState.share``), while it is opening."""

    @property
    def anonymous(self) -> bool:
        return self.tenant is None and self.per_peer


@dataclass(frozen=True, slots=True)
class Limits:
    max_sessions: int
    max_opening: int
    max_opening_per_peer: int
    """Anonymous sockets per peer; 0: no bound per peer (every caller comes through one proxy address)."""
    max_opening_per_tenant: int = 0
    """Credentialed sockets per tenant; 0: no bound per tenant."""
    max_opening_anonymous: int | None = None
    """Anonymous sockets in all; the rest of ``max_opening`` is kept for the others (``None``: all of it)."""


@dataclass(slots=True)
class Occupancy:
    limits: Limits
    on_left_opening: Callable[[Seat], None] = lambda _: None
    """Called when a seat stops opening (its session starts, or it closes)."""
    _by_peer: Counter[str] = field(default_factory=Counter)
    """Anonymous sockets opening, per peer."""
    _by_tenant: Counter[str] = field(default_factory=Counter)
    """Credentialed sockets opening, per tenant (not the trusted peers')."""
    _opening: int = 0
    _anonymous: int = 0
    _sessions: int = 0
    _speaking: int = 0

    @property
    def opening(self) -> int:
        """Sockets whose session has not started."""
        return self._opening

    @property
    def anonymous(self) -> int:
        """Sockets whose session has not started and whose upgrade carried no credential."""
        return self._anonymous

    @property
    def sessions(self) -> int:
        return self._sessions

    @property
    def speaking(self) -> int:
        """Sessions whose caller is in the middle of an utterance (admission's forecast of work to come)."""
        return self._speaking

    def opening_from(self, peer: str) -> int:
        """Anonymous sockets from ``peer`` whose session has not started (the count ``peer_limit`` bounds)."""
        return self._by_peer[peer]

    def opening_of(self, tenant: str) -> int:
        """Credentialed sockets of ``tenant`` whose session has not started (the count ``tenant_limit`` bounds)."""
        return self._by_tenant[tenant]

    def full(self) -> bool:
        return self._sessions >= self.limits.max_sessions

    def refusal_to_open(self, peer: str, *, tenant: str | None = None, per_peer: bool = True) -> Refusal | None:
        """Why a new socket from ``peer`` (a ``peer_key``) may not start opening now, or ``None``.

        ``tenant``: the tenant a credential checked at the upgrade names (bounded per tenant, not per peer);
        ``None``: anonymous (bounded per peer and to the anonymous share). Without ``per_peer`` only the total
        bound applies (a trusted peer that carries many callers: a PBX, a phone provider)."""
        own = self._own_bound(peer, tenant, per_peer)
        if own is not None:
            return own
        return OPENING_FULL if self._opening >= self.limits.max_opening else None

    def _own_bound(self, peer: str, tenant: str | None, per_peer: bool) -> Refusal | None:
        """The bound of whoever opens the socket: its tenant's, or an anonymous one's address and share."""
        limits = self.limits
        if not per_peer:
            return None  # a trusted peer: the total bound only
        if tenant is not None:
            over = limits.max_opening_per_tenant and self._by_tenant[tenant] >= limits.max_opening_per_tenant
            return TENANT_LIMIT if over else None
        if limits.max_opening_per_peer and self._by_peer[peer] >= limits.max_opening_per_peer:
            return PEER_LIMIT
        if limits.max_opening_anonymous is not None and self._anonymous >= limits.max_opening_anonymous:
            return ANONYMOUS_FULL
        return None

    def open(self, peer: str, *, tenant: str | None = None, per_peer: bool = True) -> Seat:
        """A socket from ``peer`` starts opening, counted as ``refusal_to_open`` judged it (ask it first)."""
        seat = Seat(peer, tenant, per_peer)
        self._opening += 1
        if seat.anonymous:
            self._anonymous += 1
            self._by_peer[peer] += 1
        elif tenant is not None and per_peer:
            self._by_tenant[tenant] += 1
        return seat

    def start(self, seat: Seat) -> bool:
        """``seat``'s session starts; ``False`` (and the seat is closed) when the server is at its session limit."""
        if seat.state != "opening":
            return seat.state == "session"
        self._leave_opening(seat)
        if self.full():
            seat.state = "closed"
            return False
        seat.state = "session"
        self._sessions += 1
        return True

    def speak(self, seat: Seat, speaking: bool) -> None:
        """The caller of ``seat``'s session started (``True``) or stopped speaking."""
        if seat.state != "session" or seat.speaking == speaking:
            return
        seat.speaking = speaking
        self._speaking += 1 if speaking else -1

    def close(self, seat: Seat) -> None:
        """The socket is gone (idempotent)."""
        if seat.state == "opening":
            self._leave_opening(seat)
        elif seat.state == "session":
            self.speak(seat, False)
            self._sessions -= 1
        seat.state = "closed"

    def _leave_opening(self, seat: Seat) -> None:
        self._opening -= 1
        if seat.anonymous:
            self._anonymous -= 1
            _leave(self._by_peer, seat.peer)
        elif seat.tenant is not None and seat.per_peer:
            _leave(self._by_tenant, seat.tenant)
        self.on_left_opening(seat)


def _leave(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


@dataclass(frozen=True, slots=True)
class Occupant:
    """What one connection tells the server about its seat: its session started, its caller speaks, it left.

    ``on_session(True)`` when the session starts, ``on_session(False)`` when a started one ends (the sessions
    gauge of ``/metrics``)."""

    occupancy: Occupancy
    seat: Seat
    on_session: Callable[[bool], None] = lambda _: None

    def started(self) -> bool:
        """The session starts; ``False``: the server is at its session limit (close 1013)."""
        if not self.occupancy.start(self.seat):
            return False
        self.on_session(True)
        return True

    def speaking(self, speaking: bool) -> None:
        self.occupancy.speak(self.seat, speaking)

    def left(self) -> None:
        """The socket is gone (idempotent)."""
        was_session = self.seat.state == "session"
        self.occupancy.close(self.seat)
        if was_session:
            self.on_session(False)
