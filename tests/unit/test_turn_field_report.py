"""The field's four figures as tables and a picture (bench/turns/field_report.py): ours beside eot-bench's published
figures, which are always labelled as measured on its own data; a budget no setting met shows as "–"."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.turns import field, field_report
from bench.turns.field import Figures, FourFigures, Setting


def point(latency_ms: float, cut_offs: int, threshold: float = 0.5) -> Figures:
    return Figures(Setting(threshold, 200, 1500), 40, cut_offs, 20, 15, latency_ms, latency_ms - 20, latency_ms + 300)


def ours() -> dict[str, FourFigures]:
    return {
        "current": FourFigures(point(290, 6), point(580, 3), point(580, 2), point(410, 4)),
        "text alone": FourFigures(point(300, 12), None, None, point(900, 4)),
    }


def test_the_table_puts_ours_and_the_published_figures_side_by_side_and_says_the_data_differ() -> None:
    text = field_report.table(ours(), "human test")
    lines = text.splitlines()
    assert lines[0] == ("| system | data | false cut-offs @ 300 ms | @ 600 ms | latency @ 5% cut-offs | @ 10% |")
    assert "| current | human test | 15.0 % | 7.5 % | 580 ms | 410 ms |" in lines
    assert "| text alone | human test | 30.0 % | – | – | 900 ms |" in lines
    assert (
        "| LiveKit Turn Detector v1 (cloud) | published on eot-bench's own data; the data differ "
        "| 9.9 % | 4.5 % | 543 ms | 295 ms |"
    ) in lines
    assert "| OpenAI Realtime (semantic VAD) | published on eot-bench's own data; the data differ | – | – |" in text
    assert "| silence alone (VAD baseline) | published on eot-bench's own data; the data differ | 55.6 % |" in text
    assert lines[-1] == field_report.FOOTNOTE


def test_the_settings_table_names_the_setting_behind_each_figure() -> None:
    lines = field_report.settings_table(ours()).splitlines()
    assert "| current | 5% | 0.50 | 200 ms | 1500 ms | 5.0 % (2/40) | 580 / 560 / 880 ms | 25.0 % |" in lines
    assert "| text alone | 600 ms | – | – | – | – | – | – |" in lines
    assert len(lines) == 2 + 4 * 2


def test_the_pareto_picture_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    front = field.frontier([point(250, 20), point(400, 8), point(900, 1)])
    silence = field.silence_alone([field.Silence("hold", 700), field.Silence("end", 400)], waits_ms=[300, 600, 900])
    path = tmp_path / "field.png"
    field_report.plot({"current": front}, path, silence=silence)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
