"""Drain and admission over real sockets (``RunningServer.drain``): a live call hears its reply to the end,
then the goodbye, then close 1001, while ``/healthz`` says ``draining`` and new upgrades get 503 with
``Retry-After``; the session limit refuses the same way and ``/healthz`` says ``full``.

Stand-in models (``tests.integration.standins``): the server, connection, core and synthesis pipeline are the
real ones. No timing is asserted; the signal handling and the exit code are tested on a real process in
``test_drain_process.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from agent.core.events import SHUTTING_DOWN
from agent.front_door.listener import RunningServer, running_server
from clients.twilio_client import TwilioCaller
from testing.sockets import http_get
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.standins import standin_components, utterance

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})
GOODBYE = "Sorry, I have to end the call now. Goodbye."
ONE_SECOND = 24000 * 2  # bytes of one second of reply audio at 24 kHz
WAIT_S = 30.0  # only against a hang; nothing is timed


async def health(server: RunningServer) -> tuple[int, dict[str, Any], dict[str, str]]:
    got = await asyncio.to_thread(http_get, server.http_url + "/healthz")
    return got.status, got.json(), got.headers


async def refused(url: str) -> tuple[dict[str, Any], str]:
    """The upgrade's 503: its JSON body and ``Retry-After``."""
    with pytest.raises(InvalidStatus) as info:
        async with connect(url):
            pass
    response = info.value.response
    assert response.status_code == 503
    return json.loads(response.body), response.headers["Retry-After"]


@dataclass
class Heard:
    """Everything a browser caller received, audio bytes per turn, until the server closed the connection."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    audio: defaultdict[int, int] = field(default_factory=lambda: defaultdict(int))
    playing: int = 0

    def take(self, message: str | bytes) -> dict[str, Any] | None:
        if isinstance(message, bytes):
            self.audio[self.playing] += len(message)
            return None
        data: dict[str, Any] = json.loads(message)
        self.messages.append(data)
        if data["type"] == "audio.start":
            self.playing = data["turn"]
        return data

    def of(self, kind: str, turn: int | None = None) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == kind and (turn is None or m.get("turn") == turn)]

    def index(self, kind: str, turn: int | None = None) -> int:
        return next(i for i, m in enumerate(self.messages) if m["type"] == kind and m.get("turn") == turn)


async def heard_until(ws: ClientConnection, kind: str, heard: Heard) -> None:
    while (data := heard.take(await asyncio.wait_for(ws.recv(), WAIT_S))) is None or data["type"] != kind:
        pass


async def to_the_close(ws: ClientConnection, heard: Heard) -> None:
    async for message in ws:  # ends at the close (1001 is a normal close)
        heard.take(message)


async def speak(ws: ClientConnection) -> None:
    pcm, step = utterance(), 16000 // 5
    for i in range(0, len(pcm), step):
        await ws.send(pcm[i : i + step])


async def test_a_call_in_the_middle_of_a_reply_hears_it_all_then_the_goodbye_then_1001() -> None:
    components = standin_components(tts_seconds=1.0)  # every reply and phrase: one second of tone
    async with running_server(local_settings(), lambda: components) as server:
        await server.wait_ready()
        async with connect(server.ws_url) as ws:
            heard = Heard()
            await ws.send(START)
            await heard_until(ws, "session.started", heard)
            await speak(ws)
            await heard_until(ws, "audio.start", heard)  # the reply is playing

            draining = asyncio.create_task(server.drain(60))
            status, body, headers = await health(server)
            assert status == 503 and body["status"] == body["reason"] == "draining", body
            assert body["ready"] is False and body["sessions"] == 1 and "speech" in body  # the detail stays
            assert int(headers["Retry-After"]) > 0
            for url in (server.ws_url, server.url("twilio")):
                refusal, retry_after = await refused(url)
                assert refusal["reason"] == "draining" and int(retry_after) > 0

            await to_the_close(ws, heard)
        assert ws.close_code == 1001 and ws.close_reason == SHUTTING_DOWN
        assert await draining is True

    assert not heard.of("playback.clear")
    (reply,) = heard.of("turn.metrics", 1)
    assert not reply["interrupted"] and reply["reply_audio_ms"] >= 1000
    assert heard.audio[1] >= reply["reply_audio_ms"] * ONE_SECOND // 1000  # the reply, to its end
    (goodbye,) = heard.of("reply.done", 2)
    assert goodbye["text"] == GOODBYE
    assert heard.audio[2] >= ONE_SECOND  # the goodbye, whole
    assert not heard.of("turn.metrics", 2)[0]["interrupted"]
    (ended,) = heard.of("session.ended")
    assert ended["reason"] == SHUTTING_DOWN
    assert heard.index("turn.metrics", 1) < heard.index("reply.done", 2) < heard.index("session.ended")


async def test_an_idle_call_and_a_phone_call_mid_reply_are_both_drained() -> None:
    components = standin_components(tts_seconds=1.0)
    async with running_server(local_settings(), lambda: components) as server:
        await server.wait_ready()
        async with connect(server.ws_url) as idle, connect(server.url("twilio")) as phone:
            heard = Heard()
            await idle.send(START)
            await heard_until(idle, "session.started", heard)
            caller = TwilioCaller(phone)
            await caller.begin()
            caller.say(utterance(8000))
            assert await caller.run_until(lambda: len(caller.received.marks) >= 5, WAIT_S)  # the reply plays

            assert await server.drain(60) is True
            await to_the_close(idle, heard)
            await phone.wait_closed()
            await caller.hang_up()
        for ws in (idle, phone):
            assert ws.close_code == 1001 and ws.close_reason == SHUTTING_DOWN

    # The idle call: the goodbye at once (its first turn), whole.
    assert heard.of("reply.done", 1)[0]["text"] == GOODBYE and heard.audio[1] >= ONE_SECOND
    # The phone call: every 20 ms of the reply (turn 1) was sent and marked, then the goodbye (turn 2).
    marks = [name for _, name in caller.received.marks]
    assert "1:1000" in marks and "2:1000" in marks
    assert marks.index("1:1000") < marks.index("2:20")
    assert not caller.received.clears


async def test_beyond_the_session_limit_calls_get_503_with_retry_after_and_health_says_full() -> None:
    components = standin_components()
    async with running_server(local_settings(server={"max_sessions": 1}), lambda: components) as server:
        await server.wait_ready()
        async with connect(server.ws_url) as first:
            await first.send(START)
            await heard_until(first, "session.started", Heard())
            refusal, retry_after = await refused(server.ws_url)
            assert refusal["reason"] == "full" and int(retry_after) > 0
            status, body, headers = await health(server)
            assert status == 503 and body["status"] == body["reason"] == "full" and body["sessions"] == 1
            assert int(headers["Retry-After"]) > 0
            await speak(first)  # the live call goes on
            await heard_until(first, "turn.metrics", Heard())

        async def freed() -> bool:
            return (await health(server))[0] == 200

        await until(freed, what="the slot to be freed when the handler returns")
        status, body, _ = await health(server)
        assert status == 200 and body["status"] == "ok"
