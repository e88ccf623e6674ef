"""How a simulated phone call ended (``clients.phone_caller.Ending``): a hang-up, or a call the server dropped."""

from __future__ import annotations

from clients.phone_caller import Ending


def test_a_stop_message_ends_cleanly_only_when_the_server_closes_first_with_session_ended() -> None:
    assert Ending(1000, "session ended", server_first=True, stop_message=True).clean
    assert not Ending(1011, "internal error", server_first=True, stop_message=True).clean
    assert not Ending(1000, "stream stopped", server_first=True, stop_message=True).clean
    assert not Ending(1000, "session ended", server_first=False, stop_message=True).clean  # the stop was ignored


def test_without_a_stop_message_the_caller_closes_and_the_server_answers_1000() -> None:
    assert Ending(1000, "", server_first=False, stop_message=False).clean
    assert not Ending(1000, "session ended", server_first=True, stop_message=False).clean  # it hung up on us
    assert not Ending(1011, "", server_first=False, stop_message=False).clean


def test_a_cut_connection_is_never_clean_and_says_so() -> None:
    cut = Ending(None, "", server_first=None, stop_message=True)
    assert not cut.clean
    assert str(cut) == "the connection was cut, not closed"
    assert str(Ending(1000, "session ended", True, True)) == "closed by the server 1000 'session ended'"
    assert str(Ending(1000, "", False, False)) == "closed by the caller, answered by the server with 1000"
