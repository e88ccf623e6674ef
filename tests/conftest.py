"""What the whole suite shares: the order its tests are handed to the pytest-xdist workers, and one folder of
test speech for the run.

The tiers run slowest first (integration, then component, then unit): a test that waits half a minute on
real-time audio starts while there is still other work to share out, and the thousands of millisecond unit tests
fill the workers' last gaps, instead of one long test starting last and running on alone. The order changes
nothing else: every test keeps its own server, clock and files (tests/README.md).

The test speech (``testing.speech``, Piper: about 0.7 s of a core per sentence) is rendered once per run in a
temporary folder that the workers share: the controller makes it before it starts them (they inherit its
environment) and removes it at the end. A rendering is the same in every process, so reading one back changes no
test's input; it only spares the other workers the CPU.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from testing.speech import SPEECH_CACHE_ENV

TIERS = ("integration", "component", "unit")


def _tier(item: pytest.Item) -> int:
    parts = Path(str(item.path)).parts
    for rank, tier in enumerate(TIERS):
        if tier in parts:
            return rank
    return len(TIERS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_tier)  # stable: within a tier, files and tests keep their order


_SPEECH_FOLDER: list[str] = []
"""The folder this process made for the run's test speech (the controller's; a worker finds it in its
environment)."""


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get(SPEECH_CACHE_ENV):
        folder = tempfile.mkdtemp(prefix="voice-agent-test-speech-")
        _SPEECH_FOLDER.append(folder)
        os.environ[SPEECH_CACHE_ENV] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _SPEECH_FOLDER:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(SPEECH_CACHE_ENV, None)
    _SPEECH_FOLDER.clear()
