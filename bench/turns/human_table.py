"""The table of the human sets (per source and split: rows, labelled silences, speakers, hours), as Markdown:
changes only with what the table shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bench.turns.human_turn import LabelledTurn
from bench.turns.sentences import Split

LONG_HOLD_MS = 300.0
COUNTED_MS = (200.0, 5000.0)
"""The holds eot-bench's cut-off rate counts (``bench/turns/field.py``: ``MIN_HOLD_MS``..``MAX_HOLD_MS``)."""
HEADER = (
    "| source | split | labels | languages | turns | ends | open turns | holds | holds 200 ms-5 s | holds ≥ 300 ms "
    "| overlapped turns | speakers | audio (h) | of it padding (h) | condition |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def _labels(rows: Sequence[LabelledTurn]) -> str:
    if any(r.derived for r in rows):
        return "derived (VAD gaps)"
    spliced = sum(r.spliced for r in rows)
    base = "speaker turns (RTTM)" if any(r.source == "ami" for r in rows) else "one turn each"
    return f"{base}, {spliced} spliced" if spliced else base


def row(source: str, split: str, rows: Sequence[LabelledTurn]) -> str:
    """One line of the table for ``rows`` (one source and split, or all of a split: ``source`` "all")."""
    holds = [h for r in rows for h in r.holds]
    ended = sum(r.ended for r in rows)
    cells = [
        source,
        split,
        _labels(rows) if source != "all" else "",
        ",".join(sorted({r.language for r in rows})),
        str(len(rows)),
        str(ended),
        str(len(rows) - ended),
        str(len(holds)),
        str(sum(COUNTED_MS[0] <= h.duration_ms <= COUNTED_MS[1] for h in holds)),
        str(sum(h.duration_ms >= LONG_HOLD_MS for h in holds)),
        str(sum(r.overlap_ms > 0 for r in rows)),
        str(len({(r.source, r.speaker) for r in rows})),
        f"{sum(r.duration_ms for r in rows) / 3.6e6:.3f}",
        f"{sum(r.duration_ms - r.real_until_ms for r in rows) / 3.6e6:.3f}",
        ", ".join(sorted({r.condition for r in rows})),
    ]
    return "| " + " | ".join(cells) + " |"


def markdown(sets: Mapping[Split, Sequence[LabelledTurn]]) -> str:
    """The table: one line per source and split, then each split's total."""
    lines = [HEADER]
    for split, rows in sets.items():
        sources = sorted({r.source for r in rows}, key=[r.source for r in rows].index)
        lines += [row(s, split, [r for r in rows if r.source == s]) for s in sources]
        lines.append(row("all", split, rows))
    return "\n".join(lines)
