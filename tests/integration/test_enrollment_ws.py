"""Voice enrollment over a real WebSocket, before and during a session, with the real local models."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.adapters.file_voice_store import FileVoiceStore
from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from testing.reference_files import encode
from testing.sockets import next_json
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings, with_voice_store

pytestmark = pytest.mark.models

SENTENCE = "Hello, my name is Joe and this is my voice for the assistant."


@pytest.fixture
async def enroll_server(components: Components, tmp_path: Path) -> AsyncIterator[RunningServer]:
    with_store = with_voice_store(components, FileVoiceStore(tmp_path / "voices"))
    async with running_server(local_settings(), lambda: with_store) as running:
        await running.wait_ready()
        yield running


async def enroll(ws: ClientConnection, name: str, data: bytes, **fields: Any) -> dict[str, Any]:
    begin = {"type": "voice.enroll.begin", "name": name, "consent": "I, Joe, agree.", "size": len(data), **fields}
    await ws.send(json.dumps(begin))
    ready = await next_json(ws)
    if ready["type"] != "voice.enroll.ready":
        return ready
    step = ready["max_chunk_bytes"]
    for i in range(0, len(data), step):
        chunk = {"type": "voice.enroll.chunk", "data": base64.b64encode(data[i : i + step]).decode()}
        message = json.dumps(chunk)
        assert len(message) <= 65536
        await ws.send(message)
    await ws.send(json.dumps({"type": "voice.enroll.end"}))
    return await next_json(ws)


def upload(fmt: str = "mp3", seconds_pad: float = 0.3) -> bytes:
    pad = silence(seconds_pad * 1000, 24000)
    return encode(pad + speech_pcm16(SENTENCE, 24000) + pad, 24000, fmt)


async def test_enroll_before_a_session_then_list(enroll_server: RunningServer) -> None:
    async with connect(enroll_server.ws_url) as ws:
        answer = await enroll(ws, "Joe", upload("m4a"), transcript=SENTENCE, language="english")
        assert answer["type"] == "voice.enrolled", answer
        voice = answer["voice"]
        assert (voice["name"], voice["language"], voice["transcript"]) == ("joe", "English", SENTENCE)
        assert 3 < voice["duration_s"] < 8 and answer["warnings"] == [] and answer["transcribed"] is False
        await ws.send(json.dumps({"type": "voices.list"}))
        listed = await next_json(ws)
        assert listed["type"] == "voices" and [v["name"] for v in listed["voices"]] == ["joe"]
        # the same connection can still start a session
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000}))
        assert (await next_json(ws))["type"] == "session.started"


async def test_enroll_during_a_session_without_transcript(enroll_server: RunningServer) -> None:
    async with connect(enroll_server.ws_url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000}))
        assert (await next_json(ws))["type"] == "session.started"
        await ws.send(silence(20))
        answer = await enroll(ws, "joe2", upload("wav"))
        assert answer["type"] == "voice.enrolled", answer
        assert answer["transcribed"] is True and any("exact transcript" in w for w in answer["warnings"])
        assert "voice" in answer["voice"]["transcript"].lower()
        await ws.send(json.dumps({"type": "session.end"}))
        assert (await next_json(ws))["type"] == "session.ended"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"name": "../x"}, "bad_name"),
        ({"consent": "  "}, "consent_required"),
        ({"size": 11 * 1024 * 1024}, "too_large"),
        ({"language": "Klingon"}, "bad_language"),
        ({"size": "big"}, "bad_message"),
    ],
)
async def test_bad_begin_is_refused_and_the_connection_goes_on(
    enroll_server: RunningServer, fields: dict[str, Any], code: str
) -> None:
    async with connect(enroll_server.ws_url) as ws:
        begin = {"type": "voice.enroll.begin", "name": "ok", "consent": "yes", "size": 100, **fields}
        await ws.send(json.dumps(begin))
        error = await next_json(ws)
        assert (error["type"], error["code"]) == ("error", code) and error["message"]
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000}))
        assert (await next_json(ws))["type"] == "session.started"


async def test_bad_uploads_get_clear_errors(enroll_server: RunningServer) -> None:
    async with connect(enroll_server.ws_url) as ws:
        assert (await enroll(ws, "noise", b"this is not audio" * 50))["code"] == "bad_audio"
        assert (await enroll(ws, "quiet", encode(silence(4000, 24000), 24000, "flac")))["code"] == "silent"
        short = encode(speech_pcm16("Hi.", 24000), 24000, "ogg")
        assert (await enroll(ws, "short", short))["code"] == "too_short"
        assert (await enroll(ws, "fine", upload(), transcript=SENTENCE))["type"] == "voice.enrolled"
        assert (await enroll(ws, "FINE", upload(), transcript=SENTENCE))["code"] == "voice_exists"
        await ws.send(json.dumps({"type": "voice.enroll.chunk", "data": "AAAA"}))
        assert (await next_json(ws))["code"] == "no_enrollment"
        await ws.send(json.dumps({"type": "voice.enroll.begin", "name": "x", "consent": "y", "size": 4}))
        assert (await next_json(ws))["type"] == "voice.enroll.ready"
        await ws.send(json.dumps({"type": "voice.enroll.chunk", "data": "not base64!"}))
        assert (await next_json(ws))["code"] == "bad_message"
        await ws.send(json.dumps({"type": "voice.enroll.chunk", "data": base64.b64encode(b"12345").decode()}))
        assert (await next_json(ws))["code"] == "too_large"
        await ws.send(json.dumps({"type": "voice.enroll.end"}))
        assert (await next_json(ws))["code"] == "no_enrollment"
        await ws.send(json.dumps({"type": "voices.list"}))
        assert [v["name"] for v in (await next_json(ws))["voices"]] == ["fine"]
