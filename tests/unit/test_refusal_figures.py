"""What a refused upgrade's log line says behind its reason (``ServerState.figures``), and how a socket's seat is
given back when no handler claims it (``ServerState.claim`` / ``release``): pure bookkeeping, no loop, no socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agent.config import ServerSettings
from agent.runtime.server.occupancy import Limits
from agent.runtime.server.state import ServerState


class Socket:
    """A socket the seats only key (weakly): none of its methods is ever called here."""

    async def recv(self) -> str | bytes:
        raise ConnectionError("never called")

    async def send(self, message: str | bytes, /) -> None:
        raise ConnectionError("never called")

    async def close(self, code: int = 1000, reason: str = "") -> None:
        raise ConnectionError("never called")

    def __aiter__(self) -> AsyncIterator[str | bytes]:
        raise ConnectionError("never called")

    @property
    def transport(self) -> asyncio.WriteTransport:
        raise ConnectionError("never called")


def state(**limits: int) -> ServerState:
    bounds = {"max_sessions": 4, "max_opening": 6, "max_opening_per_peer": 2} | limits
    return ServerState(Limits(**bounds, max_opening_per_tenant=3, max_opening_anonymous=5))


def test_the_figures_give_each_count_with_its_bound() -> None:
    held = state()
    sockets = [Socket() for _ in range(3)]
    held.seat(sockets[0], "10.0.0.1")
    held.seat(sockets[1], "10.0.0.1")
    held.seat(sockets[2], "10.0.0.2", tenant="acme")
    figures = held.figures(ServerSettings(admission_wait_ms=500), "10.0.0.1", "acme")
    assert figures == (
        "sessions=0/4 opening=3/6 anonymous=2/5 peer=2/2 tenant=1/3 speaking=0 first_audio_wait_ms=0/500 models=loading"
    )
    held.load_error = "RuntimeError: no model"
    unbounded = state(max_opening_per_peer=0).figures(ServerSettings(admission_wait_ms=0), "10.0.0.9")
    assert "peer=0/-" in unbounded and "first_audio_wait_ms=0/-" in unbounded and "tenant=" not in unbounded
    assert held.figures(ServerSettings(), "10.0.0.9").endswith("models=failed")


def test_a_seat_no_handler_claimed_is_given_back_at_once_and_a_claimed_one_is_not() -> None:
    held = state()
    refused, handled = Socket(), Socket()
    held.seat(refused, "10.0.0.1")
    seat = held.seat(handled, "10.0.0.1")
    assert held.occupancy.opening == 2 and held.occupancy.opening_from("10.0.0.1") == 2
    held.release(refused)  # refused below the routes, or its peer gone before the answer
    assert held.occupancy.opening == 1 and held.occupancy.opening_from("10.0.0.1") == 1
    assert held.claim(handled) is seat
    held.release(handled)  # the connection is lost later: its handler gives the seat back, not this
    held.release(refused)  # twice: nothing more
    assert held.occupancy.opening == 1 and seat.state == "opening"
    assert held.claim(refused) is None
