"""Who holds the server: sockets opening (bounded per peer and in total, never load), sessions, speakers (pure)."""

from __future__ import annotations

from agent.runtime.server.occupancy import OPENING_FULL, PEER_LIMIT, Limits, Occupancy, Occupant


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
