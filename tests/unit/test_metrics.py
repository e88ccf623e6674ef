"""The Prometheus text exposition (0.0.4) of ``agent.runtime.metrics.registry``, parsed back."""

from __future__ import annotations

import math
import re

import pytest

from agent.core.events import TurnMetrics
from agent.runtime.metrics.registry import Counter, Gauge, Histogram, Registry
from agent.runtime.metrics.server import ServerMetrics

Sample = tuple[str, dict[str, str], float]

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def parse(text: str) -> tuple[dict[str, str], dict[str, str], list[Sample]]:
    """A strict reader of the text format: returns HELP texts, TYPEs, and samples."""
    assert text.endswith("\n")
    helps: dict[str, str] = {}
    types: dict[str, str] = {}
    samples: list[Sample] = []
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("# HELP "):
            name, _, doc = line[7:].partition(" ")
            helps[name] = doc
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert kind in ("counter", "gauge", "histogram", "summary", "untyped")
            types[name] = kind
        else:
            match = _SAMPLE.match(line)
            assert match, f"bad sample line {line!r}"
            labels: dict[str, str] = {}
            if match.group(2):
                body = match.group(2)[1:-1]
                consumed = 0
                for lm in _LABEL.finditer(body):
                    assert lm.start() == consumed, f"bad labels in {line!r}"
                    labels[lm.group(1)] = _unescape(lm.group(2))
                    consumed = lm.end()
                assert consumed == len(body), f"bad labels in {line!r}"
            value = match.group(3)
            samples.append((match.group(1), labels, float(value.replace("+Inf", "inf"))))
    return helps, types, samples


def _value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [v for n, lbl, v in samples if n == name and lbl == labels]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def _turn(**over: object) -> TurnMetrics:
    values: dict[str, object] = {
        "turn": 1,
        "endpoint_ms": 600.0,
        "asr_ms": 120.0,
        "llm_first_text_ms": 30.0,
        "llm_total_ms": 200.0,
        "tts_first_audio_ms": 80.0,
        "voice_to_voice_ms": 830.0,
        "utterance_ms": 1500,
        "reply_audio_ms": 2400,
        "interrupted": False,
    }
    values.update(over)
    return TurnMetrics(**values)  # type: ignore[arg-type]


def test_a_fresh_server_exposes_zeros_and_types() -> None:
    helps, types, samples = parse(ServerMetrics().render())
    assert types["voice_agent_active_sessions"] == "gauge"
    assert types["voice_agent_turns_total"] == "counter"
    assert types["voice_agent_barge_ins_total"] == "counter"
    assert types["voice_agent_errors_total"] == "counter"
    assert types["voice_agent_turn_latency_seconds"] == "histogram"
    assert set(helps) == set(types)
    assert _value(samples, "voice_agent_active_sessions") == 0
    assert _value(samples, "voice_agent_turns_total") == 0
    assert all(name.startswith(("voice_agent_", "process_")) for name, _, _ in samples)  # process_: Prometheus names


def test_sessions_turns_errors_and_barge_ins() -> None:
    m = ServerMetrics()
    m.session_opened()
    m.session_opened()
    m.session_closed()
    m.turn_completed(_turn())
    m.turn_completed(_turn(turn=2, interrupted=True, tts_first_audio_ms=None, voice_to_voice_ms=None))
    m.barge_in()
    m.continued_turn()
    m.error("llm_failed")
    m.error("llm_failed")
    m.error("bad_frame")
    _, _, samples = parse(m.render())
    assert _value(samples, "voice_agent_active_sessions") == 1
    assert _value(samples, "voice_agent_sessions_total") == 2
    assert _value(samples, "voice_agent_turns_total") == 2
    assert _value(samples, "voice_agent_interrupted_turns_total") == 1
    assert _value(samples, "voice_agent_barge_ins_total") == 1
    assert _value(samples, "voice_agent_continued_turns_total") == 1
    assert _value(samples, "voice_agent_errors_total", code="llm_failed") == 2
    assert _value(samples, "voice_agent_errors_total", code="bad_frame") == 1
    # Stages that did not happen are not observed.
    assert _value(samples, "voice_agent_turn_latency_seconds_count", stage="asr") == 2
    assert _value(samples, "voice_agent_turn_latency_seconds_count", stage="voice_to_voice") == 1
    assert _value(samples, "voice_agent_turn_latency_seconds_sum", stage="voice_to_voice") == pytest.approx(0.83)
    assert _value(samples, "voice_agent_turn_latency_seconds_count", stage="tts_first_audio") == 1
    assert _value(samples, "voice_agent_turn_latency_seconds_count", stage="llm_first_text") == 2


