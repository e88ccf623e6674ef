"""Who holds the server: sockets opening (bounded per peer, per tenant, to an anonymous share and in total, never
load), sessions, speakers (pure)."""

from __future__ import annotations

from agent.runtime.server.occupancy import (
    ANONYMOUS_FULL,
    OPENING_FULL,
    PEER_LIMIT,
    TENANT_LIMIT,
    Limits,
    Occupancy,
    Occupant,
)


def occupancy(max_sessions: int = 4, max_opening: int = 6, per_peer: int = 3) -> Occupancy:
    return Occupancy(Limits(max_sessions, max_opening, per_peer))


def test_sockets_opening_are_bounded_per_peer_and_count_no_session_and_no_work() -> None:
    occ = occupancy()
    seats = [occ.open("10.0.0.1") for _ in range(3)]
    assert occ.refusal_to_open("10.0.0.1") is PEER_LIMIT and PEER_LIMIT.status == 429
    assert occ.refusal_to_open("10.0.0.2") is None  # another address is not touched
    assert (occ.opening, occ.sessions, occ.speaking) == (3, 0, 0)
    occ.close(seats[0])
    assert occ.refusal_to_open("10.0.0.1") is None


def test_sockets_opening_are_bounded_in_total() -> None:
    occ = occupancy(max_opening=4, per_peer=0)  # 0: no bound per peer
    for _ in range(4):
        occ.open("10.0.0.1")
    assert occ.refusal_to_open("10.0.0.9") is OPENING_FULL and OPENING_FULL.status == 503


def test_a_session_that_starts_leaves_the_opening_count_and_is_refused_beyond_the_limit() -> None:
    occ = occupancy(max_sessions=2)
    seats = [occ.open("10.0.0.1") for _ in range(3)]
    assert occ.start(seats[0]) and occ.start(seats[1])
    assert occ.full() and not occ.start(seats[2])  # opened together, only two sessions start
    assert (occ.opening, occ.sessions) == (0, 2)
    assert seats[2].state == "closed"
    occ.close(seats[2])  # idempotent: the handler and a finalizer may both close
    occ.close(seats[0])
    occ.close(seats[0])
    assert (occ.opening, occ.sessions) == (0, 1)


def test_only_sessions_whose_caller_is_speaking_are_counted_as_work_to_come() -> None:
    occ = occupancy()
    opening, session = occ.open("a"), occ.open("b")
    occ.start(session)
    occ.speak(opening, True)  # not started: never load
    occ.speak(session, True)
    occ.speak(session, True)
    assert occ.speaking == 1
    occ.speak(session, False)
    assert occ.speaking == 0
    occ.speak(session, True)
    occ.close(session)  # a caller who leaves mid-utterance speaks no more
    assert (occ.speaking, occ.sessions) == (0, 0)


def test_an_occupant_reports_its_session_to_the_metrics_once() -> None:
    occ = occupancy(max_sessions=1)
    seen: list[bool] = []
    first, second = Occupant(occ, occ.open("a"), seen.append), Occupant(occ, occ.open("a"), seen.append)
    assert first.started() and not second.started()
    first.speaking(True)
    assert occ.speaking == 1
    first.left()
    first.left()
    second.left()
    assert seen == [True, False] and (occ.sessions, occ.speaking, occ.opening) == (0, 0, 0)


def test_a_trusted_peer_is_held_to_the_total_bound_only() -> None:
    occ = occupancy(max_opening=5, per_peer=2)
    for _ in range(2):
        occ.open("10.0.0.1")
    assert occ.refusal_to_open("10.0.0.1") is PEER_LIMIT
    assert occ.refusal_to_open("10.0.0.1", per_peer=False) is None
    for _ in range(3):
        occ.open("10.0.0.1")
    assert occ.refusal_to_open("10.0.0.1", per_peer=False) is OPENING_FULL


def test_a_credentialed_socket_is_bounded_per_tenant_never_by_its_address() -> None:
    occ = Occupancy(Limits(max_sessions=4, max_opening=8, max_opening_per_peer=2, max_opening_per_tenant=2))
    for _ in range(2):
        occ.open("10.0.0.1")  # anonymous sockets fill the address's bound
    assert occ.refusal_to_open("10.0.0.1") is PEER_LIMIT
    assert occ.refusal_to_open("10.0.0.1", tenant="acme") is None  # a caller with a token from that address
    acme = [occ.open("10.0.0.1", tenant="acme") for _ in range(2)]
    assert occ.refusal_to_open("10.0.0.9", tenant="acme") is TENANT_LIMIT and TENANT_LIMIT.status == 429
    assert occ.refusal_to_open("10.0.0.1", tenant="beta") is None  # another tenant is not touched
    assert (occ.opening, occ.anonymous) == (4, 2)
    assert occ.refusal_to_open("10.0.0.1") is PEER_LIMIT  # and the tenant's sockets never count against the address
    occ.start(acme[0])
    occ.close(acme[1])
    assert occ.refusal_to_open("10.0.0.9", tenant="acme") is None
    assert (occ.opening, occ.anonymous, occ.sessions) == (2, 2, 1)


def test_anonymous_sockets_take_only_their_share_of_the_total() -> None:
    occ = Occupancy(Limits(4, max_opening=6, max_opening_per_peer=0, max_opening_per_tenant=0, max_opening_anonymous=4))
    anonymous = [occ.open(f"10.0.0.{i}") for i in range(4)]
    assert occ.refusal_to_open("10.0.1.1") is ANONYMOUS_FULL and ANONYMOUS_FULL.status == 503
    assert ANONYMOUS_FULL.reason == OPENING_FULL.reason == "opening_full"
    assert occ.refusal_to_open("10.0.1.1", tenant="acme") is None  # the rest is kept for credentialed upgrades
    occ.open("10.0.1.1", tenant="acme")
    occ.open("10.0.1.1", per_peer=False)  # a trusted peer (a phone provider) may use it too
    assert occ.refusal_to_open("10.0.1.1", tenant="beta") is OPENING_FULL  # the total bounds everyone
    occ.close(anonymous[0])
    assert occ.refusal_to_open("10.0.1.1") is None and occ.anonymous == 3


def test_a_trusted_peer_is_neither_bounded_per_tenant_nor_counted_as_anonymous() -> None:
    occ = Occupancy(Limits(4, max_opening=4, max_opening_per_peer=1, max_opening_per_tenant=1, max_opening_anonymous=1))
    for _ in range(3):
        assert occ.refusal_to_open("10.0.0.1", tenant="default", per_peer=False) is None
        occ.open("10.0.0.1", tenant="default", per_peer=False)
    assert (occ.opening, occ.anonymous) == (3, 0)
    assert occ.refusal_to_open("10.0.0.1") is None and occ.refusal_to_open("10.0.0.2", tenant="default") is None
