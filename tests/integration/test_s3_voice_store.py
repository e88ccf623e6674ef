"""The S3 voice store against moto's S3 server on loopback (dummy credentials, ``endpoint_url``): round trips,
tenants, assets, removal of everything, and buckets written by the previous version."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator

import pytest

from agent.adapters.s3_voice_store import S3VoiceStore
from agent.errors import ProviderError, UnknownVoice, VoiceExists
from agent.ports import ConsentRecord, Voice, VoiceRecord
from testing.s3 import Forwarded, S3Proxy, make_bucket, object_keys, put_object, s3_server

BUCKET = "voices-test"


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    with s3_server() as url:
        yield url


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """The test's own corner of the bucket."""
    return f"t-{request.node.name[:40]}/"


@pytest.fixture
def store(s3_url: str, prefix: str, monkeypatch: pytest.MonkeyPatch) -> S3VoiceStore:
    for key, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    make_bucket(s3_url, BUCKET)
    return S3VoiceStore(BUCKET, prefix, "us-east-1", s3_url)


def make_voice(name: str, wav: bytes = b"RIFF-fake", tenant: str = "default") -> Voice:
    sha256 = hashlib.sha256(wav).hexdigest()
    consent = ConsentRecord("I agree.", "Al", "2026-01-01T00:00:00+00:00", sha256, "cli", tenant)
    record = VoiceRecord(
        name, hashlib.md5(tenant.encode() + name.encode() + wav).hexdigest(), "Hi.", "English", consent,
        sha256, 3.5, "2026-01-01T00:00:00+00:00", tenant,
    )  # fmt: skip
    return Voice(record, wav)


def test_round_trip(store: S3VoiceStore) -> None:
    async def scenario() -> None:
        voice = make_voice("alice")
        await store.add(voice)
        await store.add(make_voice("bob"))
        assert await store.get("default", "Alice") == voice
        assert [r.name for r in await store.list("default")] == ["alice", "bob"]
        with pytest.raises(VoiceExists):
            await store.add(make_voice("alice"))
        await store.remove("default", "alice")
        with pytest.raises(UnknownVoice):
            await store.get("default", "alice")
        with pytest.raises(UnknownVoice):
            await store.remove("default", "alice")
        with pytest.raises(UnknownVoice):
            await store.get("default", "../bob")
        assert [r.name for r in await store.list("default")] == ["bob"]

    asyncio.run(scenario())


def test_a_replica_that_checked_too_early_cannot_overwrite_a_voice(
    store: S3VoiceStore, s3_url: str, prefix: str
) -> None:
    """Replica B checked that the name was free before replica A committed it: B's conditional PUT fails.

    A proxy in front of B holds B's first upload, made after its check, until A has added the voice. (One after
    the other: moto's server does not make concurrent conditional PUTs atomic; S3 does.)
    """
    first, second = make_voice("same", b"A" * 10), make_voice("same", b"B" * 10)
    registry = f"/{BUCKET}/{prefix}registry/same.json"

    async def scenario() -> None:
        async with S3Proxy(s3_url) as proxy:
            late = S3VoiceStore(BUCKET, prefix, "us-east-1", proxy.url)
            proxy.before("PUT", f"audio/{second.record.voice_id}.wav", lambda: store.add(first))
            with pytest.raises(VoiceExists):
                await late.add(second)
        assert proxy.fired == 1, proxy.forwarded  # B had checked (and found the name free) before A added it
        assert Forwarded("PUT", registry, 412) in proxy.forwarded, proxy.forwarded  # the conditional PUT said no
        assert await store.get("default", "same") == first  # the winner's audio and record are intact
        assert not [key for key in await object_keys(s3_url, BUCKET, prefix) if second.record.voice_id in key]

    asyncio.run(scenario())


def test_an_unreachable_store_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    dead = S3VoiceStore(BUCKET, "x/", "us-east-1", "http://127.0.0.1:9")
    with pytest.raises(ProviderError):
        asyncio.run(dead.list("default"))


