"""``VoiceStore`` in a local directory, safe against crashes and concurrent writers.

Layout (every file name is made by the server; a voice name is only ever a key in the registry)::

    DIR/registry.json            {"version": 1, "voices": {name: record}}  — the only source of truth
    DIR/audio/<voice_id>.wav     24 kHz mono PCM16 reference audio
    DIR/consent/<voice_id>.json  the consent record: who agreed to what, for which audio (sha256), when
    DIR/.lock                    advisory lock (flock) serialising writers across threads and processes

Every file is written atomically: a temp file in the same directory, write, flush, fsync, ``os.replace``,
then fsync of the directory so the rename itself is durable. Enrollment writes the audio and the consent
record first and the registry entry last, so a voice is visible only when all of it is on disk; removal
deletes the registry entry first. After a crash at any step the voice is either wholly there or absent:
opening the store deletes stale ``*.tmp`` files and audio/consent files that no registry entry names.
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

from agent.enrollment import normalize_name, record_from_dict, record_to_dict
from agent.errors import EnrollmentRejected, ProviderError, UnknownVoice, VoiceExists
from agent.ports import Voice, VoiceRecord

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

PROVIDER = "voice-store"
REGISTRY = "registry.json"
_TMP_SUFFIX = ".tmp"


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


def _voice_name(name: str) -> str:
    try:
        return normalize_name(name)
    except EnrollmentRejected:
        raise UnknownVoice(name) from None


class FileVoiceStore:
    """Voices in ``directory`` (created, with stale files cleaned, on first use)."""

    def __init__(self, directory: Path) -> None:
        self._dir = Path(directory).expanduser()
        self._audio = self._dir / "audio"
        self._consent = self._dir / "consent"
        self._registry = self._dir / REGISTRY
        self._thread_lock = threading.Lock()
        self._opened = False

    @property
    def directory(self) -> Path:
        return self._dir

    # ------------------------------------------------------------------------------------ the port

    async def add(self, voice: Voice) -> None:
        await self._call(self._add, voice)

    async def get(self, name: str) -> Voice:
        return await self._call(self._get, _voice_name(name))

    async def list(self) -> list[VoiceRecord]:
        return await self._call(self._list)

    async def remove(self, name: str) -> None:
        await self._call(self._remove, _voice_name(name))

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
        for path in (self._dir, self._audio, self._consent):
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
        entries = self._read_registry()
        live = {str(record["voice_id"]) for record in entries.values()}
        removed = 0
        for folder, suffix in ((self._dir, None), (self._audio, ".wav"), (self._consent, ".json")):
            for path in folder.iterdir():
                stale = path.name.endswith(_TMP_SUFFIX)
                orphan = suffix is not None and path.suffix == suffix and path.stem not in live
                if path.is_file() and (stale or orphan):
                    path.unlink(missing_ok=True)
                    removed += 1
        if removed:
            log.info("voice store %s: removed %d unfinished or orphaned files", self._dir, removed)

    def _read_registry(self) -> dict[str, dict[str, Any]]:
        try:
            raw = self._registry.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
            voices = data["voices"]
            if not isinstance(voices, dict):
                raise TypeError("voices is not an object")
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderError(PROVIDER, f"{self._registry} is not a valid registry: {exc}") from exc
        return voices

    def _write_registry(self, entries: dict[str, dict[str, Any]]) -> None:
        body = json.dumps({"version": 1, "voices": entries}, indent=2, sort_keys=True).encode()
        write_atomic(self._registry, body)

    def _add(self, voice: Voice) -> None:
        self.open()
        record = voice.record
        if normalize_name(record.name) != record.name or not record.voice_id.isalnum():
            raise ProviderError(PROVIDER, f"refusing a record with a non-canonical name or id: {record.name!r}")
        if hashlib.sha256(voice.wav).hexdigest() != record.sha256:
            raise ProviderError(PROVIDER, "the record's sha256 does not match the audio")
        with self._locked():
            entries = self._read_registry()
            if record.name in entries:
                raise VoiceExists(record.name)
            write_atomic(self._audio / f"{record.voice_id}.wav", voice.wav)
            consent = {
                "voice_id": record.voice_id,
                "name": record.name,
                "consent": record.consent,
                "audio_sha256": record.sha256,
                "created_at": record.created_at,
            }
            write_atomic(self._consent / f"{record.voice_id}.json", json.dumps(consent, indent=2).encode())
            entries[record.name] = record_to_dict(record)
            self._write_registry(entries)  # the commit point: the voice exists from here on

    def _record(self, name: str) -> VoiceRecord:
        entry = self._read_registry().get(name)
        if entry is None:
            raise UnknownVoice(name)
        try:
            return record_from_dict(entry)
        except ValueError as exc:
            raise ProviderError(PROVIDER, f"voice {name!r}: {exc}") from exc

    def _get(self, name: str) -> Voice:
        self.open()
        record = self._record(name)
        try:
            wav = (self._audio / f"{record.voice_id}.wav").read_bytes()
        except FileNotFoundError:
            self._record(name)  # removed meanwhile → UnknownVoice; otherwise the store is damaged
            raise ProviderError(PROVIDER, f"the audio of voice {name!r} is missing") from None
        if hashlib.sha256(wav).hexdigest() != record.sha256:
            raise ProviderError(PROVIDER, f"the audio of voice {name!r} does not match its checksum")
        return Voice(record, wav)

    def _list(self) -> builtins.list[VoiceRecord]:
        self.open()
        return [self._record(name) for name in sorted(self._read_registry())]

    def _remove(self, name: str) -> None:
        self.open()
        with self._locked():
            entries = self._read_registry()
            entry = entries.pop(name, None)
            if entry is None:
                raise UnknownVoice(name)
            self._write_registry(entries)  # unusable from here on; the files below are leftovers
            voice_id = str(entry.get("voice_id", ""))
            if voice_id.isalnum():
                (self._consent / f"{voice_id}.json").unlink(missing_ok=True)
                (self._audio / f"{voice_id}.wav").unlink(missing_ok=True)
                _fsync_dir(self._consent)
                _fsync_dir(self._audio)
