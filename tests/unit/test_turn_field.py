"""The end of turn measured as the field does (bench/turns/field.py, eot-bench's method): a setting's decision at
one silence, the per-setting figures, the sweep, the four figures and the frontier, on silences small enough to
work out by hand; then properties on seeded random sets (the vectorised sweep agrees with the one-silence
decision, a higher threshold never cuts off more, the frontier is monotone and undominated)."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest

from bench.turns import field
from bench.turns.field import Figures, ScoredSilence, Setting, Silence


def scored(label: field.Label, duration_ms: float, *scores: float, step_ms: float = 100) -> ScoredSilence:
    """A silence scored every ``step_ms`` from 0 (``scores[i]`` at ``i * step_ms``)."""
    return ScoredSilence(Silence(label, duration_ms), tuple((i * step_ms, s) for i, s in enumerate(scores)))


# H1: crosses 0.5 at 100 ms, has fallen by 200; H2: never crosses; H3: too short to count (150 ms);
# E1: exactly 0.5 at 100 (not above), 0.8 at 200; E2: never crosses 0.5.
H1 = scored("hold", 400, 0.1, 0.6, 0.3, 0.2, 0.2)
H2 = scored("hold", 1200, *[0.2] * 13)
H3 = scored("hold", 150, 0.9, 0.9)
E1 = scored("end", 2000, 0.3, 0.5, 0.8, 0.9)
E2 = scored("end", 2000, *[0.4] * 21)
SET = [H1, H2, H3, E1, E2]


def test_a_setting_acts_at_the_first_crossing_not_before_its_delay_and_at_its_wait_at_the_latest() -> None:
    assert field.decision_ms(Setting(0.5, 200, 1000), H1) == 200  # crossed at 100: counts, though fallen by 200
    assert field.decision_ms(Setting(0.5, 200, 1000), H2) == 1000  # never crossed: the max wait
    assert field.decision_ms(Setting(0.5, 200, 1000), E1) == 200  # 0.5 at 100 is not above 0.5
    assert field.decision_ms(Setting(0.85, 200, 1000), E1) == 300
    assert field.decision_ms(Setting(0.5, 500, 1000), H1) == 500
    assert field.decision_ms(Setting(math.inf, 300, 300), E1) == 300  # silence alone: the wait, whatever the score


def test_evidence_after_the_silence_ended_does_not_count_for_it() -> None:
    late = ScoredSilence(Silence("hold", 300), ((0, 0.1), (400, 0.99)))
    assert field.decision_ms(Setting(0.5, 200, 1000), late) == 1000
    # an end silence recorded 800 ms long whose score would cross at 900: the max wait (eot-bench's rule)
    short_end = ScoredSilence(Silence("end", 800), ((0, 0.1), (900, 0.99)))
    assert field.figures(Setting(0.5, 200, 1000), [H1, short_end]).mean_latency_ms == 1000


def test_the_figures_of_one_setting_by_hand() -> None:
    f = field.figures(Setting(0.5, 200, 1000), SET)
    # H1 cut off at 200 (400 > 200), H2 by the wait (1200 > 1000), H3 not counted; E1 at 200, E2 at the wait
    assert (f.holds, f.cut_offs, f.cut_off_rate) == (2, 2, 1.0)
    assert (f.ends, f.decided, f.timeout_rate) == (2, 1, 0.5)
    assert (f.mean_latency_ms, f.p50_latency_ms) == (600, 600)
    assert f.p95_latency_ms == pytest.approx(960)  # 200 + 0.95 * 800
    g = field.figures(Setting(0.7, 200, 1500), SET)  # H1 never above 0.7; H2 shorter than the wait
    assert (g.cut_offs, g.mean_latency_ms, g.decided) == (0, 850, 1)


def test_a_hold_shorter_than_the_min_delay_or_ending_as_the_setting_acts_is_not_cut_off() -> None:
    assert field.figures(Setting(0.5, 500, 1000), SET).cut_offs == 1  # H1 (400 ms) outlived by the delay: only H2
    exact = scored("hold", 500, 0.9)
    assert field.figures(Setting(0.5, 500, 1000), [exact, E1]).cut_offs == 0  # speech again just as it acts


def test_an_end_never_decided_before_the_wait_costs_the_wait() -> None:
    slow = scored("end", 4000, *[0.1] * 15, 0.9)  # crosses at 1500
    f = field.figures(Setting(0.5, 200, 1000), [H1, slow])
    assert (f.mean_latency_ms, f.decided, f.timeout_rate) == (1000, 0, 1.0)
    assert field.figures(Setting(0.5, 200, 1500), [H1, slow]).decided == 1


def test_an_endpoint_event_is_a_score_of_0_before_it_and_1_after() -> None:
    silence = Silence("end", 2000)
    assert field.decision_ms(Setting(0.5, 200, 1000), ScoredSilence.fired_at(silence, 250)) == 250
    assert field.decision_ms(Setting(0.5, 300, 1000), ScoredSilence.fired_at(silence, 250)) == 300
    assert field.decision_ms(Setting(0.5, 200, 1000), ScoredSilence.fired_at(silence, None)) == 1000


def test_the_sweep_covers_the_grid_and_skips_a_wait_below_the_delay() -> None:
    swept = field.sweep(SET, thresholds=[0.5, 0.7], min_delays_ms=[200, 500, 1200], max_waits_ms=[1000, 1500])
    assert len(swept) == 2 * (2 + 2 + 1)
    for f in swept:
        assert f == field.figures(f.setting, SET)
    assert len(field.sweep(SET)) == 101 * 9 * 6  # eot-bench's default grid: every wait is above every delay


def test_the_sweep_and_the_figures_refuse_what_eot_bench_refuses() -> None:
    with pytest.raises(ValueError, match=r"at least the shortest counted hold \(200.0 ms\): \[100\]"):
        field.sweep(SET, min_delays_ms=[100, 200])
    with pytest.raises(ValueError, match="need hold and end silences: got 0 holds, 2 ends"):
        field.figures(Setting(0.5, 200, 1000), [H3, E1, E2])  # H3 is too short to count
    with pytest.raises(ValueError, match="min delay <= max wait"):
        Setting(0.5, 1000, 500)
    with pytest.raises(ValueError, match="'hold' or an 'end'"):
        Silence("pause", 300)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="time order"):
        ScoredSilence(Silence("hold", 300), ((100, 0.5), (0, 0.5)))


def point(latency_ms: float, cut_offs: int, threshold: float = 0.5, delay: float = 200, wait: float = 1000) -> Figures:
    return Figures(Setting(threshold, delay, wait), 100, cut_offs, 10, 10, latency_ms, latency_ms, latency_ms)


A, B, C = point(250, 20), point(300, 10), point(300, 10, threshold=0.6)
D, E, F = point(550, 4), point(900, 4), point(1200, 0)
SWEPT = [A, B, C, D, E, F]


def test_the_four_figures_pick_the_best_under_each_budget_and_break_ties_toward_the_higher_threshold() -> None:
    four = field.four_figures(SWEPT)
    assert (four.at_300ms, four.at_600ms, four.at_5pct, four.at_10pct) == (C, D, D, C)
    assert four.values() == (0.10, 0.04, 550, 300)
    assert field.best_under_latency(SWEPT, 200) is None
    assert field.best_under_cut_offs([A], 0.10) is None
    assert field.four_figures([A]).values() == (0.20, 0.20, None, None)
    # a tie on the figure goes to the lower other figure before the threshold
    assert field.best_under_cut_offs([point(400, 5, threshold=0.9), point(400, 3)], 0.05) == point(400, 3)


def test_the_frontier_keeps_each_point_that_lowers_the_cut_offs() -> None:
    assert field.frontier(SWEPT) == [A, C, D, F]
    assert field.frontier([]) == []


def test_silence_alone_by_hand_on_eot_bench_s_fine_grid() -> None:
    silences = [Silence("hold", ms) for ms in (250, 400, 800, 1200, 150, 6000)] + [Silence("end", 500)] * 2
    alone = field.silence_alone(silences)  # 150 ms and 6 s holds are not counted
    assert [f.setting.max_wait_ms for f in alone] == list(field.SILENCE_WAITS_MS)
    assert all(f.mean_latency_ms == f.setting.max_wait_ms and f.holds == 4 for f in alone)
    assert field.four_figures(alone).values() == (0.75, 0.5, 1200, 1200)
    assert [(f.setting.max_wait_ms, f.cut_off_rate) for f in field.frontier(alone)] == [
        (200, 1.0),
        (250, 0.75),
        (400, 0.5),
        (800, 0.25),
        (1200, 0.0),
    ]


def random_set(seed: int, turns: int = 40) -> list[ScoredSilence]:
    """Turns of 0-4 holds and an end; each silence scored every 100 ms by a noisy walk (ends drift up)."""
    rng = np.random.default_rng(seed)
    out: list[ScoredSilence] = []
    for _ in range(turns):
        labels: list[field.Label] = ["hold"] * int(rng.integers(0, 5))
        for label in [*labels, "end"]:
            duration = float(rng.uniform(100, 5500) if label == "hold" else rng.uniform(300, 4000))
            drift = 0.08 if label == "end" else 0.0
            walk = np.clip(rng.uniform(0, 0.7) + np.cumsum(rng.normal(drift, 0.1, int(duration // 100) + 1)), 0, 1)
            out.append(scored(label, duration, *map(float, walk)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_the_sweep_agrees_with_the_decision_at_each_silence(seed: int) -> None:
    data = random_set(seed)
    kept = field.counted(data)
    holds = [s for s in kept if s.silence.label == "hold"]
    ends = [s for s in kept if s.silence.label == "end"]
    for f in field.sweep(data, thresholds=[0.0, 0.3, 0.77, 1.0], max_waits_ms=[1000, 2500]):
        cut = sum(s.silence.duration_ms > field.decision_ms(f.setting, s) + field.EPS_MS for s in holds)
        latencies = [field.decision_ms(f.setting, s) for s in ends]
        assert (f.cut_offs, f.holds, f.ends) == (cut, len(holds), len(ends))
        assert f.mean_latency_ms == pytest.approx(float(np.mean(latencies)))
        assert f.p95_latency_ms == pytest.approx(float(np.percentile(latencies, 95)))


@pytest.mark.parametrize("seed", range(4))
def test_a_higher_threshold_never_cuts_off_more_nor_answers_sooner(seed: int) -> None:
    swept = field.sweep(random_set(seed), thresholds=[i / 20 for i in range(21)])
    by_knobs: dict[tuple[float, float], list[Figures]] = {}
    for f in swept:
        by_knobs.setdefault((f.setting.min_delay_ms, f.setting.max_wait_ms), []).append(f)
    for row in by_knobs.values():
        row.sort(key=lambda f: f.setting.threshold)
        assert all(a.cut_offs >= b.cut_offs for a, b in pairwise(row))
        assert all(a.mean_latency_ms <= b.mean_latency_ms + 1e-9 for a, b in pairwise(row))


@pytest.mark.parametrize("seed", range(4))
def test_the_frontier_is_monotone_and_no_setting_beats_it(seed: int) -> None:
    swept = field.sweep(random_set(seed), thresholds=[i / 20 for i in range(21)])
    front = field.frontier(swept)
    pairs = list(pairwise(front))
    assert all(a.mean_latency_ms <= b.mean_latency_ms and a.cut_off_rate > b.cut_off_rate for a, b in pairs)
    for f in swept:
        assert any(
            p.mean_latency_ms <= f.mean_latency_ms and p.cut_off_rate <= f.cut_off_rate + field.EPS_RATE for p in front
        )
    four = field.four_figures(swept)
    for budget_point in (four.at_300ms, four.at_600ms, four.at_5pct, four.at_10pct):
        assert budget_point is None or budget_point in front  # an operating point lies on the frontier
