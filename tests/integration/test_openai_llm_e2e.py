"""A spoken turn through a real server whose language model is the OpenAI-compatible adapter."""

from __future__ import annotations

import dataclasses

import pytest

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.front_door.listener import running_server
from agent.runtime.components import Components
from clients.protocol_client import converse
from testing.emulators import openai as oai
from testing.emulators.openai import OpenAIEmulator
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models


async def test_spoken_turn_uses_the_streamed_model_reply(components: Components) -> None:
    sentence = "What is the capital of France?"
    async with OpenAIEmulator() as emulator:
        emulator.script(oai.text_reply(["The capital", " of France", " is Paris."], delay_s=0.02))
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
        try:
            served = dataclasses.replace(components, llm=llm)
            async with running_server(local_settings(), lambda: served) as server:
                await server.wait_ready()
                pcm = silence(300) + speech_pcm16(sentence) + silence(200)
                conversation = await converse(server.ws_url, pcm, 16000, realtime=False, timeout_s=30)
        finally:
            await llm.aclose()
    assert conversation.errors == []
    (turn,) = conversation.turns
    assert turn.reply.strip() == "The capital of France is Paris."
    assert turn.audio_seconds > 0.5
    messages = emulator.requests[0].body["messages"]
    assert messages[0]["role"] == "system"
    assert messages[-1] == {"role": "user", "content": turn.transcript}
    assert "capital of france" in (turn.transcript or "").lower(), turn.transcript
