"""What the whole suite shares: the order its tests are handed to the pytest-xdist workers.

The tiers run slowest first (integration, then component, then unit): a test that waits half a minute on
real-time audio starts while there is still other work to share out, and the thousands of millisecond unit tests
fill the workers' last gaps, instead of one long test starting last and running on alone. The order changes
nothing else: every test keeps its own server, clock and files (tests/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

TIERS = ("integration", "component", "unit")


def _tier(item: pytest.Item) -> int:
    parts = Path(str(item.path)).parts
    for rank, tier in enumerate(TIERS):
        if tier in parts:
            return rank
    return len(TIERS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_tier)  # stable: within a tier, files and tests keep their order
