"""The end of turn measured as the field measures it (LiveKit's eot-bench, Apache-2.0), pure: changes only with
that method (how a setting decides at one silence, what the sweep counts, how the four figures and frontier are
picked).

**Confirmed** in eot-bench's harness (``eot_harness/metrics.py``, ``comparison.py``, ``io.py``, README; read in the
stored fork ``LaurentMazare/eot-bench`` at 39ab20e, cross-checked against livekit/eot-bench's README and committed
``output/.../en`` artifacts: the grids in ``summary.json``, the operating points in ``report.md``):

- A turn's silences of 100 ms or more are labelled: the last ``end`` (eot-bench: ``eot``), the others ``hold``.
  A system scores each silence causally, every 100 ms into it and at its end (the audio so far, and words that
  ended 0.5 s before); one that only fires an endpoint event scores 0 before it and 1 after.
- A setting is (``threshold``, ``min_delay_ms``: eot-bench's action delay, ``max_wait_ms``: its timeout). In a
  silence it acts at ``min(max(min_delay, c), max_wait)``, ``c`` the first time in the silence at which the score
  is strictly above the threshold (never: infinity); a crossing before the minimum delay counts even if the score
  has fallen by then. Evidence after the silence ended does not count for it.
- A ``hold`` is a *false cut-off* when it lasts strictly longer than that decision time; the rate is over hold
  silences (not turns) of 200 ms to 5 s. *Latency*, at ``end`` silences: the decision time (the max wait where
  the score did not decide before it, within the recorded silence); the figure is the **mean** over all ends.
- The sweep: thresholds 0.00-1.00 by 0.01, minimum delays 200-1000 ms by 100, max waits 1000-3500 ms by 500 (a
  wait below the delay skipped; no delay or wait below the shortest counted hold).
- The four figures: the least cut-off rate among settings with a mean latency of at most 300 / 600 ms, the least
  mean latency among those with at most 5 % / 10 % cut-offs (none: eot-bench prints "–"); ties go to the lower
  other figure, the higher threshold, the lower delay, the lower wait. The frontier: settings by mean latency
  (ties as before), each kept when its cut-off rate is below every one kept before it.
- Silence alone (eot-bench's "VAD baseline") acts at a fixed wait: every end at that latency, a hold cut off when
  longer; its table row uses waits of 200 ms-5 s by 10 ms. Here: the setting that never trusts the score
  (threshold infinity: it acts at its max wait).

Ours, not eot-bench's: times in ms; p50 / p95 latency beside the mean (for our own targets; the field's figure is
the mean). Building the silences and scores (sets, models, an end silence padded past the longest wait) is not here.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Label = Literal["hold", "end"]
EPS_MS = 1e-6  # times are floats in ms: "strictly longer" must not flip on rounding
EPS_RATE = 1e-9
THRESHOLDS = tuple(i / 100 for i in range(101))
MIN_DELAYS_MS = tuple(float(ms) for ms in range(200, 1001, 100))
MAX_WAITS_MS = tuple(float(ms) for ms in range(1000, 3501, 500))
SILENCE_WAITS_MS = tuple(float(ms) for ms in range(200, 5001, 10))
MIN_HOLD_MS = 200.0
MAX_HOLD_MS = 5000.0
LATENCY_BUDGETS_MS = (300.0, 600.0)
CUT_OFF_BUDGETS = (0.05, 0.10)


@dataclass(frozen=True, slots=True)
class Silence:
    """One labelled silence of a turn (at least 100 ms: the set builder drops shorter ones)."""

    label: Label
    duration_ms: float
    turn: str = ""

    def __post_init__(self) -> None:
        if self.label not in ("hold", "end") or not self.duration_ms >= 0:
            raise ValueError(f"a silence is a 'hold' or an 'end' of 0 ms or more: {self!r}")


@dataclass(frozen=True, slots=True)
class ScoredSilence:
    """A silence as one system scored it: ``scores`` are (ms into the silence, the score of "end") as evidence
    arrived, in time order. No score yet counts as no crossing."""

    silence: Silence
    scores: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        last = -math.inf
        for at, score in self.scores:
            if not at >= last or math.isnan(score):
                raise ValueError(f"scores come in time order, each a number: {self.scores!r}")
            last = at

    @classmethod
    def fired_at(cls, silence: Silence, at_ms: float | None) -> ScoredSilence:
        """A system that only decides (an endpoint event, our own live decision): 0 before ``at_ms``, 1 from it;
        ``None``: it never decided within the silence."""
        return cls(silence, () if at_ms is None else ((at_ms, 1.0),))


@dataclass(frozen=True, slots=True)
class Setting:
    """One point of the policy sweep: act when the score is above ``threshold``, not before ``min_delay_ms`` into
    the silence, and at ``max_wait_ms`` whatever the score."""

    threshold: float
    min_delay_ms: float
    max_wait_ms: float

    def __post_init__(self) -> None:
        if math.isnan(self.threshold) or not 0 <= self.min_delay_ms <= self.max_wait_ms:
            raise ValueError(f"a setting needs a threshold and 0 <= min delay <= max wait: {self!r}")


@dataclass(frozen=True, slots=True)
class Figures:
    """What one setting does on a set: cut-offs over the counted holds, latency over every end silence."""

    setting: Setting
    holds: int
    cut_offs: int
    ends: int
    decided: int  # end silences the score decided before the max wait (eot-bench's detect rate)
    mean_latency_ms: float
    p50_latency_ms: float
    p95_latency_ms: float

    @property
    def cut_off_rate(self) -> float:
        return self.cut_offs / self.holds

    @property
    def timeout_rate(self) -> float:
        return 1 - self.decided / self.ends


@dataclass(frozen=True, slots=True)
class FourFigures:
    """eot-bench's four figures, each the best setting under one budget (``None``: no setting meets it)."""

    at_300ms: Figures | None  # least cut-off rate, mean latency <= 300 ms
    at_600ms: Figures | None
    at_5pct: Figures | None  # least mean latency, cut-off rate <= 5 %
    at_10pct: Figures | None

    def values(self) -> tuple[float | None, ...]:
        """(cut-off rate at 300 ms, at 600 ms, mean latency ms at 5 %, at 10 %); ``None`` where none qualifies."""
        rates = [None if f is None else f.cut_off_rate for f in (self.at_300ms, self.at_600ms)]
        return (*rates, *(None if f is None else f.mean_latency_ms for f in (self.at_5pct, self.at_10pct)))


