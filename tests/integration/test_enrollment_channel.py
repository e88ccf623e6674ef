"""The enrollment channel as a connection drives it: two tenants, scopes, listing, removal, cancellation.

The channel's answers go to a ``send`` callable (the connection's outbox in the server); here they go to a
queue, so each test reads exactly what a caller would receive. Over a real socket: test_enrollment_ws.py and
test_bad_input_enrollment.py.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.runtime.components import Components
from agent.security.auth import Principal
from agent.wires.browser import codec as browser
from agent.wires.browser.enrollment import EnrollmentChannel
from testing.reference_files import encode
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings, with_voice_store

pytestmark = pytest.mark.models

SENTENCE = "Hello, this is my natural speaking voice for the assistant."
ACME = Principal("acme", frozenset({"call", "enroll"}), "tok:acme-admin")
ACME_CALLER = Principal("acme", frozenset({"call"}), "tok:acme-caller")
GLOBEX = Principal("globex", frozenset({"call", "enroll"}), "tok:globex-admin")


@functools.lru_cache(maxsize=1)
def recording() -> bytes:
    return encode(silence(300, 24000) + speech_pcm16(SENTENCE, 24000), 24000, "wav")


class Caller:
    """One connection's channel and what it was sent."""

    def __init__(self, components: Components, principal: Principal) -> None:
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.channel = EnrollmentChannel(components, local_settings(), principal, self._send)

    def _send(self, payload: str) -> None:
        self.sent.put_nowait(json.loads(payload))

    async def ask(self, text: str) -> dict[str, Any]:
        message = browser.decode_text(text)
        assert isinstance(message, browser.EnrollmentMessage)
        await self.channel.handle(message)
        return await self.sent.get()

    async def enroll(self, name: str, **fields: Any) -> dict[str, Any]:
        data = recording()
        begin = {"type": "voice.enroll.begin", "name": name, "consent": "I, Ann, agree.", "size": len(data)}
        ready = await self.ask(json.dumps({**begin, "transcript": SENTENCE, **fields}))
        if ready["type"] != "voice.enroll.ready":
            return ready
        chunk = {"type": "voice.enroll.chunk", "data": base64.b64encode(data).decode()}
        await self.channel.handle(browser.decode_text(json.dumps(chunk)))  # type: ignore[arg-type]
        return await self.ask('{"type":"voice.enroll.end"}')

    async def names(self) -> list[str]:
        listed = await self.ask('{"type":"voices.list"}')
        assert listed["type"] == "voices", listed
        return [v["name"] for v in listed["voices"]]


@pytest.fixture
def with_store(components: Components, tmp_path: Path) -> Components:
    return with_voice_store(components, FileVoiceStore(tmp_path / "voices"))


async def test_tenants_see_use_and_remove_only_their_own_voices(with_store: Components) -> None:
    acme, globex = Caller(with_store, ACME), Caller(with_store, GLOBEX)
    enrolled = await acme.enroll("Ann", speaker="Ann Lee")
    assert enrolled["type"] == "voice.enrolled", enrolled
    assert enrolled["voice"]["consent"]["speaker"] == "Ann Lee"
    assert enrolled["voice"]["consent"]["enrolled_by"] == "tok:acme-admin"
    assert "tenant" not in json.dumps(enrolled) and "voice_id" not in enrolled["voice"]
    assert await globex.names() == []
    assert (await globex.ask('{"type":"voices.remove","name":"ann"}'))["code"] == "unknown_voice"
    assert (await globex.enroll("ann"))["type"] == "voice.enrolled"  # same name, other tenant
    assert await acme.names() == ["ann"] and await globex.names() == ["ann"]
    assert with_store.voices is not None
    acme_voice = await with_store.voices.get("acme", "ann")
    globex_voice = await with_store.voices.get("globex", "ann")
    assert acme_voice.record.voice_id != globex_voice.record.voice_id
    assert (await globex.ask('{"type":"voices.remove","name":"ANN"}')) == {"type": "voices.removed", "name": "ann"}
    assert await globex.names() == [] and await acme.names() == ["ann"]
    assert (await with_store.voices.get("acme", "ann")) == acme_voice


async def test_a_caller_without_the_enroll_scope_can_only_list_names(with_store: Components) -> None:
    admin, caller = Caller(with_store, ACME), Caller(with_store, ACME_CALLER)
    assert (await admin.enroll("ann"))["type"] == "voice.enrolled"
    begin = {"type": "voice.enroll.begin", "name": "bob", "consent": "I agree.", "size": 100}
    refused = await caller.ask(json.dumps(begin))
    assert (refused["type"], refused["code"]) == ("error", "forbidden") and "enroll" in refused["message"]
    assert (await caller.ask('{"type":"voices.remove","name":"ann"}'))["code"] == "forbidden"
    listed = await caller.ask('{"type":"voices.list"}')
    assert [set(v) for v in listed["voices"]] == [{"name", "language", "duration_s", "created_at"}]
    detailed = await admin.ask('{"type":"voices.list"}')
    assert detailed["voices"][0]["transcript"] == SENTENCE
    assert detailed["voices"][0]["consent"]["statement"] == "I, Ann, agree."
    assert (await caller.ask('{"type":"voice.enroll.chunk","data":"AAAA"}'))["code"] == "no_enrollment"
    assert await admin.names() == ["ann"]


async def test_close_cancels_a_running_enrollment(with_store: Components) -> None:
    caller = Caller(with_store, ACME)
    data = recording()
    begin = {"type": "voice.enroll.begin", "name": "ann", "consent": "I agree.", "size": len(data), "transcript": "x"}
    assert (await caller.ask(json.dumps(begin)))["type"] == "voice.enroll.ready"
    chunk = {"type": "voice.enroll.chunk", "data": base64.b64encode(data).decode()}
    await caller.channel.handle(browser.decode_text(json.dumps(chunk)))  # type: ignore[arg-type]
    await caller.channel.handle(browser.EnrollEnd())
    assert caller.channel.busy
    caller.channel.close()
    await asyncio.sleep(0)  # let the cancellation land
    assert not caller.channel.busy and caller.sent.empty()
    assert with_store.voices is not None and await with_store.voices.list("acme") == []


async def test_without_a_store_every_voice_message_is_refused(components: Components) -> None:
    caller = Caller(dataclasses.replace(components, voices=None), ACME)
    assert (await caller.ask('{"type":"voices.list"}'))["code"] == "voices_unavailable"
    assert (await caller.ask('{"type":"voices.remove","name":"a"}'))["code"] == "voices_unavailable"
