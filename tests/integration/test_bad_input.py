"""Bad input over a real socket: each case gets its documented answer (an ``error`` code, or a close code and
reason), the connection goes on where the protocol says it does, a bystander's session keeps working, and
the voice store is exactly as it was. The cases count toward issue 8's bad-input suite (docs/security.md).

Stand-in models (``tests.integration.standins``) keep the table fast: the server, connection, codecs, core
and synthesis pipeline are the real ones. The answers are those of docs/protocol.md.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agent.adapters.file_voice_store import FileVoiceStore
from agent.audio import mulaw
from agent.front_door.listener import RunningServer, running_server
from agent.ports import ConsentRecord, Voice, VoiceRecord
from agent.runtime.components import Components
from agent.security.auth import DEFAULT_TENANT
from agent.wires.phone.twilio import codec as twilio
from testing.sockets import http_get, next_json, play_through
from tests.integration.conftest import local_settings, with_voice_store
from tests.integration.standins import standin_components, utterance

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})
KEEPER_WAV = b"RIFF-the-voice-that-must-survive"
REPLY_S = 0.1  # the stand-in voice's reply: short, so a bystander's turn ends soon after it is heard


def keeper() -> Voice:
    sha = hashlib.sha256(KEEPER_WAV).hexdigest()
    consent = ConsentRecord("I, Kee, agree.", "Kee", "2026-01-01T00:00:00+00:00", sha, "cli", DEFAULT_TENANT)
    record = VoiceRecord(
        "keeper", "6b" * 16, "Hi.", "English", consent, sha, 4.0, "2026-01-01T00:00:00+00:00", DEFAULT_TENANT
    )
    return Voice(record, KEEPER_WAV)


@dataclass(frozen=True, slots=True)
class Served:
    server: RunningServer
    store_dir: Path


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    directory = tmp_path / "voices"
    store = FileVoiceStore(directory)
    await store.add(keeper())
    components = with_voice_store(standin_components(REPLY_S), store)
    async with running_server(local_settings(), lambda: components) as running:
        await running.wait_ready()
        yield Served(running, directory)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------- helpers


async def expect_error(ws: ClientConnection, code: str) -> dict[str, Any]:
    message = await next_json(ws)
    assert message["type"] == "error", message
    assert message["code"] == code, message
    assert message["message"]
    return message


async def started(ws: ClientConnection, start: str = START) -> dict[str, Any]:
    await ws.send(start)
    message = await next_json(ws)
    assert message["type"] == "session.started", message
    return message


async def one_turn(ws: ClientConnection, rate: int = 16000) -> list[str]:
    """Speak one utterance in 100 ms frames and play the reply as it comes (``play_through``); the types of the
    messages up to ``turn.metrics``."""
    pcm, step = utterance(rate), rate // 5
    for i in range(0, len(pcm), step):
        await ws.send(pcm[i : i + step])
    types = [m["type"] for m in await play_through(ws)]
    assert "transcript" in types and "audio.start" in types and "reply.done" in types, types
    return types


async def closed(ws: ClientConnection) -> tuple[int | None, str]:
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    return ws.close_code, ws.close_reason or ""


def error_count(server: RunningServer, code: str) -> float:
    with urllib.request.urlopen(server.http_url + "/metrics", timeout=5) as response:
        text = response.read().decode()
    found = re.search(rf'^voice_agent_errors_total\{{code="{re.escape(code)}"\}} (\S+)$', text, re.MULTILINE)
    return float(found[1]) if found else 0.0


# ------------------------------------------------------------------------------------ protocol v1 table

Frame = str | bytes


@dataclass(frozen=True, slots=True)
class Case:
    """Frames sent on ``/ws`` (after a valid ``session.start`` when ``started``) and the documented answer:
    an ``error`` with ``code``, then either the connection goes on (``close`` is None: it can still start
    a session and take a full turn) or it is closed with ``close`` = (code, words in the reason)."""

    id: str
    frames: Sequence[Frame]
    code: str | None
    started: bool = False
    close: tuple[int, str] | None = None


def msg(**fields: Any) -> str:
    return json.dumps(fields)


def start(**fields: Any) -> str:
    return json.dumps({"type": "session.start", "sample_rate": 16000, **fields})


def raw_start(field: str, literal: str) -> str:
    """A ``session.start`` with ``field`` set to a raw JSON literal (NaN, huge numbers, nesting...)."""
    return '{"type":"session.start","sample_rate":16000,"' + field + '":' + literal + "}"


HUGE_DIGITS = "9" * 5000  # past Python's int-from-string limit (4300 digits)
B64_CHUNK = base64.b64encode(bytes(40_000)).decode()

BEFORE_START = [
    Case("not-json", ["hello?"], "bad_json"),
    Case("empty-text", [""], "bad_json"),
    Case("json-array", ["[1, 2]"], "bad_json"),
    Case("json-string", ['"session.start"'], "bad_json"),
    Case("json-null", ["null"], "bad_json"),
    Case("truncated-json", ['{"type": "session.start", "sample_rate": 16'], "bad_json"),
    Case("deeply-nested-arrays", ["[" * 30_000 + "]" * 30_000], "bad_json"),
    Case("deeply-nested-objects", ['{"a":' * 10_000 + "0" + "}" * 10_000], "bad_json"),
    Case("huge-integer-literal", [raw_start("sample_rate", HUGE_DIGITS)], "bad_json"),
    Case("no-type", [msg(kind="session.start")], "bad_message"),
    Case("type-number", [msg(type=5)], "bad_message"),
    Case("type-null", [msg(type=None)], "bad_message"),
    Case("type-object", [msg(type={"a": "session.start"})], "bad_message"),
    Case("unknown-type", [msg(type="session.dance")], "unknown_type"),
    Case("unknown-type-long", [msg(type="x" * 10_000)], "unknown_type"),
    Case("rate-nan", [raw_start("sample_rate", "NaN")], "unsupported_sample_rate"),
    Case("rate-infinity", [raw_start("sample_rate", "Infinity")], "unsupported_sample_rate"),
    Case("rate-1e400", [raw_start("sample_rate", "1e400")], "unsupported_sample_rate"),
    Case("rate-string", [start(sample_rate="16000")], "unsupported_sample_rate"),
    Case("rate-bool", [start(sample_rate=True)], "unsupported_sample_rate"),
    Case("rate-float", [start(sample_rate=16000.0)], "unsupported_sample_rate"),
    Case("rate-negative", [start(sample_rate=-16000)], "unsupported_sample_rate"),
    Case("rate-unsupported", [start(sample_rate=44100)], "unsupported_sample_rate"),
    Case("rate-list", [start(sample_rate=[16000])], "unsupported_sample_rate"),
    Case("output-rate-unsupported", [start(output_sample_rate=11025)], "unsupported_sample_rate"),
    Case("output-rate-string", [start(output_sample_rate="24000")], "unsupported_sample_rate"),
    Case("output-rate-nested", [raw_start("output_sample_rate", "[" * 500 + "]" * 500)], "unsupported_sample_rate"),
    Case("voice-number", [start(voice=7)], "bad_message"),
    Case("voice-empty", [start(voice="")], "bad_message"),
    Case("voice-too-long", [start(voice="v" * 65)], "bad_message"),
    Case("voice-list", [start(voice=["keeper"])], "bad_message"),
    Case("voice-unknown", [start(voice="nobody")], "unknown_voice"),
    Case("voice-path", [start(voice="../../etc/passwd")], "unknown_voice"),
    Case("token-number", [start(token=5)], "bad_message"),
    Case("token-object", [start(token={"tenant": "admin"})], "bad_message"),
    Case("audio-before-start", [bytes(640)], "not_started"),
    Case("empty-binary-before-start", [b""], "not_started"),
    Case("odd-binary-before-start", [b"\x01"], "not_started"),
    Case("chunk-bad-base64", [msg(type="voice.enroll.chunk", data="%%%not base64")], "bad_message"),
    Case("chunk-data-number", [msg(type="voice.enroll.chunk", data=12345)], "bad_message"),
    Case("huge-base64-without-begin", [msg(type="voice.enroll.chunk", data=B64_CHUNK)], "no_enrollment"),
    Case("enroll-size-string", [msg(type="voice.enroll.begin", name="x", consent="y", size="9")], "bad_message"),
    Case(
        "enroll-speaker-too-long",
        [msg(type="voice.enroll.begin", name="x", consent="y", size=9, speaker="s" * 201)],
        "bad_message",
    ),
    Case(
        "token-too-long",
        [start(token="t" * 4097)],
        "unauthorized",
        close=(1008, "unauthorized"),
    ),
    Case("oversized-text-frame", ["{" + " " * 70_000 + "}"], None, close=(1009, "")),
    Case("oversized-binary-frame", [bytes(70 * 1024)], None, close=(1009, "")),
]

AFTER_START = [
    Case("second-session-start", [START], "already_started", started=True),
    Case("odd-length-pcm", [bytes(641)], "bad_audio", started=True),
    Case("one-byte-pcm", [b"\x7f"], "bad_audio", started=True),
    Case("pcm-over-100ms", [bytes(3202)], "frame_too_long", started=True),
    Case("not-json-in-session", ["{oops"], "bad_json", started=True),
    Case("unknown-type-in-session", [msg(type="session.pause")], "unknown_type", started=True),
    Case("mark-negative-turn", [msg(type="playback.mark", turn=-1, played_ms=10)], "bad_message", started=True),
    Case("mark-turn-string", [msg(type="playback.mark", turn="1", played_ms=10)], "bad_message", started=True),
    Case("mark-played-string", [msg(type="playback.mark", turn=1, played_ms="10")], "bad_message", started=True),
    Case(
        "mark-played-nan",
        ['{"type":"playback.mark","turn":1,"played_ms":NaN}'],
        "bad_message",
        started=True,
    ),
    Case("mark-played-huge", [msg(type="playback.mark", turn=1, played_ms=1e300)], "bad_message", started=True),
    Case("mark-played-negative", [msg(type="playback.mark", turn=1, played_ms=-5)], "bad_message", started=True),
]


async def run_case(served: Served, case: Case) -> None:
    server = served.server
    before = snapshot(served.store_dir)
    async with connect(server.ws_url) as bystander:
        await started(bystander)
        async with connect(server.ws_url, max_size=None) as ws:
            if case.started:
                await started(ws)
            for frame in case.frames:
                await ws.send(frame)
            if case.code is not None:
                await expect_error(ws, case.code)
            if case.close is not None:
                code, reason = await closed(ws)
                assert code == case.close[0] and case.close[1] in reason, (code, reason)
            else:  # the connection went on: it can start (if it had not) and end its session cleanly
                if not case.started:
                    await started(ws)
                await ws.send(msg(type="session.end"))
                assert (await next_json(ws))["type"] == "session.ended"
                assert (await closed(ws))[0] == 1000
        await one_turn(bystander)  # and nobody else noticed
    assert snapshot(served.store_dir) == before
    got = await asyncio.to_thread(http_get, server.http_url + "/healthz")
    status, body = got.status, got.json()
    assert status == 200 and body["ready"] is True


@pytest.mark.parametrize("case", BEFORE_START + AFTER_START, ids=lambda c: c.id)
async def test_protocol_v1_bad_input(served: Served, case: Case) -> None:
    await run_case(served, case)


async def test_marks_for_unknown_turns_are_ignored(served: Served) -> None:
    """``playback.mark`` for a turn that does not exist (or before the session) is not an error: it is dropped."""
    async with connect(served.server.ws_url) as ws:
        await ws.send(msg(type="playback.mark", turn=3, played_ms=100))  # before start: nothing is playing
        await started(ws)
        await ws.send(msg(type="playback.mark", turn=999, played_ms=100))
        await ws.send(msg(type="playback.mark", turn=0, played_ms=0))
        types = await one_turn(ws)
        assert "error" not in types


async def test_session_end_before_start_closes_1000(served: Served) -> None:
    async with connect(served.server.ws_url) as ws:
        await ws.send(msg(type="session.end"))
        code, _ = await closed(ws)
        assert code == 1000


# ----------------------------------------------------------------------------------------- Twilio table


def media_event(pcm8k: bytes, **media: Any) -> dict[str, Any]:
    payload = base64.b64encode(mulaw.encode(pcm8k)).decode()
    return {"event": "media", "streamSid": "MZ1", "media": {"track": "inbound", "payload": payload, **media}}


def start_event(**start: Any) -> dict[str, Any]:
    body = {
        "streamSid": "MZ1",
        "callSid": "CA1",
        "customParameters": {},
        "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
    }
    return {"event": "start", "streamSid": "MZ1", "start": {**body, **start}}


def fmt(**fields: Any) -> dict[str, Any]:
    return {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1, **fields}


FRAME = bytes(2 * twilio.FRAME_BYTES)


@dataclass(frozen=True, slots=True)
class TwilioCase:
    """Messages sent on ``/twilio`` (after a valid ``start`` when ``started``): each is dropped, counted under
    ``code`` in ``voice_agent_errors_total``, and the call goes on (it still answers an utterance)."""

    id: str
    messages: Sequence[Frame | dict[str, Any]]
    code: str
    started: bool = True


TWILIO = [
    TwilioCase("not-json", ["{not json"], "bad_json"),
    TwilioCase("binary-frame", [b"\x00\x01"], "bad_message"),
    TwilioCase("json-list", ["[]"], "bad_message"),
    TwilioCase("unknown-event", [{"event": "whatever"}], "unknown_type"),
    TwilioCase("event-number", [{"event": 7}], "bad_message"),
    TwilioCase("media-not-object", [{"event": "media", "media": "AAAA"}], "bad_message"),
    TwilioCase("payload-not-base64", [media_event(FRAME, payload="%%%")], "bad_audio"),
    TwilioCase("payload-number", [media_event(FRAME, payload=12)], "bad_audio"),
    TwilioCase("payload-empty", [media_event(FRAME, payload="")], "bad_audio"),
    TwilioCase("payload-huge", [media_event(FRAME, payload=base64.b64encode(bytes(8000)).decode())], "frame_too_long"),
    TwilioCase("outbound-track", [media_event(FRAME, track="outbound")], "bad_message"),
    TwilioCase("mark-name-object", [{"event": "mark", "mark": {"name": {"turn": 1}}}], "bad_message"),
    TwilioCase("dtmf-no-digit", [{"event": "dtmf", "dtmf": {}}], "bad_message"),
    TwilioCase("second-start", [start_event()], "already_started"),
    TwilioCase("media-before-start", [media_event(FRAME)], "not_started", started=False),
    TwilioCase("params-value-object", [start_event(customParameters={"voice": {"a": 1}})], "bad_message", False),
    TwilioCase("params-list", [start_event(customParameters=["voice"])], "bad_message", False),
    TwilioCase("rate-string", [start_event(mediaFormat=fmt(sampleRate="8000"))], "unsupported_sample_rate", False),
    TwilioCase("rate-float", [start_event(mediaFormat=fmt(sampleRate=8000.5))], "unsupported_sample_rate", False),
    TwilioCase("channels-bool", [start_event(mediaFormat=fmt(channels=True))], "unsupported_sample_rate", False),
    TwilioCase("format-list", [start_event(mediaFormat=["audio/x-mulaw"])], "bad_message", False),
    TwilioCase("call-sid-number", [start_event(callSid=5)], "bad_message", False),
]


async def twilio_turn(ws: ClientConnection) -> None:
    """One utterance as media messages; the call answers with media."""
    pcm = utterance(8000)
    for i in range(0, len(pcm), 2 * twilio.FRAME_BYTES):
        await ws.send(json.dumps(media_event(pcm[i : i + 2 * twilio.FRAME_BYTES].ljust(2 * twilio.FRAME_BYTES, b"\0"))))
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message["event"] == "media":
            return


@pytest.mark.parametrize("case", TWILIO, ids=lambda c: c.id)
async def test_twilio_bad_input(served: Served, case: TwilioCase) -> None:
    server = served.server
    before = snapshot(served.store_dir)
    counted = await asyncio.to_thread(error_count, server, case.code)
    async with connect(server.ws_url) as bystander:
        await started(bystander)
        async with connect(server.url("twilio")) as ws:
            await ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
            if case.started:
                await ws.send(json.dumps(start_event()))
            for message in case.messages:
                await ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
            if not case.started:
                await ws.send(json.dumps(start_event()))
            await twilio_turn(ws)  # the call went on
            await ws.send(json.dumps({"event": "stop", "streamSid": "MZ1"}))
        await one_turn(bystander)
    assert await asyncio.to_thread(error_count, server, case.code) >= counted + 1
    assert snapshot(served.store_dir) == before


# -------------------------------------------------------------------------------------- HTTP and limits


async def test_compression_is_off(served: Served) -> None:
    async with connect(served.server.ws_url, compression="deflate") as ws:
        assert ws.response is not None
        assert "Sec-WebSocket-Extensions" not in ws.response.headers
        assert "Server" not in ws.response.headers


async def test_start_timeout_closes_1008() -> None:
    components = standin_components()
    async with running_server(local_settings(server={"start_timeout_s": 0.3}), lambda: components) as srv:
        await srv.wait_ready()
        async with connect(srv.ws_url) as ws:
            code, reason = await closed(ws)
            assert code == 1008 and "session.start" in reason


async def test_unknown_path_is_404(served: Served) -> None:
    server = served.server
    status = (await asyncio.to_thread(http_get, server.http_url + "/nope")).status
    assert status == 404
    with pytest.raises(InvalidStatus) as info:
        async with connect(server.ws_url.replace("/ws", "/other")):
            pass
    assert info.value.response.status_code == 404


async def test_health_is_503_until_models_are_loaded() -> None:
    components = standin_components()
    release = threading.Event()

    def slow_load() -> Components:
        release.wait(10)
        return components

    async with running_server(local_settings(), slow_load) as srv:
        got = await asyncio.to_thread(http_get, srv.http_url + "/healthz")
        status, body = got.status, got.json()
        assert status == 503 and body["ready"] is False
        with pytest.raises(InvalidStatus) as info:
            async with connect(srv.ws_url):
                pass
        assert info.value.response.status_code == 503
        release.set()
        await srv.wait_ready()
        got = await asyncio.to_thread(http_get, srv.http_url + "/healthz")
        status, body = got.status, got.json()
        assert status == 200 and body["ready"] is True and body["sessions"] == 0


async def test_failed_load_reports_in_health() -> None:
    def broken() -> Components:
        raise RuntimeError("model file missing")

    async with running_server(local_settings(), broken) as srv:
        with pytest.raises(RuntimeError):
            await srv.wait_ready()
        got = await asyncio.to_thread(http_get, srv.http_url + "/healthz")
        status, body = got.status, got.json()
        assert status == 503 and body["status"] == "failed" and "model file missing" in body["error"]


async def test_session_limit_refuses_with_503() -> None:
    components = standin_components()
    async with running_server(local_settings(server={"max_sessions": 1}), lambda: components) as srv:
        await srv.wait_ready()
        async with connect(srv.ws_url) as first:
            await started(first)
            with pytest.raises(InvalidStatus) as info:
                async with connect(srv.ws_url):
                    pass
            assert info.value.response.status_code == 503
