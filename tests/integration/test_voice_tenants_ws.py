"""Tenants and scopes over real sockets with auth on: two tenants' tokens on one server and one voice store.

A caller lists and removes only its own tenant's voices; another tenant's voice is indistinguishable from
none; enrolling and removing need the ``enroll`` scope; a ``call``-only caller sees names, not consent.
The token is presented both ways the protocol allows: ``Authorization: Bearer`` on the upgrade and
``token`` in the first message.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.adapters.file_voice_store import FileVoiceStore
from agent.front_door.listener import RunningServer, running_server
from agent.ports import ConsentRecord, Voice, VoiceRecord
from agent.runtime.components import Components
from agent.security.auth import Authenticator
from testing.reference_files import encode
from testing.sockets import next_json
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings, with_voice_store

pytestmark = pytest.mark.models

SECRET = "tenant-test-secret-0123456789abcdef"
SENTENCE = "Hello, this is my natural speaking voice for the assistant."


def stored_voice(tenant: str, name: str) -> Voice:
    wav = f"RIFF-{tenant}-{name}".encode()
    sha = hashlib.sha256(wav).hexdigest()
    consent = ConsentRecord(f"I agree ({tenant}).", "Someone", "2026-01-01T00:00:00+00:00", sha, "cli", tenant)
    voice_id = hashlib.md5(f"{tenant}/{name}".encode()).hexdigest()
    record = VoiceRecord(name, voice_id, "Hi.", "English", consent, sha, 4.0, "2026-01-01T00:00:00+00:00", tenant)
    return Voice(record, wav)


@pytest.fixture
async def auth_server(components: Components, tmp_path: Path) -> AsyncIterator[tuple[RunningServer, Authenticator]]:
    settings = local_settings(auth={"secret": SECRET})
    store = FileVoiceStore(tmp_path / "voices")
    await store.add(stored_voice("acme", "shared"))
    await store.add(stored_voice("globex", "shared"))
    await store.add(stored_voice("globex", "secret-plan"))
    with_store = with_voice_store(components, store, settings)
    async with running_server(settings, lambda: with_store) as running:
        await running.wait_ready()
        yield running, Authenticator.from_settings(settings.auth)


async def ask(ws: ClientConnection, body: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(body))
    return await next_json(ws)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_each_tenant_sees_and_removes_only_its_own_voices(
    auth_server: tuple[RunningServer, Authenticator],
) -> None:
    server, auth = auth_server
    acme, globex = auth.mint("acme", ["call", "enroll"]), auth.mint("globex", ["call", "enroll"])
    async with connect(server.ws_url, additional_headers=bearer(acme)) as ws:
        listed = await ask(ws, {"type": "voices.list"})
        assert [v["name"] for v in listed["voices"]] == ["shared"]
        assert listed["voices"][0]["consent"]["statement"] == "I agree (acme)."
        assert "globex" not in json.dumps(listed)
        gone = await ask(ws, {"type": "voices.remove", "name": "secret-plan"})
        assert (gone["type"], gone["code"]) == ("error", "unknown_voice")
        removed = await ask(ws, {"type": "voices.remove", "name": "shared"})
        assert removed == {"type": "voices.removed", "name": "shared"}
    async with connect(server.ws_url) as ws:  # the token in the message instead of the header
        listed = await ask(ws, {"type": "voices.list", "token": globex})
        assert [v["name"] for v in listed["voices"]] == ["secret-plan", "shared"]  # untouched by acme's remove


async def test_enrolling_needs_the_enroll_scope_and_lands_in_the_callers_tenant(
    auth_server: tuple[RunningServer, Authenticator],
) -> None:
    server, auth = auth_server
    caller, enroller = auth.mint("acme", ["call"]), auth.mint("acme", ["enroll"])
    data = encode(silence(300, 24000) + speech_pcm16(SENTENCE, 24000), 24000, "wav")
    begin = {"type": "voice.enroll.begin", "name": "new", "consent": "I, Nia, agree.", "size": len(data)}
    async with connect(server.ws_url, additional_headers=bearer(caller)) as ws:
        refused = await ask(ws, {**begin, "transcript": SENTENCE})
        assert (refused["type"], refused["code"]) == ("error", "forbidden")
        assert (await ask(ws, {"type": "voices.remove", "name": "shared"}))["code"] == "forbidden"
        listed = await ask(ws, {"type": "voices.list"})
        assert [set(v) for v in listed["voices"]] == [{"name", "language", "duration_s", "created_at"}]
        # the refusals did not end the connection: a call can start
        started = await ask(ws, {"type": "session.start", "sample_rate": 16000})
        assert started["type"] == "session.started"
    async with connect(server.ws_url, additional_headers=bearer(enroller)) as ws:
        ready = await ask(ws, {**begin, "transcript": SENTENCE, "speaker": "Nia"})
        assert ready["type"] == "voice.enroll.ready", ready
        step = ready["max_chunk_bytes"]
        for i in range(0, len(data), step):
            chunk = base64.b64encode(data[i : i + step]).decode()
            await ws.send(json.dumps({"type": "voice.enroll.chunk", "data": chunk}))
        enrolled = await ask(ws, {"type": "voice.enroll.end"})
        assert enrolled["type"] == "voice.enrolled", enrolled
        assert enrolled["voice"]["consent"]["speaker"] == "Nia"
        assert enrolled["voice"]["consent"]["enrolled_by"].startswith("tok:")
    async with connect(server.ws_url, additional_headers=bearer(auth.mint("globex", ["call"]))) as ws:
        listed = await ask(ws, {"type": "voices.list"})
        assert [v["name"] for v in listed["voices"]] == ["secret-plan", "shared"]  # not acme's new voice
