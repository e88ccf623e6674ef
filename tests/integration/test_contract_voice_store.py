"""The ``VoiceStore`` contract, run against every adapter: the file store (a directory under ``tmp_path``) and the
S3 store (moto's S3 server on loopback, a prefix of its own per test).

What every store does: a voice added under its tenant is got, listed and removed by that tenant, names compared
without case; a name is unique per tenant only, and another tenant's voice is indistinguishable from none
(``UnknownVoice``); a voice that is not there is ``UnknownVoice`` for every call that names it; assets round-trip,
are replaced in place, are ``None`` until stored and go with their voice.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.s3_voice_store import S3VoiceStore
from agent.errors import UnknownVoice, VoiceExists
from agent.ports import ConsentRecord, Voice, VoiceRecord, VoiceStore
from testing.s3 import make_bucket, s3_server

BUCKET = "voices-contract"
STORES = ["file", "s3"]
_prefixes = itertools.count()


def make_voice(name: str, wav: bytes = b"RIFF-fake-wav", tenant: str = "default") -> Voice:
    sha256 = hashlib.sha256(wav).hexdigest()
    consent = ConsentRecord(
        "I agree to have my voice cloned.", "Al", "2026-01-01T00:00:00+00:00", sha256, "cli", tenant
    )
    voice_id = hashlib.md5(tenant.encode() + b"/" + name.encode() + wav).hexdigest()
    record = VoiceRecord(
        name, voice_id, "Hello there.", "English", consent, sha256, 3.5, "2026-01-01T00:00:00+00:00", tenant
    )
    return Voice(record, wav)


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    with s3_server() as url:
        yield url


@pytest.fixture
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[VoiceStore]:
    if request.param == "file":
        yield FileVoiceStore(tmp_path / "voices")
        return
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    url: str = request.getfixturevalue("s3_url")
    await asyncio.to_thread(make_bucket, url, BUCKET)
    yield S3VoiceStore(BUCKET, f"contract-{next(_prefixes)}-{request.node.name[:30]}/", "us-east-1", url)


async def _unknown(call: Awaitable[object]) -> None:
    with pytest.raises(UnknownVoice):
        await call


@pytest.mark.parametrize("store", STORES, indirect=True)
async def test_save_load_list_remove(store: VoiceStore) -> None:
    alice, bob = make_voice("alice"), make_voice("bob", b"bob-audio")
    await store.add(alice)
    await store.add(bob)
    assert await store.get("default", "alice") == alice
    assert await store.get("default", "ALICE") == alice  # names compare without case
    assert [record.name for record in await store.list("default")] == ["alice", "bob"]
    with pytest.raises(VoiceExists):
        await store.add(make_voice("alice", b"another-take"))
    await store.remove("default", "alice")
    await _unknown(store.get("default", "alice"))
    assert await store.list("default") == [bob.record]


@pytest.mark.parametrize("store", STORES, indirect=True)
async def test_a_missing_voice_is_unknown_to_every_call(store: VoiceStore) -> None:
    assert await store.list("default") == []
    await _unknown(store.get("default", "nobody"))
    await _unknown(store.remove("default", "nobody"))
    await _unknown(store.put_asset("default", "nobody", "phrase-greeting", b"x"))
    await _unknown(store.get_asset("default", "nobody", "phrase-greeting"))
    await _unknown(store.get("default", "../nobody"))


@pytest.mark.parametrize("store", STORES, indirect=True)
async def test_tenants_are_isolated(store: VoiceStore) -> None:
    mine, theirs = make_voice("alice", tenant="acme"), make_voice("alice", b"other-audio", tenant="globex")
    await store.add(mine)
    await store.add(theirs)  # the same name in another tenant
    await store.put_asset("acme", "alice", "phrase-apology", b"acme-sorry")
    assert await store.list("acme") == [mine.record]
    assert await store.list("globex") == [theirs.record]
    assert await store.list("default") == []
    assert await store.get_asset("globex", "alice", "phrase-apology") is None
    for tenant in ("default", "initech", "ACME"):
        await _unknown(store.get(tenant, "alice"))
        await _unknown(store.remove(tenant, "alice"))
        await _unknown(store.get_asset(tenant, "alice", "phrase-apology"))
    await store.remove("globex", "alice")
    assert await store.get("acme", "alice") == mine  # untouched by the other tenant's removal
    assert await store.get_asset("acme", "alice", "phrase-apology") == b"acme-sorry"


@pytest.mark.parametrize("store", STORES, indirect=True)
async def test_assets_round_trip_and_go_with_their_voice(store: VoiceStore) -> None:
    await store.add(make_voice("alice"))
    assert await store.get_asset("default", "alice", "phrase-greeting") is None
    await store.put_asset("default", "alice", "phrase-greeting", b"hello-pcm")
    await store.put_asset("default", "alice", "phrase-greeting", b"hello-pcm-2")  # replaced
    await store.put_asset("default", "Alice", "phrase-hold", bytes(range(256)))
    assert await store.get_asset("default", "ALICE", "phrase-greeting") == b"hello-pcm-2"
    assert await store.get_asset("default", "alice", "phrase-hold") == bytes(range(256))
    with pytest.raises(ValueError, match="asset key"):
        await store.put_asset("default", "alice", "../registry", b"x")
    await store.remove("default", "alice")
    await store.add(make_voice("alice"))  # the same voice again: it starts with no assets
    assert await store.get_asset("default", "alice", "phrase-greeting") is None
    assert await store.get_asset("default", "alice", "phrase-hold") is None
