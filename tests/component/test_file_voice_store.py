"""The file voice store: round trips, tenants, assets, old registries, atomic commit order, crash at every step,
stale-file clean-up."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.errors import ProviderError, UnknownVoice, VoiceExists
from agent.ports import ConsentRecord, Voice, VoiceRecord

ROOT = Path(__file__).parents[2]


def make_voice(name: str = "alice", wav: bytes = b"RIFF-fake-wav-bytes", tenant: str = "default") -> Voice:
    sha256 = hashlib.sha256(wav).hexdigest()
    consent = ConsentRecord(
        statement="I, Alice, agree to have my voice cloned.",
        speaker="Alice",
        consented_at="2026-01-01T00:00:00+00:00",
        audio_sha256=sha256,
        enrolled_by="cli",
        tenant=tenant,
    )
    record = VoiceRecord(
        name=name,
        voice_id=hashlib.md5(f"{tenant}/{name}".encode()).hexdigest(),
        transcript="Hello there.",
        language="English",
        consent=consent,
        sha256=sha256,
        duration_s=4.2,
        created_at="2026-01-01T00:00:00+00:00",
        tenant=tenant,
    )
    return Voice(record, wav)


def stored_ids(directory: Path) -> set[str]:
    """Voice ids that have any file in the store (audio, consent record or assets)."""
    ids = {p.stem for p in (directory / "audio").iterdir()} | {p.stem for p in (directory / "consent").iterdir()}
    assets = directory / "assets"
    return ids | ({p.name for p in assets.iterdir()} if assets.exists() else set())


def consistent(directory: Path, name: str = "alice") -> bool:
    """Open the store afresh (as after a restart): the voice is wholly there (True) or wholly absent (False)."""
    store = FileVoiceStore(directory)
    store.open()
    registry = directory / "registry.json"
    if registry.exists():
        json.loads(registry.read_text())  # always parses
    leftovers = [p for p in directory.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    voice_ids = stored_ids(directory)
    try:
        voice = asyncio.run(store.get("default", name))
    except UnknownVoice:
        assert voice_ids == set()  # no orphaned audio or consent record
        return False
    assert voice.wav == make_voice(name).wav and voice_ids == {voice.record.voice_id}
    return True


async def test_round_trip(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path / "voices")
    voice = make_voice()
    await store.add(voice)
    assert await store.get("default", "alice") == voice
    assert await store.get("default", "ALICE") == voice  # names are not case-sensitive
    assert await store.list("default") == [voice.record]
    with pytest.raises(VoiceExists):
        await store.add(make_voice())
    await store.remove("default", "alice")
    assert await store.list("default") == []
    with pytest.raises(UnknownVoice):
        await store.get("default", "alice")
    with pytest.raises(UnknownVoice):
        await store.remove("default", "alice")
    consent = list((tmp_path / "voices" / "consent").iterdir())
    assert consent == [] and list((tmp_path / "voices" / "audio").iterdir()) == []


@pytest.mark.parametrize("name", ["../etc/passwd", "a/b", "", "x" * 65, "Ünïcode"])
async def test_names_that_are_not_slugs_are_unknown(tmp_path: Path, name: str) -> None:
    store = FileVoiceStore(tmp_path)
    with pytest.raises(UnknownVoice):
        await store.get("default", name)


async def test_audio_is_checked_against_its_checksum(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path)
    voice = make_voice()
    await store.add(voice)
    (tmp_path / "audio" / f"{voice.record.voice_id}.wav").write_bytes(b"tampered")
    with pytest.raises(ProviderError):
        await store.get("default", "alice")


async def test_a_corrupt_registry_is_an_error_not_an_empty_store(tmp_path: Path) -> None:
    (tmp_path / "registry.json").write_text("{not json")
    with pytest.raises(ProviderError):
        await FileVoiceStore(tmp_path).list("default")
    assert (tmp_path / "registry.json").read_text() == "{not json"  # never overwritten


async def test_concurrent_writers_are_serialised(tmp_path: Path) -> None:
    stores = [FileVoiceStore(tmp_path) for _ in range(3)]  # as if three processes
    names = [f"v{i}" for i in range(12)]
    await asyncio.gather(*(stores[i % 3].add(make_voice(n)) for i, n in enumerate(names)))
    assert sorted(r.name for r in await stores[0].list("default")) == sorted(names)
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


async def test_other_tenants_voices_are_invisible(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path)
    mine, theirs = make_voice("alice", tenant="acme"), make_voice("alice", b"other-audio", tenant="globex")
    await store.add(mine)
    await store.add(theirs)  # names are unique per tenant only
    await store.put_asset("acme", "alice", "phrase-apology", b"acme-sorry")
    assert await store.list("acme") == [mine.record] and await store.list("globex") == [theirs.record]
    assert await store.list("default") == [] and await store.list("../acme") == []
    assert await store.get("globex", "alice") == theirs
    assert await store.get_asset("globex", "alice", "phrase-apology") is None
    for tenant in ("default", "initech", "ACME", "acme/..", ""):
        for call in (
            store.get(tenant, "alice"),
            store.remove(tenant, "alice"),
            store.get_asset(tenant, "alice", "phrase-apology"),
            store.put_asset(tenant, "alice", "phrase-apology", b"x"),
        ):
            with pytest.raises(UnknownVoice):
                await call
    await store.remove("globex", "alice")
    assert await store.get("acme", "alice") == mine  # the other tenant's voice of the same name is untouched
    assert await store.get_asset("acme", "alice", "phrase-apology") == b"acme-sorry"


async def test_assets_are_stored_with_the_voice_and_removed_with_it(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path)
    voice = make_voice()
    await store.add(voice)
    assert await store.get_asset("default", "alice", "phrase-greeting") is None
    await store.put_asset("default", "alice", "phrase-greeting", b"hello-pcm")
    await store.put_asset("default", "alice", "phrase-greeting", b"hello-pcm-2")  # replaced atomically
    await store.put_asset("default", "Alice", "phrase-idle_prompt", b"still-there")
    assert await store.get_asset("default", "ALICE", "phrase-greeting") == b"hello-pcm-2"
    for key in ("../registry.json", "Phrase", "", ".hidden", "a/b", "x" * 65):
        with pytest.raises(ValueError, match="asset key"):
            await store.put_asset("default", "alice", key, b"x")
        with pytest.raises(ValueError, match="asset key"):
            await store.get_asset("default", "alice", key)
    with pytest.raises(UnknownVoice):
        await store.put_asset("default", "bob", "phrase-greeting", b"x")
    await store.remove("default", "alice")
    assert stored_ids(tmp_path) == set()  # audio, consent record and every asset are gone
    assert not (tmp_path / "assets" / voice.record.voice_id).exists()
    with pytest.raises(UnknownVoice):
        await store.get_asset("default", "alice", "phrase-greeting")


def test_orphaned_assets_are_cleaned_at_open(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path)
    asyncio.run(store.add(make_voice()))
    asyncio.run(store.put_asset("default", "alice", "phrase-hold", b"pcm"))
    orphan = tmp_path / "assets" / "0123456789abcdef"
    orphan.mkdir()
    (orphan / "phrase-hold").write_bytes(b"left behind by a crash")
    assert consistent(tmp_path)
    assert not orphan.exists()
    assert asyncio.run(FileVoiceStore(tmp_path).get_asset("default", "alice", "phrase-hold")) == b"pcm"


async def test_records_must_carry_consent_for_their_audio_and_tenant(tmp_path: Path) -> None:
    store = FileVoiceStore(tmp_path)
    voice = make_voice()
    wrong_audio = dataclasses.replace(voice.record.consent, audio_sha256="0" * 64)
    wrong_tenant = dataclasses.replace(voice.record.consent, tenant="acme")
    no_statement = dataclasses.replace(voice.record.consent, statement="  ")
    for consent in (wrong_audio, wrong_tenant, no_statement):
        with pytest.raises(ProviderError, match="consent"):
            await store.add(Voice(dataclasses.replace(voice.record, consent=consent), voice.wav))
    with pytest.raises(ProviderError, match="tenant"):
        await store.add(make_voice(tenant="Not A Tenant"))
    assert await store.list("default") == []


def write_v1_store(directory: Path, wav: bytes = b"RIFF-old-version") -> str:
    """A store as the version before tenants wrote it: registry version 1, consent a plain statement."""
    voice_id = "9f" * 16
    sha256 = hashlib.sha256(wav).hexdigest()
    record = {
        "name": "old", "voice_id": voice_id, "transcript": "Hi, I am old.", "language": "English",
        "consent": "I, Olga, agree to my voice being cloned.", "sha256": sha256, "duration_s": 5.0,
        "created_at": "2025-06-01T10:00:00+00:00",
    }  # fmt: skip
    for folder in ("audio", "consent"):
        (directory / folder).mkdir(parents=True)
    (directory / "audio" / f"{voice_id}.wav").write_bytes(wav)
    consent = {"voice_id": voice_id, "name": "old", "consent": record["consent"], "audio_sha256": sha256}
    (directory / "consent" / f"{voice_id}.json").write_text(json.dumps(consent))
    (directory / "registry.json").write_text(json.dumps({"version": 1, "voices": {"old": record}}))
    return sha256


async def test_a_store_written_by_the_previous_version_keeps_working(tmp_path: Path) -> None:
    sha256 = write_v1_store(tmp_path)
    store = FileVoiceStore(tmp_path)
    voice = await store.get("default", "old")
    assert voice.wav == b"RIFF-old-version" and voice.record.tenant == "default"
    assert voice.record.consent == ConsentRecord(
        statement="I, Olga, agree to my voice being cloned.",
        speaker="",
        consented_at="2025-06-01T10:00:00+00:00",
        audio_sha256=sha256,
        enrolled_by="migrated",
        tenant="default",
    )
    assert voice.record.consent.covers(voice.record.sha256, "default")
    assert await store.list("acme") == []
    with pytest.raises(UnknownVoice):
        await store.get("acme", "old")
    await store.add(make_voice("new"))  # the first change rewrites the registry as version 2
    registry = json.loads((tmp_path / "registry.json").read_text())
    assert registry["version"] == 2 and sorted(registry["tenants"]["default"]) == ["new", "old"]
    assert [r.name for r in await FileVoiceStore(tmp_path).list("default")] == ["new", "old"]
    assert (await store.get("default", "old")).record == voice.record
    await store.put_asset("default", "old", "phrase-apology", b"sorry")
    await store.remove("default", "old")
    assert stored_ids(tmp_path) == {make_voice("new").record.voice_id}


async def test_a_registry_from_a_newer_version_is_refused_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "registry.json").write_text(json.dumps({"version": 3, "tenants": {}}))
    with pytest.raises(ProviderError, match="version"):
        await FileVoiceStore(tmp_path).list("default")


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

    monkeypatch.setattr(os, target, wrapper)  # the module the store calls as ``os``
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
        asyncio.run(FileVoiceStore(directory).put_asset("default", "alice", "phrase-apology", b"pcm"))
        with monkeypatch.context() as m:
            _failing_at(m, target, n)
            with contextlib.suppress(Crash, ProviderError):
                asyncio.run(FileVoiceStore(directory).remove("default", "alice"))
        consistent(directory)  # asserts all-or-nothing, whichever it is


_KILLER = """
import asyncio, os, signal, sys
sys.path.insert(0, {root!r})
from agent.adapters import file_voice_store
from tests.component.test_file_voice_store import make_voice
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
