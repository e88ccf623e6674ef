"""``VoiceStore`` in an S3 bucket, for servers that share voices across replicas (aiobotocore).

Keys under ``prefix`` (file names made by the server; a voice name is only used as a registry key)::

    PREFIX/audio/<voice_id>.wav       24 kHz mono PCM16 reference audio
    PREFIX/consent/<voice_id>.json    the consent record
    PREFIX/registry/<name>.json       the voice's record — written last; a voice exists iff this exists

One registry object per voice (rather than one shared JSON) means replicas never read-modify-write the
same object. A PUT is atomic in S3; the registry PUT is conditional (``If-None-Match: *``), so two replicas
enrolling the same name cannot both win. Removal deletes the registry object first. A crash between PUTs
leaves unreferenced audio/consent objects, never a half voice; a bucket lifecycle rule can expire them.

A client is made per call: it costs a few milliseconds next to the PUTs, and the store is then not tied
to one event loop. Credentials come from the usual AWS chain.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiobotocore.session import get_session
from botocore.exceptions import BotoCoreError, ClientError

from agent.enrollment import normalize_name, record_from_dict, record_to_dict
from agent.errors import EnrollmentRejected, ProviderError, UnknownVoice, VoiceExists
from agent.ports import Voice, VoiceRecord

PROVIDER = "s3-voice-store"
_MISSING = ("NoSuchKey", "404", "NotFound")


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class S3VoiceStore:
    def __init__(
        self, bucket: str, prefix: str = "voices/", region: str | None = None, endpoint_url: str | None = None
    ):
        self._bucket = bucket
        self._prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        self._region = region or None
        self._endpoint_url = endpoint_url or None
        self._session = get_session()

    def _key(self, *parts: str) -> str:
        return self._prefix + "/".join(parts)

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Any]:
        try:
            async with self._session.create_client(
                "s3", region_name=self._region, endpoint_url=self._endpoint_url
            ) as client:
                yield client
        except (UnknownVoice, VoiceExists):
            raise
        except ClientError as exc:
            raise ProviderError(PROVIDER, f"{_code(exc)}: {exc}") from exc
        except BotoCoreError as exc:
            raise ProviderError(PROVIDER, str(exc)) from exc

    async def _read(self, client: Any, key: str) -> bytes | None:
        try:
            response = await client.get_object(Bucket=self._bucket, Key=key)
        except ClientError as exc:
            if _code(exc) in _MISSING:
                return None
            raise
        async with response["Body"] as body:
            data: bytes = await body.read()
        return data

    async def add(self, voice: Voice) -> None:
        record = voice.record
        if normalize_name(record.name) != record.name or not record.voice_id.isalnum():
            raise ProviderError(PROVIDER, f"refusing a record with a non-canonical name or id: {record.name!r}")
        consent = {
            "voice_id": record.voice_id,
            "name": record.name,
            "consent": record.consent,
            "audio_sha256": record.sha256,
            "created_at": record.created_at,
        }
        async with self._client() as client:
            registry = self._key("registry", f"{record.name}.json")
            if await self._read(client, registry) is not None:
                raise VoiceExists(record.name)
            await client.put_object(
                Bucket=self._bucket, Key=self._key("audio", f"{record.voice_id}.wav"), Body=voice.wav,
                ContentType="audio/wav",
            )  # fmt: skip
            await client.put_object(
                Bucket=self._bucket, Key=self._key("consent", f"{record.voice_id}.json"),
                Body=json.dumps(consent).encode(), ContentType="application/json",
            )  # fmt: skip
            try:
                await client.put_object(
                    Bucket=self._bucket, Key=registry, Body=json.dumps(record_to_dict(record)).encode(),
                    ContentType="application/json", IfNoneMatch="*",
                )  # fmt: skip
            except ClientError as exc:
                if _code(exc) in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                    await self._delete_files(client, record.voice_id)
                    raise VoiceExists(record.name) from None
                raise

    async def _record(self, client: Any, name: str) -> VoiceRecord:
        raw = await self._read(client, self._key("registry", f"{name}.json"))
        if raw is None:
            raise UnknownVoice(name)
        try:
            return record_from_dict(json.loads(raw))
        except ValueError as exc:
            raise ProviderError(PROVIDER, f"voice {name!r}: {exc}") from exc

    async def get(self, name: str) -> Voice:
        key = _name(name)
        async with self._client() as client:
            record = await self._record(client, key)
            wav = await self._read(client, self._key("audio", f"{record.voice_id}.wav"))
        if wav is None:
            raise ProviderError(PROVIDER, f"the audio of voice {key!r} is missing")
        if hashlib.sha256(wav).hexdigest() != record.sha256:
            raise ProviderError(PROVIDER, f"the audio of voice {key!r} does not match its checksum")
        return Voice(record, wav)

    async def list(self) -> list[VoiceRecord]:
        async with self._client() as client:
            names: list[str] = []
            paginator = client.get_paginator("list_objects_v2")
            async for page in paginator.paginate(Bucket=self._bucket, Prefix=self._key("registry", "")):
                for item in page.get("Contents", []):
                    stem = str(item["Key"]).rsplit("/", 1)[-1].removesuffix(".json")
                    names.append(stem)
            results = await asyncio.gather(*(self._record(client, n) for n in names), return_exceptions=True)
        records: list[VoiceRecord] = []
        for result in results:
            if isinstance(result, VoiceRecord):
                records.append(result)
            elif not isinstance(result, UnknownVoice):  # removed meanwhile: skip
                raise result
        return sorted(records, key=lambda r: r.name)

    async def remove(self, name: str) -> None:
        key = _name(name)
        async with self._client() as client:
            record = await self._record(client, key)
            await client.delete_object(Bucket=self._bucket, Key=self._key("registry", f"{key}.json"))
            await self._delete_files(client, record.voice_id)

    async def _delete_files(self, client: Any, voice_id: str) -> None:
        for key in (self._key("consent", f"{voice_id}.json"), self._key("audio", f"{voice_id}.wav")):
            await client.delete_object(Bucket=self._bucket, Key=key)


def _name(name: str) -> str:
    try:
        return normalize_name(name)
    except EnrollmentRejected:
        raise UnknownVoice(name) from None