def test_other_tenants_voices_are_invisible(store: S3VoiceStore) -> None:
    async def scenario() -> None:
        mine, theirs = make_voice("alice", tenant="acme"), make_voice("alice", b"other", tenant="globex")
        await store.add(mine)
        await store.add(theirs)
        await store.add(make_voice("dee"))
        await store.put_asset("acme", "alice", "phrase-apology", b"acme-sorry")
        assert await store.list("acme") == [mine.record] and await store.list("globex") == [theirs.record]
        assert [r.name for r in await store.list("default")] == ["dee"]  # other tenants are not in the default's
        assert await store.list("initech") == [] and await store.list("../acme") == []
        for tenant in ("default", "initech", "ACME", "../acme"):
            for call in (
                store.get(tenant, "alice"),
                store.remove(tenant, "alice"),
                store.get_asset(tenant, "alice", "phrase-apology"),
                store.put_asset(tenant, "alice", "phrase-apology", b"x"),
            ):
                with pytest.raises(UnknownVoice):
                    await call
        assert await store.get_asset("globex", "alice", "phrase-apology") is None
        await store.remove("globex", "alice")
        assert await store.get("acme", "alice") == mine
        assert await store.get_asset("acme", "alice", "phrase-apology") == b"acme-sorry"

    asyncio.run(scenario())


def test_remove_deletes_audio_consent_and_every_asset(store: S3VoiceStore, s3_url: str, prefix: str) -> None:
    async def scenario() -> None:
        keep = make_voice("keep", b"keep-audio", tenant="acme")
        await store.add(keep)
        before = await object_keys(s3_url, BUCKET, prefix)
        voice = make_voice("gone", b"gone-audio", tenant="acme")
        await store.add(voice)
        for key in ("phrase-apology", "phrase-greeting", "phrase-idle_prompt"):
            await store.put_asset("acme", "gone", key, key.encode())
        assert await store.get_asset("acme", "GONE", "phrase-greeting") == b"phrase-greeting"
        with pytest.raises(ValueError, match="asset key"):
            await store.put_asset("acme", "gone", "../registry/keep.json", b"x")
        assert (
            len(await object_keys(s3_url, BUCKET, prefix)) == len(before) + 6
        )  # audio, consent, registry, three assets
        await store.remove("acme", "gone")
        assert await object_keys(s3_url, BUCKET, prefix) == before
        assert await store.get("acme", "keep") == keep

    asyncio.run(scenario())


def test_a_bucket_written_by_the_previous_version_keeps_working(store: S3VoiceStore, s3_url: str, prefix: str) -> None:
    """Before tenants: ``registry/<name>.json`` with ``consent`` a plain statement and no ``tenant``."""
    wav = b"RIFF-from-the-old-version"
    sha256, voice_id = hashlib.sha256(wav).hexdigest(), "ab" * 16
    record = {
        "name": "old", "voice_id": voice_id, "transcript": "Hi.", "language": "English",
        "consent": "I, Olga, agree.", "sha256": sha256, "duration_s": 4.0, "created_at": "2025-06-01T10:00:00+00:00",
    }  # fmt: skip

    async def scenario() -> None:
        for key, body in (  # the previous version's layout, as it wrote it
            (f"{prefix}audio/{voice_id}.wav", wav),
            (f"{prefix}consent/{voice_id}.json", json.dumps({"consent": "I, Olga, agree."}).encode()),
            (f"{prefix}registry/old.json", json.dumps(record).encode()),
        ):
            await put_object(s3_url, BUCKET, key, body)
        voice = await store.get("default", "old")
        assert voice.wav == wav and voice.record.tenant == "default"
        assert voice.record.consent == ConsentRecord(
            "I, Olga, agree.", "", "2025-06-01T10:00:00+00:00", sha256, "migrated", "default"
        )
        assert [r.name for r in await store.list("default")] == ["old"]
        assert await store.list("acme") == []
        with pytest.raises(UnknownVoice):
            await store.get("acme", "old")
        with pytest.raises(VoiceExists):
            await store.add(make_voice("old"))
        await store.put_asset("default", "old", "phrase-hold", b"hold")
        await store.remove("default", "old")
        assert await object_keys(s3_url, BUCKET, prefix) == []

    asyncio.run(scenario())
