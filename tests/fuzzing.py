"""Shared Hypothesis budget and JSON strategies for the decoder fuzz tests (tests/unit/test_fuzz_*.py).

Not a test module. The budget is fixed so CI is deterministic: each property runs ``examples(n)`` cases,
derandomized (the same inputs on every run), without a deadline and without an example database.
``AGENT_FUZZ_SCALE=K`` multiplies every budget by ``K`` and draws fresh random inputs instead, for a longer
local run, e.g. ``AGENT_FUZZ_SCALE=50 .venv/bin/python -m pytest -q tests/unit/test_fuzz_*.py``
(a failure prints the seed to reproduce it). The budgets are recorded in docs/security.md.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

SCALE = max(1, int(os.environ.get("AGENT_FUZZ_SCALE", "1")))


def budget(examples: int) -> settings:
    """The settings of one property: ``examples`` cases in CI, ``examples * AGENT_FUZZ_SCALE`` locally."""
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        derandomize=SCALE == 1,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _huge_numbers() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(),
        st.integers(min_value=2**63 - 2, max_value=2**64 + 2),
        st.sampled_from([10**300, -(10**300), 2**1000]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([float("nan"), float("inf"), float("-inf"), 1e308, -0.0, 5e-324]),
    )


SCALARS: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    _huge_numbers(),
    st.text(max_size=40),
    st.sampled_from(["", "16000", "8000", "audio/x-mulaw", "²", "١٢", "\u0000", "\ud800", "x" * 5000]),
)

JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=12), children, max_size=4),
    ),
    max_leaves=12,
)


def nested(depth: int, leaf: str = "0") -> str:
    """JSON text of ``depth`` nested arrays around ``leaf`` (a raw JSON fragment)."""
    return "[" * depth + leaf + "]" * depth
