"""Realtime function calling with the official ``openai`` SDK over a real socket (issue 30).

The app declares a ``get_weather`` tool in ``session.update``; the caller asks (Piper speech, server VAD, real
tiny.en) "What is the weather in Paris?"; the model (the OpenAI-compatible emulator, answering from the request
it gets) calls the tool with the city it read in the transcript; the app gets the call as a ``function_call``
item, answers it with a ``function_call_output`` item and ``response.create``, and hears the spoken answer that
uses the result. Every event is parsed by the SDK (as an app does) and, strictly, by the official models
(``tests.unit.test_realtime_conformance.conforming``).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from openai import AsyncOpenAI
from openai.types.realtime import ResponseFunctionCallArgumentsDoneEvent

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from testing.emulators.openai import Call, OpenAIEmulator
from testing.emulators.tool_calls import ReplyItem, last_results, user_text
from testing.speech import silence, speech_pcm16
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.test_realtime import RATE, Microphone
from tests.unit.test_realtime_conformance import conforming

pytestmark = pytest.mark.models

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather now in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def weather_model(body: dict[str, Any]) -> list[ReplyItem]:
    """A model that calls ``get_weather`` for a question about the weather (with the city it was told, if it
    knows it), and answers from the tool's result once the request holds it."""
    results = last_results(body)
    if results:
        report = json.loads(results[-1])
        return [f"It is {report['sky']} in Paris, ", f"{report['temperature_c']} degrees."]
    question = user_text(body).lower()
    if "weather" in question:
        city = "Paris" if "paris" in question else "nowhere"
        return [Call("get_weather", json.dumps({"city": city}))]
    return ["Sorry, could you say that again?"]


class Received:
    """Every server event, as it came over the socket and as the SDK parsed it, in order."""

    def __init__(self) -> None:
        self.raw: list[dict[str, Any]] = []
        self.parsed: list[Any] = []
        self.changed = asyncio.Event()

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.raw if e["type"] == kind]

    async def wait(self, check: Callable[[], bool], timeout_s: float = 60) -> bool:
        """``True`` once ``check()`` holds; ``AssertionError`` with the last events after ``timeout_s``."""
        await until(check, timeout_s, lambda: f"a server event; the last: {self.raw[-3:]}", changed=self.changed)
        return True

    async def read(self, conn: Any) -> None:
        while True:
            data = await conn.recv_bytes()
            self.raw.append(json.loads(data))
            self.parsed.append(conn.parse_event(data))  # what an app's ``async for event in conn`` gets
            self.changed.set()


@asynccontextmanager
async def weather_server(components: Components) -> AsyncIterator[tuple[RunningServer, OpenAIEmulator]]:
    async with OpenAIEmulator(reply=weather_model) as emulator:
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
        try:
            served = dataclasses.replace(components, llm=llm)
            settings = local_settings(turn={"preemption": "off"})  # one model request per turn
            async with running_server(settings, lambda: served) as server:
                await server.wait_ready()
                yield server, emulator
        finally:
            await llm.aclose()


async def test_the_openai_sdk_declares_a_tool_gets_the_call_and_hears_the_answer(components: Components) -> None:
    async with weather_server(components) as (server, llm):
        client = AsyncOpenAI(api_key="any-key", base_url=server.realtime_base_url)
        async with client.realtime.connect(model="voice-agent") as conn:
            events = Received()
            reader = asyncio.create_task(events.read(conn))
            try:
                await _converse(conn, events)
            finally:
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    for event in events.raw:
        conforming(event)
    assert not events.of("error"), events.of("error")
    # The model was offered the tool, then told its result after the call.
    first, second = (r.body for r in llm.requests[:2])
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"], first
    call = next(m for m in second["messages"] if m.get("tool_calls"))
    result = next(m for m in second["messages"] if m["role"] == "tool")
    assert result["tool_call_id"] == call["tool_calls"][0]["id"]
    assert json.loads(result["content"]) == {"sky": "sunny", "temperature_c": 22}


async def _converse(conn: Any, events: Received) -> None:
    assert await events.wait(lambda: bool(events.of("session.created")), 10)
    await conn.session.update(session={"type": "realtime", "instructions": "Be brief.", "tools": [WEATHER]})
    assert await events.wait(lambda: bool(events.of("session.updated")), 10)
    session = events.of("session.updated")[0]["session"]
    assert (session["tools"], session["tool_choice"]) == ([WEATHER], "auto"), session

    mic = Microphone()
    speaker = asyncio.create_task(mic.run(conn))
    try:
        mic.say(silence(300, RATE) + speech_pcm16("What is the weather in Paris?", RATE) + silence(300, RATE))
        assert await events.wait(lambda: bool(events.of("response.done"))), "no response to the question"
        calls = [e for e in events.parsed if isinstance(e, ResponseFunctionCallArgumentsDoneEvent)]
        assert len(calls) == 1, events.raw[-6:]
        (called,) = calls
        assert called.name == "get_weather" and json.loads(called.arguments) == {"city": "Paris"}, called
        # The response only called the tool: it spoke nothing, and its output is the call.
        (done,) = events.of("response.done")
        assert done["response"]["status"] == "completed", done
        assert [(i["type"], i["call_id"]) for i in done["response"]["output"]] == [("function_call", called.call_id)]
        assert not events.of("response.output_audio.delta")

        # The app runs its function and answers the call, then asks for the spoken answer.
        result = json.dumps({"sky": "sunny", "temperature_c": 22})
        await conn.conversation.item.create(
            item={"type": "function_call_output", "call_id": called.call_id, "output": result}
        )
        assert await events.wait(
            lambda: any(e["item"]["type"] == "function_call_output" for e in events.of("conversation.item.done")), 10
        ), "the output did not join the conversation"
        output = next(e for e in events.of("conversation.item.done") if e["item"]["type"] == "function_call_output")
        assert (output["item"]["call_id"], output["item"]["output"]) == (called.call_id, result)
        assert output["previous_item_id"] == called.item_id
        await conn.response.create()
        assert await events.wait(lambda: len(events.of("response.done")) >= 2), "no spoken answer"
    finally:
        speaker.cancel()
        await asyncio.gather(speaker, return_exceptions=True)

    answer = events.of("response.done")[1]["response"]
    assert answer["status"] == "completed", answer
    (message,) = answer["output"]
    assert message["content"][0]["transcript"] == "It is sunny in Paris, 22 degrees.", message
    audio = b"".join(
        base64.b64decode(e["delta"])
        for e in events.of("response.output_audio.delta")
        if e["response_id"] == answer["id"]
    )
    assert len(audio) > RATE * 2 // 2, "less than half a second of spoken answer"
