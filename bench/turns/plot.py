"""The end-of-turn trade-off as a picture (``bench/end_of_turn.py --plot FILE.png``).

Offline or live (``--live``: the numbers a caller met on a real server). One panel per set (dev: tuned on;
test: only scored), one point per policy: the false-cut-off rate (y) at the
policy's end-of-turn latency p50 (x, the marker), with a whisker out to its p95. Policies down and to the left are
better. matplotlib (the ``dev`` extra) is imported here only, on the Agg backend (no display needed).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

MARKERS = "osD^vP*Xh<>p"


def plot(
    rows: Sequence[dict[str, Any]], path: Path, title: str = "end of turn", latency: str = "end-of-turn latency"
) -> None:
    """Write ``rows`` (``report.summary_rows``: policy, split, cut_off_rate, latency_ms p50/p95) to ``path``
    as a PNG; ``latency`` names what the x axis measures (live: the first reply audio at the caller)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    splits = list(dict.fromkeys(r["split"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    figure, axes = plt.subplots(1, max(len(splits), 1), figsize=(6 * max(len(splits), 1), 4.8), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    top = max([100 * (r["cut_off_rate"] or 0) for r in rows] + [1.0]) * 1.15
    right = max([r["latency_ms"]["p95"] or 0 for r in rows] + [100.0]) * 1.1
    for ax, split in zip(axes[0], splits, strict=False):
        missing = []
        for r in (r for r in rows if r["split"] == split):
            lat = r["latency_ms"]
            if lat["p50"] is None:  # every utterance cut off, or none ended
                missing.append(r["policy"])
                continue
            i = policies.index(r["policy"])
            colour = colours[i % len(colours)]
            y = 100 * (r["cut_off_rate"] or 0)
            ax.plot([lat["p50"], lat["p95"]], [y, y], color=colour, linewidth=1.2, alpha=0.7)
            ax.plot([lat["p95"]], [y], marker="|", color=colour, markersize=10)
            ax.plot([lat["p50"]], [y], marker=MARKERS[i % len(MARKERS)], color=colour, markersize=8, label=r["policy"])
        kind = "tuned on" if split == "dev" else "only scored"
        ax.set_title(f"{split} ({kind})")
        ax.set_xlabel(f"{latency} p50 (marker) to p95 (whisker), ms after the audible end")
        ax.set_ylabel("false cut-offs, % of utterances")
        ax.set_xlim(0, right)
        ax.set_ylim(-top / 40, top)
        ax.grid(True, alpha=0.3)
        if missing:
            ax.text(0.02, 0.02, "no latency: " + ", ".join(missing), transform=ax.transAxes, fontsize=8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper right")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
