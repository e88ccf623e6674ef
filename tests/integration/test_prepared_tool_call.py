"""A reply prepared in the caller's pause that calls a server tool, over a real socket (real tiny.en, Piper, the
built-in ``get_time`` tool, the OpenAI-compatible emulator as the model).

The reply is prepared from the speculative transcript while the caller is silent (``PREEMPTION=llm+tts``) and its
tool call is held until the end of turn: a guess must not act. Here the end of turn waits at least 2 s, so the call
waits longer than ``get_time``'s 1 s limit for its release, as it does behind a hesitant caller's unsure end. The
tool's time starts when it is released: it answers, and the reply goes on with its result (before, the call was
timed out the moment it was released: a ``tool_timeout`` error, and the model was told the tool did not answer).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.front_door.listener import running_server
from agent.runtime.components import Components
from testing.emulators import openai as oai
from testing.emulators.openai import OpenAIEmulator
from testing.sockets import next_json, stream_speech
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models

PATIENT = {"turn": {"hangover_min_ms": 2000, "hangover_max_ms": 2500}, "vad": {"hangover_ms": 2100}}
"""Every end of turn waits 2-2.5 s: the call, made a few hundred ms into the pause, waits more than the tool's own
limit (1 s) for its release."""


async def test_a_prepared_replys_tool_call_runs_its_whole_time_after_a_long_pause(components: Components) -> None:
    async with OpenAIEmulator() as emulator:
        emulator.script(oai.calls_reply(oai.Call("get_time", "", "call_1")))
        emulator.script(oai.text_reply(["It is late in the evening."]))
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
        served = dataclasses.replace(components, llm=llm)
        try:
            async with running_server(local_settings(**PATIENT), lambda: served) as server:
                await server.wait_ready()
                seen = await _ask_the_time(server.ws_url)
        finally:
            await llm.aclose()

    kinds = [m["type"] for m in seen]
    assert not [m for m in seen if m["type"] == "error"], kinds  # no tool_timeout, no apology
    (metrics,) = [m for m in seen if m["type"] == "turn.metrics"]
    assert metrics["preemptive"] is True, metrics  # the reply was prepared in the pause, as this test means
    assert [(t["name"], t["outcome"]) for t in metrics["tools"]] == [("get_time", "ok")], metrics
    assert [m["text"] for m in seen if m["type"] == "reply.done"] == ["It is late in the evening."], kinds
    asked_again = emulator.requests[-1].body["messages"][-1]
    assert asked_again["role"] == "tool" and "time" in json.loads(asked_again["content"]), asked_again


async def _ask_the_time(url: str) -> list[dict[str, Any]]:
    """Every JSON message of one spoken turn, up to its ``turn.metrics``."""
    seen: list[dict[str, Any]] = []
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None}))
        stop = asyncio.Event()
        sender = asyncio.create_task(stream_speech(ws, silence(300) + speech_pcm16("What time is it?"), stop))
        try:
            while not any(m["type"] == "turn.metrics" for m in seen):
                seen.append(await next_json(ws, 30))
        finally:
            stop.set()
            await sender
    return seen
