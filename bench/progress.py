"""The progress line a bench writes while it runs: changes only with where and how progress is shown."""

from __future__ import annotations

import sys


def progress(line: str) -> None:
    """One line on stderr, flushed at once (stdout is for the tables and ``--json``)."""
    print(line, file=sys.stderr, flush=True)
