"""The OpenAI-compatible adapter against the local SSE chat-completions emulator."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import ChatMessage, ToolCall
from testing.emulators import openai as oai
from testing.emulators.bedrock import Hang, Pause
from testing.emulators.openai import Disconnect, OpenAIEmulator
from testing.emulators.scripted import gated, one_by_one
from testing.waits import within

KEY = "sk-test-secret-123"
HISTORY = (
    ChatMessage("system", "Be brief."),
    ChatMessage("user", "Hi"),
    ChatMessage("assistant", "Hello!"),
    ChatMessage("user", "Tell me a joke"),
)


@pytest.fixture
async def emulator() -> AsyncIterator[OpenAIEmulator]:
    async with OpenAIEmulator(api_key=KEY) as emu:
        yield emu


def _settings(emu: OpenAIEmulator, **over: Any) -> LlmSettings:
    values: dict[str, Any] = {
        "backend": "openai",
        "model": "llama3.2:3b",
        "base_url": emu.base_url,
        "api_key": KEY,
        "max_tokens": 77,
        "temperature": 0.2,
        "read_timeout_s": 5.0,
    }
    values.update(over)
    return LlmSettings(**values)


@pytest.fixture
async def llm(emulator: OpenAIEmulator) -> AsyncIterator[OpenAICompatLLM]:
    adapter = OpenAICompatLLM(_settings(emulator))
    yield adapter
    await adapter.aclose()


async def _collect(llm: OpenAICompatLLM, history: tuple[ChatMessage, ...] = HISTORY) -> list[str | ToolCall]:
    return [d async for d in llm.stream_reply(history, language="en")]


async def test_streams_text_and_sends_the_request_shape(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    assert await _collect(llm) == ["Hello", " from", " vLLM."]
    (req,) = emulator.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.body == {
        "model": "llama3.2:3b",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Tell me a joke"},
        ],
        "stream": True,
        "max_tokens": 77,
        "temperature": 0.2,
    }
    assert emulator.completed_streams == 1


async def test_settings_system_prompt_when_history_has_none(emulator: OpenAIEmulator) -> None:
    adapter = OpenAICompatLLM(_settings(emulator, system_prompt="From settings."))
    try:
        await _collect(adapter, (ChatMessage("user", "Hi"),))
    finally:
        await adapter.aclose()
    assert emulator.requests[0].body["messages"][0] == {"role": "system", "content": "From settings."}


async def test_reasoning_content_is_not_spoken(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script(oai.text_reply(["Why", " not?"], reasoning_texts=["Let me think.", " A joke."]))
    assert await _collect(llm) == ["Why", " not?"]


async def test_split_and_multiline_sse_events_are_parsed(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    whole = oai.content("Hi") + b": keep-alive comment\n\n" + oai.content(" you") + oai.DONE
    emulator.script([whole[:7], Pause(0.01), whole[7:40], whole[40:]])
    assert await _collect(llm) == ["Hi", " you"]


async def test_deltas_arrive_incrementally(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    steps, gates = gated(oai.text_reply(["one", " two", " three"], delay_s=1.0))
    emulator.script(steps)
    assert await one_by_one(llm.stream_reply(HISTORY, language="en"), gates) == ["one", " two", " three"]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (429, ProviderUnavailable),
        (503, ProviderUnavailable),
        (504, ProviderTimeout),
        (400, ProviderError),
        (404, ProviderError),
        (500, ProviderError),
    ],
)
async def test_http_errors_are_mapped(
    llm: OpenAICompatLLM, emulator: OpenAIEmulator, status: int, expected: type[ProviderError]
) -> None:
    emulator.fail(status, "injected failure")
    with pytest.raises(expected) as info:
        await _collect(llm)
    assert type(info.value) is expected
    assert f"HTTP {status}" in str(info.value) and "injected failure" in str(info.value)


async def test_wrong_key_is_an_error_and_the_key_is_never_logged(
    emulator: OpenAIEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = _settings(emulator, api_key="sk-wrong-key-456")
    adapter = OpenAICompatLLM(settings)
    try:
        with pytest.raises(ProviderError, match="HTTP 401") as info:
            await _collect(adapter)
    finally:
        await adapter.aclose()
    assert "sk-wrong-key-456" not in str(info.value)
    assert "sk-wrong-key-456" not in repr(settings) and "sk-wrong-key-456" not in caplog.text


async def test_error_object_mid_stream(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script([oai.content("Part"), oai.stream_error("CUDA out of memory")])
    got: list[str | ToolCall] = []
    with pytest.raises(ProviderError, match="CUDA out of memory"):
        async for d in llm.stream_reply(HISTORY, language="en"):
            got.append(d)
    assert got == ["Part"]


async def test_broken_stream_is_an_error(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script([oai.content("Part"), Pause(0.02), Disconnect()])
    got: list[str | ToolCall] = []
    with pytest.raises(ProviderError):
        async for d in llm.stream_reply(HISTORY, language="en"):
            got.append(d)
    assert got == ["Part"]


async def test_stream_ending_without_done_is_an_error(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script([oai.content("Part")])
    with pytest.raises(ProviderError, match=r"\[DONE\]"):
        await _collect(llm)


async def test_malformed_chunk_is_an_error(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script([oai.sse("{not json"), oai.DONE])
    with pytest.raises(ProviderError, match="malformed"):
        await _collect(llm)


async def test_a_stalled_stream_times_out(emulator: OpenAIEmulator) -> None:
    adapter = OpenAICompatLLM(_settings(emulator, read_timeout_s=0.2))
    emulator.script([oai.content("Hel"), Hang()])  # stalled until the client gives up: only its timeout ends it
    try:
        with pytest.raises(ProviderTimeout):
            await within(_collect(adapter), what="the read timeout")
    finally:
        await adapter.aclose()


async def test_unreachable_server_is_unavailable() -> None:
    adapter = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url="http://127.0.0.1:9/v1"))
    try:
        with pytest.raises(ProviderUnavailable):
            await _collect(adapter)
    finally:
        await adapter.aclose()


async def test_closing_the_generator_closes_the_http_stream(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script([oai.content("First"), Hang()])
    stream = llm.stream_reply(HISTORY, language="en")
    assert await anext(stream) == "First"
    await stream.aclose()
    await within(emulator.client_closed.wait(), what="the client to close its stream")


async def test_cancelling_the_turn_closes_the_http_stream(llm: OpenAICompatLLM, emulator: OpenAIEmulator) -> None:
    emulator.script([oai.content("First"), Hang()])
    got = asyncio.Event()

    async def turn() -> None:
        async for _ in llm.stream_reply(HISTORY, language="en"):
            got.set()

    task = asyncio.create_task(turn())
    await within(got.wait(), what="the first delta")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await within(emulator.client_closed.wait(), what="the client to close its stream")
    assert emulator.completed_streams == 0
    # The pool still works for the next turn.
    assert await _collect(llm) == ["Hello", " from", " vLLM."]


def test_wiring_builds_the_configured_backend() -> None:
    from agent.adapters.bedrock_llm import BedrockLLM
    from agent.config import Settings
    from agent.wiring import build_llm

    assert isinstance(build_llm(Settings(llm={"backend": "openai", "model": "m"})), OpenAICompatLLM)
    assert isinstance(build_llm(Settings(llm={"backend": "bedrock", "model": "m", "region": "us-east-1"})), BedrockLLM)
    with pytest.raises(ValueError, match=r"llm\.model is required"):
        Settings(llm={"backend": "openai"})