def test_histogram_buckets_are_cumulative_and_end_with_inf() -> None:
    registry = Registry()
    h = registry.register(Histogram("x_seconds", "X.", (0.1, 0.5, 1.0), ["stage"]))
    for v in (0.05, 0.1, 0.3, 0.7, 2.0):
        h.observe(v, ["a"])
    _, types, samples = parse(registry.render())
    assert types == {"x_seconds": "histogram"}
    buckets = [(lbl["le"], v) for n, lbl, v in samples if n == "x_seconds_bucket"]
    assert buckets == [("0.1", 2), ("0.5", 3), ("1", 4), ("+Inf", 5)]
    assert _value(samples, "x_seconds_count", stage="a") == 5
    assert _value(samples, "x_seconds_sum", stage="a") == pytest.approx(3.15)
    assert all(lbl.get("stage") == "a" for _, lbl, _ in samples)


def test_latency_buckets_cover_fifty_ms_to_five_seconds() -> None:
    m = ServerMetrics()
    m.turn_completed(_turn(voice_to_voice_ms=50.0))
    _, _, samples = parse(m.render())
    bounds = [
        float(lbl["le"].replace("+Inf", "inf"))
        for n, lbl, _ in samples
        if n == "voice_agent_turn_latency_seconds_bucket" and lbl["stage"] == "voice_to_voice"
    ]
    assert bounds == sorted(bounds) and bounds[-1] == math.inf
    assert 0.05 in bounds and 5.0 in bounds and len([b for b in bounds if 0.05 <= b <= 5.0]) >= 10
    assert _value(samples, "voice_agent_turn_latency_seconds_bucket", stage="voice_to_voice", le="0.05") == 1


def test_label_values_and_help_are_escaped() -> None:
    registry = Registry()
    c = registry.register(Counter("odd_total", 'Help with \\ and\nnewline and "quotes".', ["code"]))
    nasty = 'a"b\\c\nd'
    c.inc(labels=[nasty])
    text = registry.render()
    assert '# HELP odd_total Help with \\\\ and\\nnewline and "quotes".' in text
    assert 'odd_total{code="a\\"b\\\\c\\nd"} 1' in text
    _, _, samples = parse(text)
    assert _value(samples, "odd_total", code=nasty) == 1


def test_metric_misuse_is_rejected() -> None:
    registry = Registry()
    c = registry.register(Counter("c_total", "C."))
    with pytest.raises(ValueError):
        c.inc(-1)
    with pytest.raises(ValueError):
        c.inc(labels=["unexpected"])
    with pytest.raises(ValueError):
        registry.register(Counter("c_total", "again"))
    with pytest.raises(ValueError):
        Histogram("h", "H.", (1.0,), ["le"])
    g = registry.register(Gauge("g", "G."))
    g.set(2.5)
    g.dec()
    assert g.value() == 1.5
    assert "g 1.5\n" in registry.render()


def test_refusals_are_counted_by_reason_whatever_their_status() -> None:
    metrics = ServerMetrics()
    for reason in ("bad_version", "bad_handshake", "bad_version", "origin", "peer_limit", "opening_full"):
        metrics.refused(reason)
    helps, types, samples = parse(metrics.render())
    assert types["voice_agent_refusals_total"] == "counter"
    assert "4xx" in helps["voice_agent_refusals_total"] and "503" in helps["voice_agent_refusals_total"]
    assert _value(samples, "voice_agent_refusals_total", reason="bad_version") == 2
    assert _value(samples, "voice_agent_refusals_total", reason="origin") == 1
    assert _value(samples, "voice_agent_refusals_total", reason="opening_full") == 1
