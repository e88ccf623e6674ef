"""Connections that misbehave, over real sockets: none can wedge the server, hold a slot, or flood the log.

Stand-in models (``tests.integration.standins``) keep these fast; the server, connection, core and synthesis
pipeline are the real ones. Every test ends by checking that a bystander session still gets a full turn.
No wall-clock bounds: tiny settings (send and start timeouts) and waiting for the effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from agent.config import Settings
from agent.front_door.listener import RunningServer, running_server
from agent.security.auth import Authenticator
from clients.twilio_client import TwilioCaller
from testing.sockets import next_json, play_through, read_until
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.standins import (
    EchoLanguageModel,
    LoudnessDetector,
    ScriptedSpeechToText,
    ToneSpeech,
    quiet,
    standin_components,
    tone,
    utterance,
)

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})
SECRET = "s" * 40
APOLOGY = Settings().turn.apology_text


@pytest.fixture
async def server() -> AsyncIterator[RunningServer]:
    components = standin_components()
    async with running_server(local_settings(), lambda: components) as running:
        await running.wait_ready()
        yield running


def serve(components_seconds: float = 0.3, **sections: dict[str, Any]) -> AbstractAsyncContextManager[RunningServer]:
    components = standin_components(components_seconds)
    return running_server(local_settings(**sections), lambda: components)


async def say(ws: ClientConnection, pcm: bytes) -> None:
    for i in range(0, len(pcm), 3200):  # 100 ms frames, as fast as the socket takes them
        await ws.send(pcm[i : i + 3200])


async def one_turn(ws: ClientConnection) -> list[dict[str, Any]]:
    """Say one utterance and play its reply as it comes (``play_through``); the messages of its turn up to its
    ``turn.metrics``."""
    await say(ws, utterance())
    seen = await play_through(ws)
    turn = seen[-1]["turn"]
    return [m for m in seen if m.get("turn", turn) == turn]


async def bystander_works(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send(START)
        assert (await next_json(ws))["type"] == "session.started"
        kinds = [m["type"] for m in await one_turn(ws)]
        assert "transcript" in kinds and "audio.start" in kinds and "reply.done" in kinds


async def slots_freed(server: RunningServer) -> None:
    """Wait for the effect (every connection gone)."""
    await until(lambda: not server.state.connections, what=lambda: f"every connection gone: {server.state.connections}")


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info is not None or r.levelno >= logging.ERROR]


# ------------------------------------------------------------------------------------ not reading


async def test_client_that_stops_reading_is_closed_and_its_slot_freed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    # A ten-minute greeting: far more than the socket buffers hold, so a client that never reads blocks sends.
    async with serve(
        600.0, server={"send_timeout_s": 0.3, "close_timeout_s": 0.3}, turn={"greeting_text": "Hi."}
    ) as srv:
        await srv.wait_ready()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", srv.port))
        sock.setblocking(False)
        stuck = await connect(srv.ws_url, sock=sock, max_queue=1)
        try:
            await stuck.send(START)  # and never read again
            await slots_freed(srv)
        finally:
            stuck.transport.abort()
        assert any("took no message" in r.getMessage() for r in caplog.records)
        assert any("1008 (client is not reading)" in r.getMessage() for r in caplog.records)
        assert not tracebacks(caplog)
        tts = srv.state.components.tts if srv.state.components is not None else None
        assert isinstance(tts, ToneSpeech)
        tts.seconds = 0.3
        await bystander_works(srv)


async def test_a_flood_of_bad_frames_writes_a_few_log_lines_and_counts_every_one(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with connect(server.ws_url) as ws:
        for _ in range(500):  # before session.start: each one refused (error not_started / bad_message)
            await ws.send(b"\x00\x00")
            await ws.send("{not json")
        await ws.send('{"type":"session.end"}')
        with contextlib.suppress(ConnectionClosed):
            await read_until(ws, "never")
    await slots_freed(server)  # the connection's last line is written
    refused = [r for r in caplog.records if "refused" in r.getMessage() and r.name.startswith("agent")]
    assert len(refused) <= 10, [r.getMessage() for r in refused]
    assert any("1000 messages refused" in r.getMessage() for r in caplog.records), "no summary line"
    metrics = server.state.metrics.render((), None)
    counted = sum(
        float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines() if line.startswith("voice_agent_errors_total{")
    )
    assert counted >= 1000
    await bystander_works(server)


# ----------------------------------------------------------------------------------------- hang-ups


@pytest.mark.parametrize("moment", ["before_start", "right_after_start", "during_reply", "after_close_frame"])
async def test_hanging_up_at_any_moment_logs_one_info_line_and_no_traceback(
    server: RunningServer, caplog: pytest.LogCaptureFixture, moment: str
) -> None:
    caplog.set_level(logging.INFO)
    ws = await connect(server.ws_url)
    if moment != "before_start":
        await ws.send(START)
    if moment == "during_reply":
        assert (await next_json(ws))["type"] == "session.started"
        await say(ws, utterance())
        await read_until(ws, "audio.start")
    if moment == "after_close_frame":
        await ws.close()
    else:
        ws.transport.abort()
    await slots_freed(server)
    assert not tracebacks(caplog)
    closed = [r for r in caplog.records if "closed by the client" in r.getMessage()]
    assert len(closed) == 1 and closed[0].levelno == logging.INFO
    await bystander_works(server)


# --------------------------------------------------------------------------- refused before the start

REFUSED = [
    pytest.param("hello?", "bad_json", id="not-json"),
    pytest.param('{"type":"session.dance"}', "unknown_type", id="unknown-type"),
    pytest.param(quiet(20), "not_started", id="audio"),
    pytest.param('{"type":"session.start","sample_rate":44100}', "unsupported_sample_rate", id="bad-rate"),
    pytest.param('{"type":"session.start","voice":"nobody"}', "unknown_voice", id="unknown-voice"),
    pytest.param('{"type":"session.start","token":7}', "bad_message", id="token-not-a-string"),
    pytest.param('{"type":"voice.enroll.chunk","data":"AAAA"}', None, id="enroll-chunk-without-begin"),
    pytest.param('{"type":"voices.list"}', None, id="listing-without-a-store"),
]


@pytest.mark.parametrize(("message", "code"), REFUSED)
async def test_refused_messages_before_the_start_do_not_keep_the_slot(message: str | bytes, code: str | None) -> None:
    async with serve(server={"start_timeout_s": 0.5}) as srv:
        await srv.wait_ready()
        async with connect(srv.ws_url) as ws:
            codes = []
            with pytest.raises(ConnectionClosed):
                while True:  # keep sending refused messages: they must not restart the start deadline
                    await ws.send(message)
                    codes.append((await next_json(ws))["code"])
            assert ws.close_code == 1008 and ws.close_reason == "session.start not received in time"
            assert len(set(codes)) == 1 and (code is None or codes[0] == code)
        await slots_freed(srv)
        await bystander_works(srv)


# ----------------------------------------------------------------------------------------- rate limit


async def test_audio_ten_times_faster_than_real_time_is_rate_limited(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send(START)
        assert (await next_json(ws))["type"] == "session.started"
        errors: list[dict[str, Any]] = []

        async def listen() -> None:
            while not errors:
                message = await next_json(ws)
                if message["type"] == "error":
                    errors.append(message)

        listener = asyncio.create_task(listen())
        frame = quiet(20)
        while not listener.done():
            await ws.send(frame)
            await asyncio.sleep(0.002)  # ~10x real time
        await listener
        assert errors[0]["code"] == "rate_limited"
        await ws.send('{"type":"session.end"}')
        assert (await read_until(ws, "session.ended"))[-1]["type"] == "session.ended"
        await ws.wait_closed()
        assert ws.close_code == 1000  # the session went on: it ended when the client asked
    await bystander_works(server)


async def test_a_flood_of_audio_is_closed(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send(START)
        frame = quiet(100)
        with pytest.raises(ConnectionClosed):
            for _ in range(1000):  # 100 s of audio as fast as the socket takes it
                await ws.send(frame)
            await read_until(ws, "never")
        assert ws.close_code == 1008 and ws.close_reason == "audio faster than real time"
    await slots_freed(server)
    await bystander_works(server)


# ------------------------------------------------------------------------------------- stage failures


@pytest.mark.parametrize("stage", ["asr", "llm", "tts"])
async def test_a_stage_raising_a_bug_is_reported_apologised_for_and_the_session_goes_on(
    server: RunningServer, caplog: pytest.LogCaptureFixture, stage: str
) -> None:
    components = server.state.components
    assert components is not None
    stt, llm, tts = components.stt, components.llm, components.tts
    assert isinstance(stt, ScriptedSpeechToText) and isinstance(llm, EchoLanguageModel)
    assert isinstance(tts, ToneSpeech)
    async with connect(server.ws_url) as ws:
        await ws.send(START)
        assert (await next_json(ws))["type"] == "session.started"
        stt.fail, llm.fail, tts.fail = stage == "asr", stage == "llm", stage == "tts"
        seen = await one_turn(ws)
        errors = [m for m in seen if m["type"] == "error"]
        assert errors and {e["code"] for e in errors} == {"internal_error"}
        assert "exploded" not in json.dumps(errors)  # nothing of our internals reaches the client
        if stage != "tts":  # the voice itself is broken: there is nothing to apologise with (no fallback here)
            done = next(m for m in seen if m["type"] == "reply.done")
            assert done["text"] == APOLOGY
            assert any(m["type"] == "audio.start" for m in seen)  # the apology is spoken
        logged = [r for r in caplog.records if r.exc_info is not None]
        assert logged and all(r.levelno == logging.ERROR for r in logged)
        stt.fail = llm.fail = tts.fail = False
        seen = await one_turn(ws)  # the session goes on
        assert next(m for m in seen if m["type"] == "reply.done")["text"] == "You said: Hello there."
        assert any(m["type"] == "audio.start" for m in seen)
    await bystander_works(server)


DEADLINES = {"asr_deadline_s": 0.5, "reply_first_text_deadline_s": 0.5, "first_audio_deadline_s": 0.5}


@pytest.mark.parametrize(("stage", "code"), [("asr", "asr_timeout"), ("llm", "llm_timeout"), ("tts", "tts_timeout")])
async def test_a_stage_that_hangs_cannot_wedge_the_session(stage: str, code: str) -> None:
    async with serve(turn=DEADLINES) as srv:
        await srv.wait_ready()
        components = srv.state.components
        assert components is not None
        stt, llm, tts = components.stt, components.llm, components.tts
        assert isinstance(stt, ScriptedSpeechToText) and isinstance(llm, EchoLanguageModel)
        assert isinstance(tts, ToneSpeech)
        async with connect(srv.ws_url) as ws:
            await ws.send(START)
            assert (await next_json(ws))["type"] == "session.started"
            stt.hang, llm.hang, tts.hang = stage == "asr", stage == "llm", stage == "tts"
            await say(ws, utterance())
            error = next(m for m in await read_until(ws, "error") if m["type"] == "error")
            assert error["code"] == code
            if stage != "tts":  # apologised for in the turn itself
                seen = await read_until(ws, "turn.metrics")
                assert next(m for m in seen if m["type"] == "reply.done")["text"] == APOLOGY
                assert any(m["type"] == "audio.start" for m in seen)
            else:  # the turn ends, and the apology comes in a turn of its own
                await read_until(ws, "turn.metrics")
                apology = await read_until(ws, "turn.metrics")
                assert next(m for m in apology if m["type"] == "reply.done")["text"] == APOLOGY
                # spoken from the phrase kept at session start, or (not kept yet) it timed out too
                spoken = any(m["type"] == "audio.start" for m in apology)
                timed_out = [m["code"] for m in apology if m["type"] == "error"] == ["tts_timeout"]
                assert spoken != timed_out
            stt.hang = llm.hang = tts.hang = False
            seen = await one_turn(ws)  # the session goes on
            assert next(m for m in seen if m["type"] == "reply.done")["text"] == "You said: Hello there."
        await bystander_works(srv)


async def test_superseded_transcriptions_are_cancelled(server: RunningServer) -> None:
    components = server.state.components
    assert components is not None
    stt = components.stt
    assert isinstance(stt, ScriptedSpeechToText)
    stt.gate = asyncio.Event()  # the recogniser is busy: every request waits
    async with connect(server.ws_url) as ws:
        await ws.send(START)
        assert (await next_json(ws))["type"] == "session.started"
        # speech with short pauses: a speculative transcript at each pause, each superseded by the next
        await say(ws, quiet(200) + (tone(300) + quiet(200)) * 4 + quiet(1500))
        await read_until(ws, "speech.stopped")
        stt.gate.set()
        seen = await read_until(ws, "turn.metrics")
        assert next(m for m in seen if m["type"] == "transcript")["text"] == "Hello there."
    # Four speculations were asked for; the three superseded ones were cancelled, before they ran or while
    # they waited (left alone, all four would have run to the end, in order).
    assert stt.calls - stt.cancelled == 1
    stt.gate = None
    await bystander_works(server)


# ---------------------------------------------------------------------------------------------- Twilio


async def test_twilio_call_whose_default_voice_is_not_enrolled_hears_why_then_closes_cleanly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    async with serve(tts={"default_voice": "nobody"}) as srv:
        await srv.wait_ready()
        async with connect(srv.url("twilio")) as ws:
            for message in twilio_start():
                await ws.send(message)
            media = 0
            with contextlib.suppress(ConnectionClosed):
                while True:  # no dead air: the no-voice phrase in the fallback voice, then the close
                    media += json.loads(await ws.recv())["event"] == "media"
            assert ws.close_code == 1011 and "not enrolled" in (ws.close_reason or "")
            assert media > 0
        await slots_freed(srv)
        assert not tracebacks(caplog)
        warned = [r for r in caplog.records if r.levelno >= logging.WARNING and "no voice to speak" in r.getMessage()]
        assert len(warned) == 1


class ExplodingDetector(LoudnessDetector):
    """A speech detector with a bug: it raises on the first frame."""

    def speech_probability(self, frame: bytes) -> float:
        raise RuntimeError("stand-in detector exploded")


def twilio_start(voice: str | None = None) -> list[str]:
    start: dict[str, Any] = {"streamSid": "MZ1", "callSid": "CA1", "accountSid": "AC1", "tracks": ["inbound"]}
    start |= {"customParameters": {"voice": voice} if voice else {}}
    start |= {"mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}
    return [
        json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}),
        json.dumps({"event": "start", "sequenceNumber": "1", "streamSid": "MZ1", "start": start}),
    ]


async def test_a_bug_during_a_twilio_call_is_logged_once_and_the_call_closes_with_a_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    components = replace(standin_components(), new_detector=ExplodingDetector)
    async with running_server(local_settings(), lambda: components) as srv:
        await srv.wait_ready()
        async with connect(srv.url("twilio")) as ws:
            for message in twilio_start():
                await ws.send(message)
            caller = TwilioCaller(ws, stream_sid="MZ1")
            for _ in range(10):  # enough audio for the resampler to hand the detector a frame
                await ws.send(json.dumps(caller.media_message(quiet(20, 8000))))
            await ws.wait_closed()
            assert ws.close_code == 1011 and ws.close_reason == "internal error"
        await slots_freed(srv)
        logged = [r for r in caplog.records if r.exc_info is not None]
        assert len(logged) == 1 and "exploded" in repr(logged[0].exc_info)


# ------------------------------------------------------------------------------------------ principal


def token(*scopes: str, tenant: str = "acme") -> str:
    return Authenticator(SECRET.encode()).mint(tenant, scopes)


AUTH_CASES = [
    pytest.param(None, None, "unauthorized", id="no-token"),
    pytest.param("not.a.token", None, "unauthorized", id="bad-token"),
    pytest.param(None, "Bearer nonsense", "unauthorized", id="bad-header"),
    pytest.param(token("enroll"), None, "forbidden", id="no-call-scope"),
]


@pytest.mark.parametrize(("start_token", "header", "code"), AUTH_CASES)
async def test_start_without_valid_credentials_is_refused(
    start_token: str | None, header: str | None, code: str
) -> None:
    async with serve(auth={"secret": SECRET}) as srv:
        await srv.wait_ready()
        headers = {"Authorization": header} if header else None
        async with connect(srv.ws_url, additional_headers=headers) as ws:
            if header is None:
                await ws.send(json.dumps({"type": "session.start", "token": start_token}))
            message = await next_json(ws)
            assert message["type"] == "error" and message["code"] == code
            await ws.wait_closed()
            assert ws.close_code == 1008 and ws.close_reason == code


async def test_a_token_in_session_start_runs_the_session_as_its_tenant() -> None:
    async with serve(auth={"secret": SECRET}) as srv:
        await srv.wait_ready()
        for headers, body in [
            (None, {"type": "session.start", "token": token("call")}),
            ({"Authorization": f"Bearer {token('call')}"}, {"type": "session.start"}),
        ]:
            async with connect(srv.ws_url, additional_headers=headers) as ws:
                await ws.send(json.dumps(body))
                started = await next_json(ws)
                assert started["type"] == "session.started"
                assert started["voice"] == "tone"  # the display name, not the handle "acme/tone"
                kinds = [m["type"] for m in await one_turn(ws)]
                assert "audio.start" in kinds
