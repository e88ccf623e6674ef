"""The field's figures (``field``) as tables and a Pareto picture, with eot-bench's published English figures beside
ours: changes only with how they are shown, or when eot-bench publishes new figures.

The published figures are eot-bench's own data (real human-to-agent turns, its validation split), not ours; every
table and plot says so. matplotlib (the ``dev`` extra) is imported only by ``plot``, on the Agg backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.turns.field import CUT_OFF_BUDGETS, LATENCY_BUDGETS_MS, Figures, FourFigures

Published = tuple[float | None, float | None, float | None, float | None]
PUBLISHED_NOTE = "published on eot-bench's own data; the data differ"
# livekit/eot-bench README and output/.../en/comparison/report.md, English: false cut-offs at 300 / 600 ms mean
# latency, mean latency (ms) at 5 % / 10 % cut-offs; None: no setting met that budget ("–" there).
PUBLISHED: dict[str, Published] = {
    "LiveKit Turn Detector v1 (cloud)": (0.099, 0.045, 543, 295),
    "Deepgram Flux": (0.129, 0.099, 1151, 548),
    "LiveKit Turn Detector v1-mini (open)": (0.278, 0.121, 1070, 698),
    "Smart Turn v3.2": (0.352, 0.148, 1051, 739),
    "OpenAI Realtime (semantic VAD)": (None, None, 1143, 824),
    "silence alone (VAD baseline)": (0.556, 0.217, 1600, 1000),
}
HEADER = (
    f"false cut-offs @ {LATENCY_BUDGETS_MS[0]:.0f} ms",
    f"@ {LATENCY_BUDGETS_MS[1]:.0f} ms",
    f"latency @ {CUT_OFF_BUDGETS[0]:.0%} cut-offs",
    f"@ {CUT_OFF_BUDGETS[1]:.0%}",
)
FOOTNOTE = (
    "Cut-offs: hold silences of 200 ms-5 s where the agent would have spoken; latency: the mean wait at the true "
    "end; each figure is the best setting (threshold, minimum delay, max wait) of the sweep under that budget; "
    "'–': no setting met it."
)


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f} ms"


def cells(values: Sequence[float | None]) -> list[str]:
    return [_rate(values[0]), _rate(values[1]), _ms(values[2]), _ms(values[3])]


def table(ours: Mapping[str, FourFigures], data: str, published: Mapping[str, Published] = PUBLISHED) -> str:
    """A Markdown table: our systems on ``data`` (e.g. "human test"), then the published anchors."""
    lines = [
        "| system | data | " + " | ".join(HEADER) + " |",
        "| --- | --- |" + " ---: |" * len(HEADER),
    ]
    lines += [f"| {name} | {data} | " + " | ".join(cells(four.values())) + " |" for name, four in ours.items()]
    lines += [f"| {name} | {PUBLISHED_NOTE} | " + " | ".join(cells(v)) + " |" for name, v in published.items()]
    return "\n".join([*lines, "", FOOTNOTE])


def settings_table(ours: Mapping[str, FourFigures]) -> str:
    """A Markdown table of the setting behind each of our figures, with its latency spread and its waits."""
    lines = [
        "| system | budget | threshold | min delay | max wait | cut-offs | latency mean / p50 / p95 | waited out |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    budgets = (
        f"{LATENCY_BUDGETS_MS[0]:.0f} ms",
        f"{LATENCY_BUDGETS_MS[1]:.0f} ms",
        f"{CUT_OFF_BUDGETS[0]:.0%}",
        f"{CUT_OFF_BUDGETS[1]:.0%}",
    )
    for name, four in ours.items():
        for budget, f in zip(budgets, (four.at_300ms, four.at_600ms, four.at_5pct, four.at_10pct), strict=True):
            if f is None:
                lines.append(f"| {name} | {budget} | – | – | – | – | – | – |")
                continue
            s = f.setting
            lines.append(
                f"| {name} | {budget} | {s.threshold:.2f} | {s.min_delay_ms:.0f} ms | {s.max_wait_ms:.0f} ms | "
                f"{_rate(f.cut_off_rate)} ({f.cut_offs}/{f.holds}) | {f.mean_latency_ms:.0f} / "
                f"{f.p50_latency_ms:.0f} / {f.p95_latency_ms:.0f} ms | {_rate(f.timeout_rate)} |"
            )
    return "\n".join(lines)


def _published_points(values: Published) -> tuple[list[float], list[float]]:
    """The published figures as points of their frontier: (budget ms, rate) and (latency, budget rate)."""
    xs: list[float] = []
    ys: list[float] = []
    for budget, rate in zip(LATENCY_BUDGETS_MS, values[:2], strict=True):
        if rate is not None:
            xs.append(budget)
            ys.append(100 * rate)
    for latency, budget in zip(values[2:], CUT_OFF_BUDGETS, strict=True):
        if latency is not None:
            xs.append(latency)
            ys.append(100 * budget)
    return xs, ys


def plot(
    frontiers: Mapping[str, Sequence[Figures]],
    path: Path,
    title: str = "end of turn, the field's method",
    silence: Sequence[Figures] = (),
    published: Mapping[str, Published] = PUBLISHED,
) -> None:
    """Write the Pareto picture to ``path`` (PNG): each of our systems' frontier (``field.frontier``) as a line,
    silence alone dashed, and the published figures as hollow markers (their data, not ours)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(8.0, 5.4))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    xs_all: list[float] = [1000.0]
    for i, (name, front) in enumerate(frontiers.items()):
        xs = [f.mean_latency_ms for f in front]
        ax.plot(xs, [100 * f.cut_off_rate for f in front], color=colours[i % len(colours)], marker=".", label=name)
        xs_all += xs
    if silence:
        xs = [f.mean_latency_ms for f in silence]
        ax.plot(xs, [100 * f.cut_off_rate for f in silence], color="#4d4d4d", linestyle="--", label="silence alone")
    for j, (name, values) in enumerate(published.items()):
        xs, ys = _published_points(values)
        colour = colours[(len(frontiers) + j) % len(colours)]
        ax.plot(xs, ys, linestyle="none", marker="o", markerfacecolor="none", color=colour, label=f"{name} *")
        xs_all += xs
    for budget in LATENCY_BUDGETS_MS:
        ax.axvline(budget, color="#999999", linestyle=":", linewidth=0.8)
    for budget in CUT_OFF_BUDGETS:
        ax.axhline(100 * budget, color="#999999", linestyle=":", linewidth=0.8)
    ax.set_xlim(0, min(max(xs_all) * 1.1, 3600))
    ax.set_ylim(0, 60)
    ax.set_xlabel("mean latency at the true end of turn, ms")
    ax.set_ylabel("false cut-offs, % of hold silences (200 ms-5 s)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    ax.text(0.01, 0.01, f"* {PUBLISHED_NOTE}", transform=ax.transAxes, fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
