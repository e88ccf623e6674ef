"""A real server whose language model is the OpenAI-compatible emulator with scripted replies, so a test knows
what the agent will say and can read what the model was told (``emulator.requests``)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings, Settings
from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from testing.emulators import openai as oai
from testing.emulators.openai import OpenAIEmulator
from tests.integration.conftest import local_settings


@asynccontextmanager
async def scripted_server(
    components: Components, replies: Sequence[Sequence[str]], settings: Settings | None = None
) -> AsyncIterator[tuple[RunningServer, OpenAIEmulator]]:
    """``components`` with the emulator as their language model, answering ``replies`` in turn (each a list of
    streamed pieces), served with ``settings`` (default: the local ones); ready when it is yielded."""
    async with OpenAIEmulator() as emulator:
        for reply in replies:
            emulator.script(oai.text_reply(list(reply)))
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
        try:
            served = dataclasses.replace(components, llm=llm)
            async with running_server(settings or local_settings(), lambda: served) as server:
                await server.wait_ready()
                yield server, emulator
        finally:
            await llm.aclose()
