"""Prometheus registry primitives in the text exposition format 0.0.4, with no client library.

A tiny registry (``Counter``, ``Gauge``, ``Histogram``, each with optional labels) and its rendering. It knows
no collector: the server's own metrics are composed in ``agent.runtime.metrics.server``. Reason to change: the
exposition format or the kinds of metric. Everything runs on the server's event loop, so no locks are needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypeVar

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LabelValues = tuple[str, ...]


def escape_label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _labels(names: Sequence[str], values: Sequence[str], extra: tuple[str, str] | None = None) -> str:
    pairs = [f'{n}="{escape_label_value(v)}"' for n, v in zip(names, values, strict=True)]
    if extra is not None:
        pairs.append(f'{extra[0]}="{escape_label_value(extra[1])}"')
    return "{" + ",".join(pairs) + "}" if pairs else ""


class _Metric:
    kind = "untyped"

    def __init__(self, name: str, help_text: str, labels: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help_text
        self.label_names = tuple(labels)

    def _key(self, labels: Sequence[str]) -> LabelValues:
        if len(labels) != len(self.label_names):
            raise ValueError(f"{self.name} takes labels {self.label_names}, got {tuple(labels)}")
        return tuple(str(v) for v in labels)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {escape_help(self.help)}", f"# TYPE {self.name} {self.kind}"]

    def samples(self) -> list[str]:
        raise NotImplementedError

    def render(self) -> list[str]:
        return self.header() + self.samples()


class Counter(_Metric):
    """A value that only goes up. Without labels it is exposed as 0 from the start."""

    kind = "counter"

    def __init__(self, name: str, help_text: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, help_text, labels)
        self._values: dict[LabelValues, float] = {} if labels else {(): 0.0}

    def inc(self, amount: float = 1.0, labels: Sequence[str] = ()) -> None:
        if amount < 0:
            raise ValueError("a counter cannot go down")
        key = self._key(labels)
        self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, labels: Sequence[str] = ()) -> float:
        return self._values.get(self._key(labels), 0.0)

    def samples(self) -> list[str]:
        return [f"{self.name}{_labels(self.label_names, k)} {format_value(v)}" for k, v in sorted(self._values.items())]


class Gauge(_Metric):
    """A value that goes up and down."""

    kind = "gauge"

    def __init__(self, name: str, help_text: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, help_text, labels)
        self._values: dict[LabelValues, float] = {} if labels else {(): 0.0}

    def set(self, value: float, labels: Sequence[str] = ()) -> None:
        self._values[self._key(labels)] = value

    def inc(self, amount: float = 1.0, labels: Sequence[str] = ()) -> None:
        key = self._key(labels)
        self._values[key] = self._values.get(key, 0.0) + amount

    def dec(self, amount: float = 1.0, labels: Sequence[str] = ()) -> None:
        self.inc(-amount, labels)

    def value(self, labels: Sequence[str] = ()) -> float:
        return self._values.get(self._key(labels), 0.0)

    def samples(self) -> list[str]:
        return [f"{self.name}{_labels(self.label_names, k)} {format_value(v)}" for k, v in sorted(self._values.items())]


class Histogram(_Metric):
    """Observations counted into cumulative ``le`` buckets, with ``_sum`` and ``_count``."""

    kind = "histogram"

    def __init__(self, name: str, help_text: str, buckets: Iterable[float], labels: Sequence[str] = ()) -> None:
        super().__init__(name, help_text, labels)
        if "le" in self.label_names:
            raise ValueError("'le' is reserved for histogram buckets")
        bounds = sorted(set(buckets))
        if not bounds or any(math.isnan(b) for b in bounds):
            raise ValueError("a histogram needs at least one numeric bucket")
        self.bounds: tuple[float, ...] = tuple(b for b in bounds if not math.isinf(b))
        # Per label set: per-bucket (non-cumulative) counts, the +Inf overflow last; then sum.
        self._counts: dict[LabelValues, list[int]] = {}
        self._sums: dict[LabelValues, float] = {}
        if not labels:
            self._counts[()] = [0] * (len(self.bounds) + 1)
            self._sums[()] = 0.0

    def observe(self, value: float, labels: Sequence[str] = ()) -> None:
        key = self._key(labels)
        counts = self._counts.setdefault(key, [0] * (len(self.bounds) + 1))
        index = next((i for i, bound in enumerate(self.bounds) if value <= bound), len(self.bounds))
        counts[index] += 1
        self._sums[key] = self._sums.get(key, 0.0) + value

    def count(self, labels: Sequence[str] = ()) -> int:
        return sum(self._counts.get(self._key(labels), ()))

    def samples(self) -> list[str]:
        lines: list[str] = []
        for key in sorted(self._counts):
            cumulative = 0
            for bound, n in zip((*self.bounds, math.inf), self._counts[key], strict=True):
                cumulative += n
                le = _labels(self.label_names, key, ("le", format_value(bound)))
                lines.append(f"{self.name}_bucket{le} {cumulative}")
            plain = _labels(self.label_names, key)
            lines.append(f"{self.name}_sum{plain} {format_value(self._sums[key])}")
            lines.append(f"{self.name}_count{plain} {cumulative}")
        return lines


_M = TypeVar("_M", bound=_Metric)


class Registry:
    """Metrics in registration order; ``render`` is the whole exposition."""

    def __init__(self) -> None:
        self._metrics: dict[str, _Metric] = {}

    def register(self, metric: _M) -> _M:
        if metric.name in self._metrics:
            raise ValueError(f"metric {metric.name} is already registered")
        self._metrics[metric.name] = metric
        return metric

    def render(self) -> str:
        lines: list[str] = []
        for metric in self._metrics.values():
            lines += metric.render()
        return "\n".join(lines) + "\n"
