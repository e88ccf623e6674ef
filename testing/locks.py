"""The entries of a pip requirements lock, shared by the tests that check the locks and the benches that read
one: changes only with how such a file is read.
"""

from __future__ import annotations


def lock_entries(text: str) -> list[str]:
    """One string per requirement of a pip requirements file's ``text``: continuation lines joined, blank lines and
    comments dropped (``name==version --hash=sha256:...``)."""
    entries: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        current += " " + line.removesuffix("\\").strip()
        if not line.endswith("\\"):
            entries.append(current.strip())
            current = ""
    return entries
