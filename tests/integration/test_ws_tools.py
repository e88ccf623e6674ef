"""Protocol v1 (``/ws``) function calling over a real socket, with real tiny.en, Piper and the offline responder:
the client declares ``get_time`` in ``session.start``, the responder calls it, the server sends ``tool.call``, the
client answers ``tool.result``, and the spoken reply uses the result. A client that never answers is timed out:
the model is told, the caller hears the apology, and ``turn.metrics`` says so."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from agent.front_door.listener import running_server
from agent.runtime.components import Components
from clients.protocol_client import converse
from clients.tool_command import result
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models

GET_TIME = {"name": "get_time", "description": "The current time", "parameters": {"type": "object", "properties": {}}}


async def _ask_the_time(components: Components, answer: Any, timeout_s: float = 10.0) -> tuple[Any, list[Any]]:
    settings = local_settings(tools={"client_timeout_s": timeout_s})
    served = dataclasses.replace(components, tools=None)  # the client's get_time, not the server's clock
    events: list[Any] = []
    async with running_server(settings, lambda: served) as server:
        await server.wait_ready()
        pcm = silence(300) + speech_pcm16("What time is it?") + silence(200)
        conversation = await converse(
            server.ws_url,
            pcm,
            16000,
            tools=[GET_TIME],
            on_tool_call=answer,
            on_event=events.append,
            realtime=False,
            trailing_silence_s=1.5,
            timeout_s=60,
        )
    return conversation, events


async def test_a_clients_tool_is_called_answered_and_its_result_spoken(components: Components) -> None:
    calls: list[Any] = []

    async def answer(call: dict[str, Any]) -> dict[str, Any]:
        calls.append(call)
        return result(call["call_id"], output=json.dumps({"time": "14:05", "date": "2026-12-05"}))

    conversation, events = await _ask_the_time(components, answer)
    assert conversation.errors == []
    ((call,),) = [calls]
    assert call["type"] == "tool.call" and call["name"] == "get_time" and call["arguments"] == {}
    (turn,) = conversation.turns
    assert turn.reply is not None and "2:05" in turn.reply, turn.reply
    assert turn.audio_seconds > 0.3
    (metrics,) = [e for e in events if e["type"] == "turn.metrics"]
    ((name, outcome),) = [(t["name"], t["outcome"]) for t in metrics["tools"]]
    assert (name, outcome) == ("get_time", "ok")


async def test_a_client_that_never_answers_is_timed_out_and_the_caller_hears_the_apology(
    components: Components,
) -> None:
    conversation, events = await _ask_the_time(components, None, timeout_s=1.0)
    assert [e["code"] for e in conversation.errors] == ["tool_timeout"]
    (turn,) = conversation.turns
    assert turn.reply is not None and turn.reply.startswith("Sorry"), turn.reply
    assert turn.audio_seconds > 0.3  # the apology is spoken, not silence
    (metrics,) = [e for e in events if e["type"] == "turn.metrics"]
    assert [t["outcome"] for t in metrics["tools"]] == ["timeout"]
