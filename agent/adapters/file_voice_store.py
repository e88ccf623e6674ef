"""``VoiceStore`` in a local directory, per tenant, safe against crashes and concurrent writers.

Layout (every file name is made by the server; tenants and voice names are only ever keys in the registry)::

    DIR/registry.json               {"version": 2, "tenants": {tenant: {name: record}}}  — the only source of truth
    DIR/audio/<voice_id>.wav        24 kHz mono PCM16 reference audio
    DIR/consent/<voice_id>.json     the consent record: who agreed to what, for which audio (sha256), when, by whom
    DIR/assets/<voice_id>/<key>     derived files (the voice's fixed phrases), keyed ``phrase-apology`` etc.
    DIR/.lock                       advisory lock (flock) serialising writers across threads and processes

A registry written by the previous version (``{"version": 1, "voices": {name: record}}``, consent a plain
statement) is read as tenant ``default`` with its statements migrated to consent records
(``agent.voices.records``); it is rewritten as version 2 on the next change.

Every file is written atomically: a temp file in the same directory, write, flush, fsync, ``os.replace``,
then fsync of the directory so the rename itself is durable. Enrollment writes the audio and the consent
record first and the registry entry last, so a voice is visible only when all of it is on disk; removal
deletes the registry entry first. Assets are written under the lock, only for a voice in the registry.
After a crash at any step the voice is either wholly there or absent: opening the store deletes stale
``*.tmp`` files and audio, consent and asset files that no registry entry names.
The guarantees are POSIX ones (Linux, macOS); Windows has no directory fsync or flock.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from agent.errors import ProviderError, UnknownVoice, VoiceExists
from agent.ports import Voice, VoiceRecord
from agent.security.auth import DEFAULT_TENANT, is_valid_tenant
from agent.voices.records import (
    check_asset_key,
    check_storable,
    consent_to_dict,
    is_valid_voice_id,
    lookup,
    record_from_dict,
    record_to_dict,
)

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

PROVIDER = "voice-store"
REGISTRY = "registry.json"
VERSION = 2
_TMP_SUFFIX = ".tmp"

Registry = dict[str, dict[str, dict[str, Any]]]
"""tenant → voice name → stored record."""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves either the old or the new file, whole."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}{_TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def parse_registry(raw: bytes) -> Registry:
    """The registry's tenants; a version 1 registry (no tenants) is tenant ``default``. Raises ``ValueError``."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("version", 1) == 1:
        voices = data["voices"]
        if not isinstance(voices, dict):
            raise ValueError("voices is not an object")
        tenants: Any = {DEFAULT_TENANT: voices} if voices else {}
    elif data.get("version") == VERSION:
        tenants = data["tenants"]
    else:
        raise ValueError(f"unknown registry version {str(data.get('version'))[:20]} (written by a newer server?)")
    if not isinstance(tenants, dict):
        raise ValueError("tenants is not an object")
    for tenant, voices in tenants.items():
        if not is_valid_tenant(tenant) or not isinstance(voices, dict):
            raise ValueError(f"bad tenant entry {str(tenant)[:80]!r}")
        if not all(isinstance(entry, dict) for entry in voices.values()):
            raise ValueError(f"tenant {tenant!r}: every voice must be an object")
    return tenants


