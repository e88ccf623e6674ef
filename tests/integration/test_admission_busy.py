"""Load-aware admission over real sockets: while the local models could not start a new caller's first sentence
within ``AGENT_SERVER__ADMISSION_WAIT_MS``, new upgrades get 503 ``busy`` with ``Retry-After`` (and so does
``/healthz``), while a live call goes on; once the work is done, calls are taken again. Callers speaking count
as work to come; idle sessions do not.

The load is real work queued on the server's ``WorkPool`` (a job holding the only worker, and first-audio jobs
waiting behind it); the live call's stand-in models do not use the pool. Nothing is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from agent.front_door.listener import running_server
from agent.ports import URGENT
from agent.runtime.components import Components
from agent.work.workers import WorkPool
from testing.sockets import http_get, read_until
from tests.integration.conftest import local_settings
from tests.integration.standins import (
    EchoLanguageModel,
    LoudnessDetector,
    ScriptedSpeechToText,
    ToneSpeech,
    quiet,
    tone,
    utterance,
)

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})


async def say(ws: ClientConnection, pcm: bytes) -> None:
    for i in range(0, len(pcm), 3200):
        await ws.send(pcm[i : i + 3200])


def standins_on(pool: WorkPool) -> Components:
    """Stand-in models that do not use ``pool``; admission reads the pool's queues and forecast."""
    return Components(
        stt=ScriptedSpeechToText(), llm=EchoLanguageModel(), tts=ToneSpeech(), new_detector=LoudnessDetector, work=pool
    )


async def test_a_busy_server_refuses_new_calls_while_a_live_call_goes_on() -> None:
    pool = WorkPool(1, rates={"tts": 1.0})  # one second per unit: the queued work below is ~10 s
    components = standins_on(pool)
    gate = threading.Event()
    settings = local_settings(server={"admission_wait_ms": 800})
    try:
        async with running_server(settings, lambda: components) as server:
            await server.wait_ready()
            async with connect(server.ws_url) as live:
                await live.send(START)
                await read_until(live, "session.started")
                # Load: one job holds the worker, two first sentences of 5 s each wait behind it.
                holding = pool.submit("tts", URGENT, 1, lambda: gate.wait(60))
                waiting = [pool.submit("tts", URGENT, 5, lambda: None) for _ in range(2)]
                assert pool.stats().first_audio_wait_s > 0.8

                with pytest.raises(InvalidStatus) as info:
                    async with connect(server.ws_url):
                        pass
                response = info.value.response
                assert response.status_code == 503
                assert json.loads(response.body)["reason"] == "busy"
                assert 1 <= int(response.headers["Retry-After"]) <= 30
                got = await asyncio.to_thread(http_get, server.http_url + "/healthz")
                status, body, headers = got.status, got.text, got.headers
                assert status == 503 and json.loads(body)["reason"] == "busy" and "Retry-After" in headers

                # The live call is not touched: a whole turn.
                await say(live, utterance())
                await read_until(live, "turn.metrics")

                metrics = (await asyncio.to_thread(http_get, server.http_url + "/metrics")).text
                assert 'voice_agent_refusals_total{reason="busy"} 1' in metrics
                assert 'voice_agent_model_queue_depth{model="tts"} 2' in metrics
                assert 'voice_agent_model_running{model="tts"} 1' in metrics

                # The work done, new calls are taken again.
                gate.set()
                await asyncio.wrap_future(holding)
                await asyncio.gather(*(asyncio.wrap_future(job) for job in waiting))
                async with connect(server.ws_url) as again:
                    await again.send(START)
                    await read_until(again, "session.started")
    finally:
        gate.set()
        pool.close()


async def test_callers_speaking_count_as_work_to_come_and_idle_sessions_count_nothing() -> None:
    # Each call whose caller is in the middle of an utterance counts as one turn of first-audio work (here 1 s:
    # a 0.5 s transcript and a 0.5 s first sentence, over 2 workers) ahead of a new caller. Idle sessions (started,
    # silent) count nothing. With a 1.2 s budget, three callers speaking at once make the server busy; once they
    # have stopped (their turns ran on stand-ins outside the pool) new calls are taken again. Nothing runs on the
    # pool: it is all forecast.
    pool = WorkPool(2, turn_parts={"transcript": 0.5, "first_sentence": 0.5})
    components = standins_on(pool)
    settings = local_settings(server={"admission_wait_ms": 1200})
    try:
        async with running_server(settings, lambda: components) as server:
            await server.wait_ready()
            async with contextlib.AsyncExitStack() as stack:
                calls = [await stack.enter_async_context(connect(server.ws_url)) for _ in range(6)]
                for ws in calls:
                    await ws.send(START)
                    await read_until(ws, "session.started")
                # Six idle sessions: still ok, and a new caller is taken.
                got = await asyncio.to_thread(http_get, server.http_url + "/healthz")
                status, body = got.status, got.text
                assert status == 200 and json.loads(body)["sessions"] == 6, body
                async with connect(server.ws_url) as seventh:
                    await seventh.send(START)
                    await read_until(seventh, "session.started")

                # Three of them start speaking (and have not stopped): the next caller would wait 1.5 s.
                for ws in calls[:3]:
                    await say(ws, quiet(200) + tone(600))
                    await read_until(ws, "speech.started")
                with pytest.raises(InvalidStatus) as info:
                    async with connect(server.ws_url):
                        pass
                assert info.value.response.status_code == 503
                assert json.loads(info.value.response.body)["reason"] == "busy"
                assert int(info.value.response.headers["Retry-After"]) >= 1
                got = await asyncio.to_thread(http_get, server.http_url + "/healthz")
                status, body = got.status, got.text
                assert status == 503 and json.loads(body)["reason"] == "busy"
                assert json.loads(body)["speaking"] == 3

                # They stop and are answered: nothing is to come, and a new call is taken.
                for ws in calls[:3]:
                    await say(ws, quiet(1500))
                    await read_until(ws, "audio.start")
                async with connect(server.ws_url) as again:
                    await again.send(START)
                    await read_until(again, "session.started")
    finally:
        pool.close()
