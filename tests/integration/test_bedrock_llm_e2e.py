"""A spoken turn through a real server whose language model is the Bedrock adapter (on the emulator)."""

from __future__ import annotations

import dataclasses

import pytest
from aiobotocore.session import get_session

from agent.adapters.bedrock_llm import BedrockLLM
from agent.config import LlmSettings
from agent.front_door.listener import running_server
from agent.runtime.components import Components
from clients.protocol_client import converse
from testing.emulators import bedrock
from testing.emulators.bedrock import BedrockEmulator
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models


async def test_spoken_turn_uses_the_bedrock_reply(components: Components) -> None:
    sentence = "What is the capital of France?"
    session = get_session()
    session.set_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    async with BedrockEmulator() as emulator:
        emulator.script(bedrock.text_reply(["Paris", " is the capital."], reasoning=["Easy."], delay_s=0.02))
        settings = LlmSettings(backend="bedrock", model="m", region="us-east-1", endpoint_url=emulator.url)
        llm = BedrockLLM(settings, session=session)
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
    assert turn.reply.strip() == "Paris is the capital."
    body = emulator.requests[0].body
    assert body["system"][0]["text"]
    assert body["messages"][-1]["role"] == "user"
    assert body["messages"][-1]["content"][0]["text"] == turn.transcript, turn.transcript
