"""Who holds the server now: sockets still opening, sessions, and the calls that are speaking (pure).

A socket passes through three states, each with its own bound, and only one of them is load:

- **opening** (from the upgrade until its session starts: ``session.start``, a phone gateway's start, the
  AudioSocket UUID): it has not spoken and may not even be authenticated, so it is never counted as work.
  It is bounded on its own, per peer (``max_opening_per_peer``, refused with 429; not for a trusted peer
  that carries many callers: a PBX, a phone provider whose credential checked out) and in total
  (``max_opening``, 503), and the start deadline (``server.start_timeout_s``) ends it. A few idle or
  unauthenticated sockets therefore cost nothing to the callers who start sessions.
- **session**: bounded by ``max_sessions`` (a memory bound, checked at the upgrade and again when the session
  starts: sockets that were all opening at once cannot start more sessions than that).
- **speaking**: a session whose caller is in the middle of an utterance. Its turn's work (a transcript and a
  first sentence) is about to be queued, so admission counts it ahead of a new caller's
  (``agent.work.scheduling``); a session that only listens, or says nothing at all, costs no forecast.

Peers are keyed as ``agent.runtime.server.forwarded.peer_key`` names them.
``Seat`` is one socket's place; ``Occupancy.close`` is idempotent, so a seat may be closed both by the
handler and by a finalizer (a handshake that failed after the upgrade check never reaches the handler).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from agent.runtime.server.admission import Refusal

State = Literal["opening", "session", "closed"]

PEER_LIMIT = Refusal("peer_limit", "too many connections from this address are still opening", 5, status=429)
OPENING_FULL = Refusal("opening_full", "too many connections are still opening", 2)


@dataclass(slots=True, eq=False)
class Seat:
    """One socket's place: ``opening`` until its session starts, then ``session``, then ``closed``."""

    peer: str
    state: State = "opening"
    speaking: bool = False


@dataclass(frozen=True, slots=True)
class Limits:
    max_sessions: int
    max_opening: int
    max_opening_per_peer: int
    """0: no bound per peer (every caller comes through one proxy address)."""


@dataclass(slots=True)
class Occupancy:
    limits: Limits
    _opening: Counter[str] = field(default_factory=Counter)
    _sessions: int = 0
    _speaking: int = 0

    @property
    def opening(self) -> int:
        """Sockets whose session has not started."""
        return sum(self._opening.values())

    @property
    def sessions(self) -> int:
        return self._sessions

    @property
    def speaking(self) -> int:
        """Sessions whose caller is in the middle of an utterance (admission's forecast of work to come)."""
        return self._speaking

    def full(self) -> bool:
        return self._sessions >= self.limits.max_sessions

    def refusal_to_open(self, peer: str, *, per_peer: bool = True) -> Refusal | None:
        """Why a new socket from ``peer`` (a ``peer_key``) may not start opening now, or ``None``. Without
        ``per_peer`` only the total bound applies (a trusted peer that carries many callers: a PBX)."""
        limits = self.limits
        if per_peer and limits.max_opening_per_peer and self._opening[peer] >= limits.max_opening_per_peer:
            return PEER_LIMIT
        if self.opening >= limits.max_opening:
            return OPENING_FULL
        return None

    def open(self, peer: str) -> Seat:
        """A socket from ``peer`` starts opening (ask ``refusal_to_open`` first)."""
        self._opening[peer] += 1
        return Seat(peer)

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
        self._opening[seat.peer] -= 1
        if self._opening[seat.peer] <= 0:
            del self._opening[seat.peer]


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
