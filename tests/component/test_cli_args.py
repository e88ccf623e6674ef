"""The CLI client runs as a module (a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_module_runs_with_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clients.cli", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "python -m clients.cli" in done.stdout
