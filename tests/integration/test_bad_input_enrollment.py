"""Bad enrollment and voice-management input over a real socket: each case gets its documented ``error`` code,
the connection goes on (it can still start a session), a bystander's session still works, and the voice
store is exactly as it was. The cases count toward issue 8's bad-input suite (docs/security.md)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from agent.adapters.file_voice_store import FileVoiceStore
from agent.front_door.listener import RunningServer, running_server
from agent.ports import ConsentRecord, Voice, VoiceRecord
from agent.runtime.components import Components
from agent.security.auth import DEFAULT_TENANT
from testing.reference_files import encode
from testing.sockets import next_json
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings, with_voice_store

pytestmark = pytest.mark.models

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})
END = {"type": "voice.enroll.end"}
TAKEN_WAV = b"RIFF-the-voice-that-is-already-there"


def taken_voice() -> Voice:
    sha = hashlib.sha256(TAKEN_WAV).hexdigest()
    consent = ConsentRecord("I, Tak, agree.", "Tak", "2026-01-01T00:00:00+00:00", sha, "cli", DEFAULT_TENANT)
    record = VoiceRecord(
        "taken", "7a" * 16, "Hi.", "English", consent, sha, 4.0, "2026-01-01T00:00:00+00:00", DEFAULT_TENANT
    )
    return Voice(record, TAKEN_WAV)


def begin(**fields: Any) -> dict[str, Any]:
    return {"type": "voice.enroll.begin", "name": "newvoice", "consent": "I, New, agree.", "size": 100, **fields}


def chunk(data: bytes) -> dict[str, Any]:
    return {"type": "voice.enroll.chunk", "data": base64.b64encode(data).decode()}


UPLOADS: dict[str, Callable[[], bytes]] = {  # made when a case runs (Piper), not at collection
    "not-audio": lambda: b"this is not audio at all " * 40,
    "silence": lambda: encode(silence(4000, 24000), 24000, "flac"),
    "too-short": lambda: encode(speech_pcm16("Hi.", 24000), 24000, "ogg"),
    "truncated-wav": lambda: encode(silence(500, 24000), 24000, "wav")[:30],
}


def upload(kind: str) -> list[dict[str, Any] | str]:
    """A whole upload of ``UPLOADS[kind]``: begin (answered ``ready``), one chunk, end."""
    return [f"upload:{kind}"]


def expand(message: dict[str, Any] | str) -> list[dict[str, Any] | str]:
    if isinstance(message, str) and message.startswith("upload:"):
        data = UPLOADS[message.removeprefix("upload:")]()
        return [begin(size=len(data), transcript="Hi."), "ready", chunk(data), END]
    return [message]


# (id, messages to send — "ready" = expect voice.enroll.ready before going on —, the documented error code)
CASES: list[tuple[str, list[dict[str, Any] | str], str]] = [
    ("name-traversal", [begin(name="../x")], "bad_name"),
    ("name-empty", [begin(name="")], "bad_name"),
    ("name-not-string", [begin(name=123)], "bad_name"),
    ("name-too-long", [begin(name="x" * 65)], "bad_name"),
    ("name-space", [begin(name="my voice")], "bad_name"),
    ("consent-blank", [begin(consent=" \n ")], "consent_required"),
    ("consent-missing", [{k: v for k, v in begin().items() if k != "consent"}], "consent_required"),
    ("consent-not-string", [begin(consent=["I agree"])], "consent_required"),
    ("consent-too-long", [begin(consent="y" * 2001)], "consent_required"),
    ("size-string", [begin(size="big")], "bad_message"),
    ("size-zero", [begin(size=0)], "bad_message"),
    ("size-negative", [begin(size=-5)], "bad_message"),
    ("size-bool", [begin(size=True)], "bad_message"),
    ("size-over-limit", [begin(size=11 * 1024 * 1024)], "too_large"),
    ("language-unknown", [begin(language="Klingon")], "bad_language"),
    ("language-not-string", [begin(language=5)], "bad_message"),
    ("transcript-too-long", [begin(transcript="z" * 1001)], "bad_transcript"),
    ("transcript-not-string", [begin(transcript=["a"])], "bad_message"),
    ("speaker-too-long", [begin(speaker="s" * 201)], "bad_message"),
    ("speaker-not-string", [begin(speaker={"n": 1})], "bad_message"),
    ("name-taken", [begin(name="TAKEN")], "voice_exists"),
    ("chunk-without-begin", [chunk(b"1234")], "no_enrollment"),
    ("end-without-begin", [END], "no_enrollment"),
    (
        "chunk-bad-base64",
        [begin(size=4), "ready", {"type": "voice.enroll.chunk", "data": "not base64!"}],
        "bad_message",
    ),
    ("chunk-no-data", [begin(size=4), "ready", {"type": "voice.enroll.chunk"}], "bad_message"),
    ("chunk-data-number", [begin(size=4), "ready", {"type": "voice.enroll.chunk", "data": 1234}], "bad_message"),
    ("chunk-over-size", [begin(size=4), "ready", chunk(b"12345")], "too_large"),
    ("end-too-early", [begin(size=8), "ready", chunk(b"1234"), END], "bad_message"),
    ("second-begin", [begin(size=8), "ready", begin(name="other")], "enroll_busy"),
    ("upload-not-audio", upload("not-audio"), "bad_audio"),
    ("upload-silence", upload("silence"), "silent"),
    ("upload-too-short", upload("too-short"), "too_short"),
    ("upload-truncated-wav", upload("truncated-wav"), "bad_audio"),
    ("remove-unknown", [{"type": "voices.remove", "name": "nobody"}], "unknown_voice"),
    ("remove-traversal", [{"type": "voices.remove", "name": "../taken"}], "unknown_voice"),
    ("remove-not-string", [{"type": "voices.remove", "name": 5}], "bad_name"),
    ("unknown-enroll-type", [{"type": "voice.enroll.pause"}], "unknown_type"),
    ("unknown-voices-type", [{"type": "voices.delete_all"}], "unknown_type"),
]


@pytest.fixture
async def store_server(components: Components, tmp_path: Path) -> AsyncIterator[tuple[RunningServer, Path]]:
    directory = tmp_path / "voices"
    store = FileVoiceStore(directory)
    await store.add(taken_voice())
    with_store = with_voice_store(components, store)
    async with running_server(local_settings(), lambda: with_store) as running:
        await running.wait_ready()
        yield running, directory


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("messages", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_bad_enrollment_input(
    store_server: tuple[RunningServer, Path], messages: list[dict[str, Any] | str], code: str
) -> None:
    server, directory = store_server
    before = snapshot(directory)
    async with connect(server.ws_url) as bystander, connect(server.ws_url) as ws:
        await bystander.send(START)
        assert (await next_json(bystander))["type"] == "session.started"
        for message in [m for item in messages for m in expand(item)]:
            if message == "ready":
                assert (await next_json(ws))["type"] == "voice.enroll.ready"
            else:
                await ws.send(json.dumps(message))
        answer = await next_json(ws)
        assert (answer["type"], answer.get("code")) == ("error", code), answer
        assert answer["message"]
        # the connection goes on: it can list voices and start a session
        await ws.send(json.dumps({"type": "voices.list"}))
        listed = await next_json(ws)
        assert listed["type"] == "voices" and [v["name"] for v in listed["voices"]] == ["taken"]
        await ws.send(START)
        assert (await next_json(ws))["type"] == "session.started"
        # the bystander's session is untouched
        await bystander.send(json.dumps({"type": "session.end"}))
        assert (await next_json(bystander))["type"] == "session.ended"
    assert snapshot(directory) == before  # the voice store is exactly as it was
