"""The S3 voice store against moto's S3 server on loopback (dummy credentials, ``endpoint_url``)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator

import pytest

from agent.adapters.s3_voice_store import S3VoiceStore
from agent.errors import ProviderError, UnknownVoice, VoiceExists
from agent.ports import Voice, VoiceRecord

BUCKET = "voices-test"


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def store(s3_url: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> S3VoiceStore:
    for key, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    s3 = S3VoiceStore(BUCKET, f"t-{request.node.name[:40]}/", "us-east-1", s3_url)

    async def create() -> None:
        async with s3._client() as client:
            try:
                await client.create_bucket(Bucket=BUCKET)
            except Exception as exc:  # already made by an earlier test
                if "BucketAlreadyOwnedByYou" not in str(exc):
                    raise

    asyncio.run(create())
    return s3


def make_voice(name: str, wav: bytes = b"RIFF-fake") -> Voice:
    record = VoiceRecord(
        name, hashlib.md5(name.encode() + wav).hexdigest(), "Hi.", "English", "I agree.",
        hashlib.sha256(wav).hexdigest(), 3.5, "2026-01-01T00:00:00+00:00",
    )  # fmt: skip
    return Voice(record, wav)


def test_round_trip(store: S3VoiceStore) -> None:
    async def scenario() -> None:
        voice = make_voice("alice")
        await store.add(voice)
        await store.add(make_voice("bob"))
        assert await store.get("Alice") == voice
        assert [r.name for r in await store.list()] == ["alice", "bob"]
        with pytest.raises(VoiceExists):
            await store.add(make_voice("alice"))
        await store.remove("alice")
        with pytest.raises(UnknownVoice):
            await store.get("alice")
        with pytest.raises(UnknownVoice):
            await store.remove("alice")
        with pytest.raises(UnknownVoice):
            await store.get("../bob")
        assert [r.name for r in await store.list()] == ["bob"]

    asyncio.run(scenario())


def test_a_replica_that_checked_too_early_cannot_overwrite_a_voice(
    store: S3VoiceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replica B checked that the name was free before replica A committed it: B's conditional PUT fails.

    (Run one after the other: moto's server does not make concurrent conditional PUTs atomic; S3 does.)
    """
    first, second = make_voice("same", b"A" * 10), make_voice("same", b"B" * 10)
    asyncio.run(store.add(first))
    real_read = store._read

    async def stale_read(client: object, key: str) -> bytes | None:
        return None if key.endswith("registry/same.json") else await real_read(client, key)

    with monkeypatch.context() as m, pytest.raises(VoiceExists):
        m.setattr(store, "_read", stale_read)
        asyncio.run(store.add(second))
    assert asyncio.run(store.get("same")) == first  # the winner's audio and record are intact


def test_an_unreachable_store_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    dead = S3VoiceStore(BUCKET, "x/", "us-east-1", "http://127.0.0.1:9")
    with pytest.raises(ProviderError):
        asyncio.run(dead.list())
