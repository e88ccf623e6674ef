"""Percentiles and the per-stage summaries the benches print: changes only with how a figure is computed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def pct(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of ``values`` (linear interpolation); NaN when there are none."""
    return float(np.percentile(values, q)) if values else math.nan


def percentiles(values: Sequence[float], points: Sequence[int]) -> dict[str, Any]:
    """``n``, ``max`` and ``p<point>`` of ``values`` (linear interpolation), rounded to 0.1; ``None`` if empty."""
    out: dict[str, Any] = {"n": len(values)}
    arr = np.asarray(values, dtype=np.float64)
    for p in points:
        out[f"p{p}"] = round(float(np.percentile(arr, p)), 1) if arr.size else None
    out["max"] = round(float(arr.max()), 1) if arr.size else None
    return out


def summarize(values: Sequence[float], *, mean: bool = True) -> dict[str, float | int | None]:
    """``n``, ``p50``, ``p95``, ``mean`` (unless ``mean=False``) and ``max`` of ``values``, rounded to 0.1."""
    if not values:
        return {"n": 0, "p50": None, "p95": None, **({"mean": None} if mean else {}), "max": None}
    arr = np.asarray(values, dtype=np.float64)
    out: dict[str, float | int | None] = {
        "n": len(values),
        "p50": round(float(np.percentile(arr, 50)), 1),
        "p95": round(float(np.percentile(arr, 95)), 1),
    }
    if mean:
        out["mean"] = round(float(arr.mean()), 1)
    out["max"] = round(float(arr.max()), 1)
    return out
