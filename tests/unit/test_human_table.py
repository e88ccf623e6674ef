"""The human sets' table (bench/turns/human_table.py): per source and split, turns, ends, open turns, holds, the
holds eot-bench counts (200 ms to 5 s), those of 300 ms or more, overlapped turns, speakers and hours; derived
labels named as such."""

from __future__ import annotations

import numpy as np

from bench.turns.human_labels import LabelledSilence
from bench.turns.human_table import markdown
from bench.turns.human_turn import RATE, LabelledTurn


def row(source: str, speaker: str, holds_ms: list[float], ended: bool, *, derived: bool = False) -> LabelledTurn:
    silences = [LabelledSilence(1000 * i, 1000 * i + ms, "hold", derived) for i, ms in enumerate(holds_ms, 1)]
    if ended:
        silences.append(LabelledSilence(9000, 13000, "end", derived))
    audio = np.zeros(13 * RATE, np.float32)
    return LabelledTurn(f"{source}/{speaker}", source, speaker, "dev", audio, tuple(silences), None, 300.0, 10000.0)


def test_the_table_counts_each_source_and_the_split() -> None:
    rows = [
        row("ami", "A", [150, 400], True),
        row("ami", "B", [800], False),
        row("voxconverse", "unknown", [300, 200], True, derived=True),
    ]
    lines = markdown({"dev": rows}).splitlines()
    assert (
        lines[2] == "| ami | dev | speaker turns (RTTM) | en | 2 | 1 | 1 | 3 | 2 | 2 | 0 | 2 | 0.007 | 0.002 | clean |"
    )
    assert lines[3].startswith("| voxconverse | dev | derived (VAD gaps) | en | 1 | 1 | 0 | 2 | 2 | 1 |")
    assert lines[4].startswith("| all | dev |  | en | 3 | 2 | 1 | 5 | 4 | 3 | 0 | 3 |")
