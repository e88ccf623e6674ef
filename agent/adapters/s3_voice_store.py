"""``VoiceStore`` in an S3 bucket, per tenant, for servers that share voices across replicas (aiobotocore).

Keys under ``prefix`` (object names made by the server; tenants and voice names are only used as registry keys)::

    PREFIX/audio/<voice_id>.wav                   24 kHz mono PCM16 reference audio
    PREFIX/consent/<voice_id>.json                the consent record
    PREFIX/assets/<voice_id>/<key>                derived files (the voice's fixed phrases)
    PREFIX/registry/<name>.json                   a voice of tenant ``default``: written last, it exists iff this does
    PREFIX/tenants/<tenant>/registry/<name>.json  a voice of any other tenant, likewise

Tenant ``default`` keeps the previous version's registry keys, so a bucket written before tenants existed is
used as is (its records' plain consent statements are migrated when read, see ``agent.voices.records``) and
replicas in the middle of an upgrade agree on the default tenant's voices.

One registry object per voice (rather than one shared JSON) means replicas never read-modify-write the
same object. A PUT is atomic in S3; the registry PUT is conditional (``If-None-Match: *``), so two replicas
enrolling the same name cannot both win. Removal deletes the registry object first, then the audio, the
consent record and every asset. A crash between PUTs leaves unreferenced objects, never a half voice; a
bucket lifecycle rule can expire them. An asset PUT re-checks its voice afterwards and deletes itself if
the voice was removed meanwhile.

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

    def _registry(self, tenant: str, name: str = "") -> str:
        """The registry key of ``name`` in ``tenant`` (with ``name`` empty: the prefix of the tenant's registry)."""
        leaf = f"{name}.json" if name else ""
        if tenant == DEFAULT_TENANT:
            return self._key("registry", leaf)
        return self._key("tenants", tenant, "registry", leaf)

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

    async def _keys(self, client: Any, prefix: str) -> list[str]:
        keys: list[str] = []
        paginator = client.get_paginator("list_objects_v2")
        async for page in paginator.paginate(Bucket=self._bucket, Prefix=prefix):
            keys.extend(str(item["Key"]) for item in page.get("Contents", []))
        return keys

    # ------------------------------------------------------------------------------------ the port

    async def add(self, voice: Voice) -> None:
        record = voice.record
        problem = check_storable(record)
        if problem is not None:
            raise ProviderError(PROVIDER, f"refusing to store voice {record.name!r}: {problem}")
        consent = {"voice_id": record.voice_id, "name": record.name, **consent_to_dict(record.consent)}
        async with self._client() as client:
            registry = self._registry(record.tenant, record.name)
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

    async def _record(self, client: Any, tenant: str, name: str) -> VoiceRecord:
        raw = await self._read(client, self._registry(tenant, name))
        if raw is None:
            raise UnknownVoice(name)
        try:
            record = record_from_dict(json.loads(raw))
        except ValueError as exc:
            raise ProviderError(PROVIDER, f"voice {name!r}: {exc}") from exc
        if record.tenant != tenant or record.name != name or not is_valid_voice_id(record.voice_id):
            raise ProviderError(PROVIDER, f"voice {name!r}: the record does not match its registry key")
        return record

    async def get(self, tenant: str, name: str) -> Voice:
        tenant, key = lookup(tenant, name)
        async with self._client() as client:
            record = await self._record(client, tenant, key)
            wav = await self._read(client, self._key("audio", f"{record.voice_id}.wav"))
        if wav is None:
            raise ProviderError(PROVIDER, f"the audio of voice {key!r} is missing")
        if hashlib.sha256(wav).hexdigest() != record.sha256:
            raise ProviderError(PROVIDER, f"the audio of voice {key!r} does not match its checksum")
        return Voice(record, wav)

    async def list(self, tenant: str) -> list[VoiceRecord]:
        if not is_valid_tenant(tenant):
            return []
        prefix = self._registry(tenant)
        async with self._client() as client:
            keys = await self._keys(client, prefix)
            names = [k.removeprefix(prefix).removesuffix(".json") for k in keys if "/" not in k.removeprefix(prefix)]
            results = await asyncio.gather(*(self._record(client, tenant, n) for n in names), return_exceptions=True)
        records: list[VoiceRecord] = []
        for result in results:
            if isinstance(result, VoiceRecord):
                records.append(result)
            elif not isinstance(result, UnknownVoice):  # removed meanwhile: skip
                raise result
        return sorted(records, key=lambda r: r.name)

    async def remove(self, tenant: str, name: str) -> None:
        tenant, key = lookup(tenant, name)
        async with self._client() as client:
            record = await self._record(client, tenant, key)
            await client.delete_object(Bucket=self._bucket, Key=self._registry(tenant, key))
            await self._delete_files(client, record.voice_id)

    async def put_asset(self, tenant: str, name: str, key: str, data: bytes) -> None:
        tenant, voice = lookup(tenant, name)
        asset = check_asset_key(key)
        async with self._client() as client:
            record = await self._record(client, tenant, voice)
            object_key = self._key("assets", record.voice_id, asset)
            await client.put_object(Bucket=self._bucket, Key=object_key, Body=bytes(data))
            try:
                await self._record(client, tenant, voice)
            except UnknownVoice:  # removed while this PUT was in flight: leave nothing behind
                await client.delete_object(Bucket=self._bucket, Key=object_key)
                raise

    async def get_asset(self, tenant: str, name: str, key: str) -> bytes | None:
        tenant, voice = lookup(tenant, name)
        asset = check_asset_key(key)
        async with self._client() as client:
            record = await self._record(client, tenant, voice)
            return await self._read(client, self._key("assets", record.voice_id, asset))

    async def _delete_files(self, client: Any, voice_id: str) -> None:
        keys = [self._key("consent", f"{voice_id}.json"), self._key("audio", f"{voice_id}.wav")]
        keys += await self._keys(client, self._key("assets", voice_id, ""))
        for key in keys:
            await client.delete_object(Bucket=self._bucket, Key=key)
