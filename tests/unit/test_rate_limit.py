"""The input rate limiter, on an injected clock."""

from __future__ import annotations

import pytest

from agent.core.events import CommitInput
from agent.runtime.call.rate_limit import InputRateLimiter, Verdict, carried_audio_ms


def feed(limiter: InputRateLimiter, speed: float, seconds: float, frame_ms: float = 20.0) -> list[Verdict]:
    """Frames of ``frame_ms`` sent at ``speed`` × real time for ``seconds`` of audio, from t = 100 s."""
    out = []
    t = 100.0
    for _ in range(int(seconds * 1000 / frame_ms)):
        out.append(limiter.admit(frame_ms, t))
        t += frame_ms / 1000 / speed
    return out


def test_real_time_audio_is_always_admitted() -> None:
    assert set(feed(InputRateLimiter(), 1.0, 600)) == {Verdict.ADMIT}


def test_slightly_fast_audio_is_admitted() -> None:
    assert set(feed(InputRateLimiter(), 1.4, 120)) == {Verdict.ADMIT}


def test_a_burst_up_to_the_bucket_passes() -> None:
    limiter = InputRateLimiter(max_rate=1.5, window_s=5)
    assert set(feed(limiter, 1000.0, 7.4)) == {Verdict.ADMIT}  # 7.4 s of audio at once


def test_ten_times_real_time_is_limited_once_then_closed_if_it_persists() -> None:
    verdicts = feed(InputRateLimiter(max_rate=1.5, window_s=5), 10.0, 30)
    first_refusal = verdicts.index(Verdict.WARN)
    assert set(verdicts[:first_refusal]) == {Verdict.ADMIT}
    assert 7.5 <= first_refusal * 0.02 <= 9.5  # the bucket (7.5 s) plus what refilled meanwhile
    assert Verdict.CLOSE in verdicts
    closing = verdicts.index(Verdict.CLOSE)
    assert verdicts[first_refusal:closing].count(Verdict.WARN) <= 2  # at most once per 5 s window
    assert Verdict.DROP in verdicts[first_refusal:closing]


def test_a_client_that_slows_down_is_admitted_again_and_warned_again_later() -> None:
    limiter = InputRateLimiter(max_rate=1.5, window_s=5)
    verdicts = feed(limiter, 10.0, 9)
    assert Verdict.WARN in verdicts and Verdict.CLOSE not in verdicts
    t = 200.0  # 100 s later: the bucket is full again
    assert limiter.admit(20, t) is Verdict.ADMIT
    assert limiter.dropped_ms == 0.0


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        InputRateLimiter(max_rate=0)


def test_every_message_that_carries_audio_is_counted_at_the_rate_of_the_moment() -> None:
    assert carried_audio_ms(bytes(3200), 16000) == 100.0
    assert carried_audio_ms(bytes(3200), 8000) == 200.0  # after a switch to G.711: 8 kHz samples
    assert carried_audio_ms(CommitInput(bytes(32000)), 24000) == 1000.0  # an item: 16 kHz whatever the wire
    assert carried_audio_ms(CommitInput(None), 16000) is None
    assert carried_audio_ms("text", 16000) is None
