"""Admission before the upgrade, and the share of a drain left to the reply in progress (pure)."""

from __future__ import annotations

from typing import Any

from agent.runtime.server.admission import DRAINING, FAILED, FULL, LOADING, busy, refusal
from agent.runtime.server.drain import GOODBYE_S, finish_within


def test_a_loaded_server_with_room_takes_the_call() -> None:
    assert refusal(loaded=True, failed=False, draining=False, sessions=3, max_sessions=4) is None


def test_full_loading_failed_and_draining_are_refused_with_their_reason() -> None:
    assert refusal(loaded=True, failed=False, draining=False, sessions=4, max_sessions=4) is FULL
    assert refusal(loaded=False, failed=False, draining=False, sessions=0, max_sessions=4) is LOADING
    assert refusal(loaded=False, failed=True, draining=False, sessions=0, max_sessions=4) is FAILED
    assert refusal(loaded=True, failed=False, draining=True, sessions=0, max_sessions=4) is DRAINING


def test_draining_wins_over_every_other_reason() -> None:
    assert refusal(loaded=False, failed=True, draining=True, sessions=9, max_sessions=4) is DRAINING


def test_a_server_whose_first_audio_would_wait_too_long_is_busy() -> None:
    room: dict[str, Any] = {"loaded": True, "failed": False, "draining": False, "sessions": 1, "max_sessions": 4}
    assert refusal(**room, first_audio_wait_s=0.5, max_wait_s=0.8) is None
    refused = refusal(**room, first_audio_wait_s=2.4, max_wait_s=0.8)
    assert refused is not None and refused.reason == "busy" and refused.retry_after_s == 3
    assert refusal(**room, first_audio_wait_s=99.0, max_wait_s=0.0) is None  # 0: no load-aware limit
    full = {**room, "sessions": 4}
    assert refusal(**full, first_audio_wait_s=99.0, max_wait_s=0.8) is FULL


def test_every_refusal_says_when_to_retry() -> None:
    assert busy(0.01).retry_after_s == 1 and busy(1e6).retry_after_s == 30
    for refused in (FULL, LOADING, FAILED, DRAINING, busy(2.0)):
        assert refused.retry_after_s >= 1 and refused.message and refused.reason


def test_the_goodbye_keeps_the_end_of_a_drain_but_never_more_than_half() -> None:
    assert finish_within(30.0) == 30.0 - GOODBYE_S
    assert finish_within(4.0) == 2.0
    assert finish_within(0.0) == 0.0
