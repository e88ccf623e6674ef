"""The file voice store: round trips, atomic commit order, crash at every step, stale-file clean-up."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent.adapters import file_voice_store
from agent.adapters.file_voice_store import FileVoiceStore
from agent.errors import ProviderError, UnknownVoice, VoiceExists
from agent.ports import Voice, VoiceRecord

ROOT = Path(__file__).parents[2]


def make_voice(name: str = "alice", wav: bytes = b"RIFF-fake-wav-bytes") -> Voice:
    record = VoiceRecord(
        name=name,
        voice_id=hashlib.md5(name.encode()).hexdigest(),
        transcript="Hello there.",
        language="English",
        consent="I agree to have my voice cloned.",
        sha256=hashlib.sha256(wav).hexdigest(),
        duration_s=4.2,
        created_at="2026-01-01T00:00:00+00:00",
    )
    return Voice(record, wav)


def consistent(directory: Path, name: str = "alice") -> bool:
    """Open the store afresh (as after a restart): the voice is wholly there (True) or wholly absent (False)."""
    store = FileVoiceStore(directory)
    store.open()
    registry = directory / "registry.json"
    if registry.exists():
        json.loads(registry.read_text())  # always parses
    leftovers = [p for p in directory.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    voice_ids = {p.stem for p in (directory / "audio").iterdir()} | {p.stem for p in (directory / "consent").iterdir()}
    try:
        voice = asyncio.run(store.get(name))
    except UnknownVoice:
        assert voice_ids == set()  # no orphaned audio or consent record
        return False
    assert voice.wav == make_voice(name).wav and voice_ids == {voice.record.voice_id}
    return True


async def test_round_trip(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path / "voices")
    voice = make_voice()
    await store.add(voice)
    assert await store.get("alice") == voice
    assert await store.get("ALICE") == voice  # names are not case-sensitive
    assert await store.list() == [voice.record]
    with pytest.raises(VoiceExists):
        await store.add(make_voice())
    await store.remove("alice")
    assert await store.list() == []
    with pytest.raises(UnknownVoice):
        await store.get("alice")
    with pytest.raises(UnknownVoice):
        await store.remove("alice")
    consent = list((tmp_path / "voices" / "consent").iterdir())
    assert consent == [] and list((tmp_path / "voices" / "audio").iterdir()) == []


@pytest.mark.parametrize("name", ["../etc/passwd", "a/b", "", "x" * 65, "Ünïcode"])
async def test_names_that_are_not_slugs_are_unknown(tmp_path: Path, name: str) -> None:
    store = FileVoiceStore(tmp_path)
    with pytest.raises(UnknownVoice):
        await store.get(name)


async def test_audio_is_checked_against_its_checksum(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path)
    voice = make_voice()
    await store.add(voice)
    (tmp_path / "audio" / f"{voice.record.voice_id}.wav").write_bytes(b"tampered")
    with pytest.raises(ProviderError):
        await store.get("alice")


async def test_a_corrupt_registry_is_an_error_not_an_empty_store(tmp_path: Path) -> None:
    (tmp_path / "registry.json").write_text("{not json")
    with pytest.raises(ProviderError):
        await FileVoiceStore(tmp_path).list()
    assert (tmp_path / "registry.json").read_text() == "{not json"  # never overwritten


async def test_concurrent_writers_are_serialised(tmp_path: Path) -> None:
    stores = [FileVoiceStore(tmp_path) for _ in range(3)]  # as if three processes
    names = [f"v{i}" for i in range(12)]
    await asyncio.gather(*(stores[i % 3].add(make_voice(n)) for i, n in enumerate(names)))
    assert sorted(r.name for r in await stores[0].list()) == sorted(names)
    results = await asyncio.gather(*(s.add(make_voice("same")) for s in stores), return_exceptions=True)
    assert sum(r is None for r in results) == 1
    assert all(isinstance(r, VoiceExists) for r in results if r is not None)


def test_stale_temp_files_and_orphans_are_cleaned_at_open(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path)
    asyncio.run(store.add(make_voice()))
    (tmp_path / ".registry.json.1234.tmp").write_text("{")
    (tmp_path / "audio" / "deadbeef.wav").write_bytes(b"orphan")
    (tmp_path / "consent" / ".x.json.99.tmp").write_text("")
    assert consistent(tmp_path)
    assert not (tmp_path / "audio" / "deadbeef.wav").exists()


class Crash(Exception):
    pass


def _failing_at(monkeypatch: pytest.MonkeyPatch, target: str, n: int) -> list[int]:
    """Make the ``n``-th call (0-based) of ``os.<target>`` in the store module raise ``Crash``."""
    calls = [0]
    real = getattr(os, target)

    def wrapper(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        if calls[0] - 1 == n:
            raise Crash(target)
        return real(*args, **kwargs)

    monkeypatch.setattr(file_voice_store.os, target, wrapper)
    return calls


STEPS = ["open", "fsync", "replace"]


@pytest.mark.parametrize("target", STEPS)
def test_a_failure_at_any_step_of_add_leaves_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    n = 0
    while True:
        directory = tmp_path / f"{target}-{n}"
        FileVoiceStore(directory).open()
        with monkeypatch.context() as m:
            calls = _failing_at(m, target, n)
            try:
                asyncio.run(FileVoiceStore(directory).add(make_voice()))
                failed = False
            except (Crash, ProviderError):
                failed = True
        present = consistent(directory)
        assert present or failed  # a finished add is whole; a failed one is whole (failed after commit) or absent
        if not failed:
            assert calls[0] == n  # ran out of steps to fail
            break
        n += 1
    assert n >= 3


@pytest.mark.parametrize("target", [*STEPS, "unlink"])
def test_a_failure_at_any_step_of_remove_leaves_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    for n in range(8):
        directory = tmp_path / f"{target}-{n}"
        asyncio.run(FileVoiceStore(directory).add(make_voice()))
        with monkeypatch.context() as m:
            _failing_at(m, target, n)
            with contextlib.suppress(Crash, ProviderError):
                asyncio.run(FileVoiceStore(directory).remove("alice"))
        consistent(directory)  # asserts all-or-nothing, whichever it is


_KILLER = """
import asyncio, os, signal, sys
sys.path.insert(0, {root!r})
from agent.adapters import file_voice_store
from tests.unit.test_file_voice_store import make_voice
target, n = sys.argv[1], int(sys.argv[2])
real = getattr(os, target)
calls = [0]
def wrapper(*a, **k):
    calls[0] += 1
    if calls[0] - 1 == n:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **k)
store = file_voice_store.FileVoiceStore(sys.argv[3])
store.open()
setattr(file_voice_store.os, target, wrapper)
asyncio.run(store.add(make_voice()))
"""


@pytest.mark.parametrize(("target", "n"), [("fsync", 0), ("replace", 1), ("fsync", 4)])
def test_kill_9_during_add_leaves_all_or_nothing(tmp_path: Path, target: str, n: int) -> None:
    directory = tmp_path / "voices"
    code = _KILLER.format(root=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, target, str(n), str(directory)], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert not consistent(directory)  # killed before the registry entry was committed
