"""bench/load.py's arrivals and its measure of the turn models' compute, with numbers given: no server, no
clock."""

from __future__ import annotations

import itertools

import pytest

from bench.load_callers import Level, arrivals
from bench.load_compute import Sample, turn_cpu_s, window_rates


def test_callers_arrive_every_stagger_or_at_random_within_the_window_the_same_for_a_seed() -> None:
    assert arrivals(3, 1500) == [0.0, 1.5, 3.0]
    drawn = arrivals(10, 1500, within_ms=15_000, seed=1)
    assert drawn == sorted(drawn) and all(0.0 <= a <= 15.0 for a in drawn) and len(drawn) == 10
    assert drawn == arrivals(10, 20, within_ms=15_000, seed=1)  # the stagger no longer counts
    assert drawn != arrivals(10, 1500, within_ms=15_000, seed=2)
    assert len({round(b - a, 3) for a, b in itertools.pairwise(drawn)}) > 1  # not evenly spaced


def test_only_the_turn_models_count() -> None:
    assert turn_cpu_s({"smart_turn": 0.5, "text_turn": 0.25, "asr": 9.0, "tts": 9.0}) == pytest.approx(0.75)
    assert turn_cpu_s({"asr": 1.0}) == 0.0


def test_each_seconds_compute_is_put_over_the_audio_its_callers_sent() -> None:
    samples = [
        Sample(0.0, 0.0, 0),
        Sample(1.0, 0.0, 0),  # nobody in a call: no window
        Sample(2.0, 0.010, 2),  # 1 caller on average over 1 s: 10 ms over 1000 ms of audio -> 1 ms per 100 ms
        Sample(3.0, 0.090, 2),  # 2 callers: 80 ms over 2000 ms -> 4 ms per 100 ms
    ]
    assert window_rates(samples) == pytest.approx([1.0, 4.0])
    assert window_rates(samples[:1]) == []


def test_a_levels_compute_has_its_p95_over_seconds_and_its_mean_over_all_the_audio() -> None:
    level = Level(callers=2, audio_s=3.0)
    level.compute = [Sample(0.0, 1.0, 0), Sample(1.0, 1.01, 2), Sample(2.0, 1.09, 2)]
    figures = level.turn_compute()
    assert figures["n"] == 2 and figures["max"] == pytest.approx(4.0) and figures["budget_p95"] == 20.0
    assert figures["mean"] == pytest.approx(1000 * 0.09 / (3.0 * 10), abs=0.01)  # 90 ms over 3 s of audio
    assert Level(callers=1).summary()["turn_model_compute_ms_per_100ms"] is None