class FileVoiceStore:
    """Voices in ``directory`` (created, with stale files cleaned, on first use)."""

    def __init__(self, directory: Path) -> None:
        self._dir = Path(directory).expanduser()
        self._audio = self._dir / "audio"
        self._consent = self._dir / "consent"
        self._assets = self._dir / "assets"
        self._registry = self._dir / REGISTRY
        self._thread_lock = threading.Lock()
        self._opened = False

    @property
    def directory(self) -> Path:
        return self._dir

    # ------------------------------------------------------------------------------------ the port

    async def add(self, voice: Voice) -> None:
        await self._call(self._add, voice)

    async def get(self, tenant: str, name: str) -> Voice:
        return await self._call(self._get, *lookup(tenant, name))

    async def list(self, tenant: str) -> list[VoiceRecord]:
        if not is_valid_tenant(tenant):
            return []
        return await self._call(self._list, tenant)

    async def remove(self, tenant: str, name: str) -> None:
        await self._call(self._remove, *lookup(tenant, name))

    async def put_asset(self, tenant: str, name: str, key: str, data: bytes) -> None:
        await self._call(self._put_asset, *lookup(tenant, name), check_asset_key(key), bytes(data))

    async def get_asset(self, tenant: str, name: str, key: str) -> bytes | None:
        return await self._call(self._get_asset, *lookup(tenant, name), check_asset_key(key))

    async def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except OSError as exc:
            raise ProviderError(PROVIDER, f"{self._dir}: {exc.strerror or exc}") from exc

    # ------------------------------------------------------------------------------- blocking parts

    def open(self) -> None:
        """Create the directories and clean up after a crash (idempotent; called by every operation)."""
        if self._opened:
            return
        for path in (self._dir, self._audio, self._consent, self._assets):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._locked():
            self._clean()
        self._opened = True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock:
            fd = os.open(self._dir / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing releases the flock

    def _clean(self) -> None:
        live = {str(entry.get("voice_id")) for voices in self._read_registry().values() for entry in voices.values()}
        removed = 0
        for folder, suffix in ((self._dir, None), (self._audio, ".wav"), (self._consent, ".json")):
            for path in folder.iterdir():
                stale = path.name.endswith(_TMP_SUFFIX)
                orphan = suffix is not None and path.suffix == suffix and path.stem not in live
                if path.is_file() and (stale or orphan):
                    path.unlink(missing_ok=True)
                    removed += 1
        for folder in self._assets.iterdir():
            if not folder.is_dir():
                continue
            orphan = folder.name not in live
            for path in folder.iterdir():
                if path.is_file() and (orphan or path.name.endswith(_TMP_SUFFIX)):
                    path.unlink(missing_ok=True)
                    removed += 1
            if orphan:
                with contextlib.suppress(OSError):
                    folder.rmdir()
        if removed:
            log.info("voice store %s: removed %d unfinished or orphaned files", self._dir, removed)

    def _read_registry(self) -> Registry:
        try:
            raw = self._registry.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            return parse_registry(raw)
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderError(PROVIDER, f"{self._registry} is not a valid registry: {exc}") from exc

    def _write_registry(self, tenants: Registry) -> None:
        live = {tenant: voices for tenant, voices in tenants.items() if voices}
        body = json.dumps({"version": VERSION, "tenants": live}, indent=2, sort_keys=True).encode()
        write_atomic(self._registry, body)

    def _add(self, voice: Voice) -> None:
        self.open()
        record = voice.record
        problem = check_storable(record)
        if problem is not None:
            raise ProviderError(PROVIDER, f"refusing to store voice {record.name!r}: {problem}")
        if hashlib.sha256(voice.wav).hexdigest() != record.sha256:
            raise ProviderError(PROVIDER, "the record's sha256 does not match the audio")
        with self._locked():
            tenants = self._read_registry()
            if record.name in tenants.get(record.tenant, {}):
                raise VoiceExists(record.name)
            write_atomic(self._audio / f"{record.voice_id}.wav", voice.wav)
            consent = {"voice_id": record.voice_id, "name": record.name, **consent_to_dict(record.consent)}
            write_atomic(self._consent / f"{record.voice_id}.json", json.dumps(consent, indent=2).encode())
            tenants.setdefault(record.tenant, {})[record.name] = record_to_dict(record)
            self._write_registry(tenants)  # the commit point: the voice exists from here on

    def _entry(self, tenant: str, name: str) -> VoiceRecord:
        entry = self._read_registry().get(tenant, {}).get(name)
        if entry is None:
            raise UnknownVoice(name)
        try:
            record = record_from_dict(entry)
        except ValueError as exc:
            raise ProviderError(PROVIDER, f"voice {name!r}: {exc}") from exc
        if record.tenant != tenant or record.name != name or not is_valid_voice_id(record.voice_id):
            raise ProviderError(PROVIDER, f"voice {name!r}: the record does not match its registry key")
        return record

    def _get(self, tenant: str, name: str) -> Voice:
        self.open()
        record = self._entry(tenant, name)
        try:
            wav = (self._audio / f"{record.voice_id}.wav").read_bytes()
        except FileNotFoundError:
            self._entry(tenant, name)  # removed meanwhile → UnknownVoice; otherwise the store is damaged
            raise ProviderError(PROVIDER, f"the audio of voice {name!r} is missing") from None
        if hashlib.sha256(wav).hexdigest() != record.sha256:
            raise ProviderError(PROVIDER, f"the audio of voice {name!r} does not match its checksum")
        return Voice(record, wav)

    def _list(self, tenant: str) -> builtins.list[VoiceRecord]:
        self.open()
        return [self._entry(tenant, name) for name in sorted(self._read_registry().get(tenant, {}))]

    def _remove(self, tenant: str, name: str) -> None:
        self.open()
        with self._locked():
            tenants = self._read_registry()
            entry = tenants.get(tenant, {}).pop(name, None)
            if entry is None:
                raise UnknownVoice(name)
            self._write_registry(tenants)  # unusable from here on; the files below are leftovers
            voice_id = str(entry.get("voice_id", ""))
            if is_valid_voice_id(voice_id):
                (self._consent / f"{voice_id}.json").unlink(missing_ok=True)
                (self._audio / f"{voice_id}.wav").unlink(missing_ok=True)
                self._remove_assets(voice_id)
                _fsync_dir(self._consent)
                _fsync_dir(self._audio)

    def _remove_assets(self, voice_id: str) -> None:
        folder = self._assets / voice_id
        if not folder.is_dir():
            return
        for path in folder.iterdir():
            path.unlink(missing_ok=True)
        folder.rmdir()
        _fsync_dir(self._assets)

    def _put_asset(self, tenant: str, name: str, key: str, data: bytes) -> None:
        self.open()
        with self._locked():  # a concurrent remove cannot leave this asset behind
            record = self._entry(tenant, name)
            folder = self._assets / record.voice_id
            if not folder.is_dir():
                folder.mkdir(mode=0o700)
                _fsync_dir(self._assets)
            write_atomic(folder / key, data)

    def _get_asset(self, tenant: str, name: str, key: str) -> bytes | None:
        self.open()
        record = self._entry(tenant, name)
        try:
            return (self._assets / record.voice_id / key).read_bytes()
        except FileNotFoundError:
            self._entry(tenant, name)  # removed meanwhile → UnknownVoice
            return None
