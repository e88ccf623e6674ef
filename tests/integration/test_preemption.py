"""A reply prepared before the end of turn, over a real socket with real tiny.en, the offline responder and Piper.

The caller asks a question and falls silent; while the server waits out the hangover, the speculative
transcript, the reply text and the first sentence's speech are all ready (the test waits until the models
have done that work: ``/metrics`` shows a synthesis job started and nothing running or queued). Until the caller
has been silent long enough, nothing of it may reach the caller; at the end of turn it is released at once,
in protocol order, and the turn is counted as a preemptive hit. Nothing is timed: the caller simply stops
sending audio while the work is done (the end of turn is measured in audio time).
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.front_door.listener import running_server
from agent.runtime.components import Components
from testing.sockets import FrameClock
from testing.speech import silence, speech_pcm16, wer
from testing.waits import until
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})
FRAME = 640  # 20 ms at 16 kHz
QUESTION = "What is your name?"
"""Answered in words by the offline responder (asked the time it calls the clock, and a prepared reply runs no
tool before the end of turn: it would do no speech ahead)."""


def metric(body: str, name: str, labels: str = "") -> float:
    match = re.search(rf"^{name}{re.escape(labels)} (\S+)$", body, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def scrape(url: str) -> str:
    with urllib.request.urlopen(url + "/metrics") as response:
        return str(response.read().decode())


async def models_idle(url: str, *, tts_jobs_above: float = -1.0) -> float:
    """Wait until no model job runs or waits (and more than ``tts_jobs_above`` synthesis jobs have started);
    returns the synthesis jobs started so far."""
    seen = {"busy": 0.0, "tts_jobs": 0.0}

    async def idle() -> bool:
        body = await asyncio.to_thread(scrape, url)
        seen["busy"] = sum(
            metric(body, name, f'{{model="{model}"}}')
            for name in ("voice_agent_model_running", "voice_agent_model_queue_depth")
            for model in ("asr", "tts")
        )
        seen["tts_jobs"] = metric(body, "voice_agent_model_jobs_total", '{model="tts"}')
        return not seen["busy"] and seen["tts_jobs"] > tts_jobs_above

    what = f"the models to be idle after more than {tts_jobs_above:g} synthesis jobs"
    await until(idle, 120, lambda: f"{what}; last seen {seen}", every_s=0.05)
    return seen["tts_jobs"]


async def send_paced(ws: ClientConnection, pcm: bytes) -> None:
    async for n in FrameClock(0.02):
        if n * FRAME >= len(pcm):
            break
        await ws.send(pcm[n * FRAME : (n + 1) * FRAME].ljust(FRAME, b"\x00"))


async def test_a_prepared_reply_is_held_until_the_end_of_turn_and_released_in_order(components: Components) -> None:
    settings = local_settings(
        turn={"preemption": "llm+tts", "hangover_min_ms": 1000, "hangover_max_ms": 1200},
        vad={"hangover_ms": 1000},
    )
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        async with connect(server.ws_url) as ws:
            await ws.send(START)
            received: list[dict[str, Any]] = []
            audio_frames = 0

            async def read() -> None:
                nonlocal audio_frames
                async for message in ws:
                    if isinstance(message, bytes):
                        audio_frames += 1
                        received.append({"type": "<audio>"})
                        continue
                    body = json.loads(message)
                    received.append(body)
                    if body["type"] == "turn.metrics":
                        return

            reader = asyncio.create_task(read())
            baseline = await models_idle(server.http_url)
            # The question, then 300 ms of silence: past the speculative point (120 ms), short of the hangover.
            await send_paced(ws, silence(300) + speech_pcm16(QUESTION) + silence(300))
            # The transcript, the reply and its first sentence's speech are done (or the test fails after 2 min).
            await models_idle(server.http_url, tts_jobs_above=baseline)
            held = [m["type"] for m in received]
            assert "speech.started" in held
            assert not {"speech.stopped", "transcript", "reply.delta", "reply.done", "audio.start", "<audio>"} & set(
                held
            ), held
            await send_paced(ws, silence(1200))  # the turn ends: the prepared reply is released
            await asyncio.wait_for(reader, 60)
        body = await asyncio.to_thread(scrape, server.http_url)

    kinds = [m["type"] for m in received]
    first = {kind: kinds.index(kind) for kind in ("speech.stopped", "transcript", "reply.delta", "audio.start")}
    assert first["speech.stopped"] < first["transcript"] < first["reply.delta"] < first["audio.start"], kinds
    assert kinds.index("<audio>") > first["audio.start"] and audio_frames > 10
    transcript = next(m for m in received if m["type"] == "transcript")
    assert wer(QUESTION, transcript["text"]) <= 0.25, transcript
    metrics = received[-1]
    assert metrics["preemptive"] is True and metrics["speculative_asr"] is True, metrics
    assert metrics["asr_ms"] == 0 and metrics["tts_first_audio_ms"] == 0, metrics  # all done before the end
    assert metric(body, "voice_agent_preemptive_replies_total", '{outcome="hit"}') == 1
    assert metric(body, "voice_agent_preemptive_replies_total", '{outcome="miss"}') == 0
    for model in ("asr", "tts", "smart_turn", "text_turn"):  # the compute of the jobs that ran, by model
        assert metric(body, "voice_agent_model_cpu_seconds_total", f'{{model="{model}"}}') > 0, model