def decision_ms(setting: Setting, scored: ScoredSilence) -> float:
    """When ``setting`` acts in this silence, in ms into it (it may be after the silence ended: then it does not)."""
    crossing = next(
        (at for at, s in scored.scores if at <= scored.silence.duration_ms + EPS_MS and s > setting.threshold),
        math.inf,
    )
    return min(max(setting.min_delay_ms, crossing), setting.max_wait_ms)


def counted(
    scored: Sequence[ScoredSilence], min_hold_ms: float = MIN_HOLD_MS, max_hold_ms: float = MAX_HOLD_MS
) -> list[ScoredSilence]:
    """The silences the rates count: every end, the holds of ``min_hold_ms`` to ``max_hold_ms``."""
    return [
        s
        for s in scored
        if s.silence.label == "end" or min_hold_ms - EPS_MS <= s.silence.duration_ms <= max_hold_ms + EPS_MS
    ]


def _table(scored: Sequence[ScoredSilence]) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Durations, and the scores padded to one width (time infinity, score -infinity: never crosses)."""
    width = max([len(s.scores) for s in scored] + [1])
    times = np.full((len(scored), width), np.inf)
    values = np.full((len(scored), width), -np.inf)
    for i, s in enumerate(scored):
        for j, (at, score) in enumerate(s.scores):
            if at <= s.silence.duration_ms + EPS_MS:  # later evidence is not causal for this silence
                times[i, j], values[i, j] = at, score
    return np.array([s.silence.duration_ms for s in scored], dtype=np.float64), (times, values)


def _crossings(times: np.ndarray, values: np.ndarray, threshold: float) -> np.ndarray:
    above = values > threshold
    first = above.argmax(axis=1)
    rows = np.arange(len(times))
    return np.where(above[rows, first], times[rows, first], np.inf)


@dataclass(frozen=True, slots=True)
class _Prepared:
    holds: int
    ends: int
    hold_ms: np.ndarray
    hold_scores: tuple[np.ndarray, np.ndarray]
    end_scores: tuple[np.ndarray, np.ndarray]


def _prepare(scored: Sequence[ScoredSilence]) -> _Prepared:
    holds = [s for s in scored if s.silence.label == "hold"]
    ends = [s for s in scored if s.silence.label == "end"]
    if not holds or not ends:
        raise ValueError(f"the figures need hold and end silences: got {len(holds)} holds, {len(ends)} ends")
    hold_ms, hold_scores = _table(holds)
    return _Prepared(len(holds), len(ends), hold_ms, hold_scores, _table(ends)[1])


def _evaluate(
    data: _Prepared, thresholds: Sequence[float], min_delays_ms: Sequence[float], max_waits_ms: Sequence[float]
) -> Iterator[Figures]:
    for threshold in thresholds:
        hold_x, end_x = _crossings(*data.hold_scores, threshold), _crossings(*data.end_scores, threshold)
        for delay in min_delays_ms:
            waits = [w for w in max_waits_ms if w + EPS_MS >= delay]
            if not waits:
                continue
            wait = np.asarray(waits)[:, None]
            held = np.minimum(np.maximum(delay, hold_x)[None, :], wait)
            cut = (data.hold_ms[None, :] > held + EPS_MS).sum(axis=1)
            fired = np.maximum(delay, end_x)[None, :]
            latency = np.minimum(fired, wait)
            decided = (fired <= wait + EPS_MS).sum(axis=1)
            p50, p95 = np.percentile(latency, [50, 95], axis=1)
            for k, w in enumerate(waits):
                yield Figures(
                    Setting(threshold, delay, w),
                    data.holds,
                    int(cut[k]),
                    data.ends,
                    int(decided[k]),
                    float(latency[k].mean()),
                    float(p50[k]),
                    float(p95[k]),
                )


def figures(
    setting: Setting,
    scored: Sequence[ScoredSilence],
    min_hold_ms: float = MIN_HOLD_MS,
    max_hold_ms: float = MAX_HOLD_MS,
) -> Figures:
    """What one setting does on ``scored`` (the counted silences; raises ``ValueError`` without holds or ends)."""
    data = _prepare(counted(scored, min_hold_ms, max_hold_ms))
    return next(_evaluate(data, [setting.threshold], [setting.min_delay_ms], [setting.max_wait_ms]))


def sweep(
    scored: Sequence[ScoredSilence],
    thresholds: Sequence[float] = THRESHOLDS,
    min_delays_ms: Sequence[float] = MIN_DELAYS_MS,
    max_waits_ms: Sequence[float] = MAX_WAITS_MS,
    min_hold_ms: float = MIN_HOLD_MS,
    max_hold_ms: float = MAX_HOLD_MS,
) -> list[Figures]:
    """Every setting of the grid on ``scored``; raises ``ValueError`` on a delay or wait below ``min_hold_ms``
    (eot-bench refuses those too), or without holds or ends."""
    short = [ms for ms in (*min_delays_ms, *max_waits_ms) if ms < min_hold_ms - EPS_MS]
    if short:
        raise ValueError(f"delays and waits must be at least the shortest counted hold ({min_hold_ms} ms): {short}")
    return list(_evaluate(_prepare(counted(scored, min_hold_ms, max_hold_ms)), thresholds, min_delays_ms, max_waits_ms))


def silence_alone(
    silences: Sequence[Silence],
    waits_ms: Sequence[float] = SILENCE_WAITS_MS,
    min_hold_ms: float = MIN_HOLD_MS,
    max_hold_ms: float = MAX_HOLD_MS,
) -> list[Figures]:
    """The silence-only baseline at each wait: the setting that never trusts a score (threshold infinity)."""
    data = _prepare(counted([ScoredSilence(s) for s in silences], min_hold_ms, max_hold_ms))
    return [next(_evaluate(data, [math.inf], [w], [w])) for w in waits_ms]


def _tie(f: Figures) -> tuple[float, float, float]:
    return (-f.setting.threshold, f.setting.min_delay_ms, f.setting.max_wait_ms)


def best_under_latency(swept: Sequence[Figures], budget_ms: float) -> Figures | None:
    """The fewest cut-offs among settings whose mean latency is at most ``budget_ms`` (``None``: none is)."""
    feasible = [f for f in swept if f.mean_latency_ms <= budget_ms + EPS_MS]
    return min(feasible, key=lambda f: (f.cut_off_rate, f.mean_latency_ms, *_tie(f)), default=None)


def best_under_cut_offs(swept: Sequence[Figures], budget: float) -> Figures | None:
    """The least mean latency among settings whose cut-off rate is at most ``budget`` (``None``: none is)."""
    feasible = [f for f in swept if f.cut_off_rate <= budget + EPS_RATE]
    return min(feasible, key=lambda f: (f.mean_latency_ms, f.cut_off_rate, *_tie(f)), default=None)


def four_figures(swept: Sequence[Figures]) -> FourFigures:
    """Cut-offs at 300 and 600 ms of mean latency, mean latency at 5 % and 10 % cut-offs."""
    (fast, slow), (tight, loose) = LATENCY_BUDGETS_MS, CUT_OFF_BUDGETS
    return FourFigures(
        best_under_latency(swept, fast),
        best_under_latency(swept, slow),
        best_under_cut_offs(swept, tight),
        best_under_cut_offs(swept, loose),
    )


def frontier(swept: Sequence[Figures]) -> list[Figures]:
    """The Pareto frontier: mean latency rising, cut-off rate strictly falling, each point unbeaten on both."""
    kept: list[Figures] = []
    for f in sorted(swept, key=lambda f: (f.mean_latency_ms, f.cut_off_rate, *_tie(f))):
        if not kept or f.cut_off_rate < kept[-1].cut_off_rate - EPS_RATE:
            kept.append(f)
    return kept
