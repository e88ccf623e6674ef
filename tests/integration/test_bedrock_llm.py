"""The Bedrock adapter through the real aiobotocore client against the local ConverseStream emulator."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiobotocore.session import AioSession, get_session

from agent.adapters.bedrock_converse import to_converse
from agent.adapters.bedrock_llm import BedrockLLM
from agent.config import LlmSettings
from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import ChatMessage, ToolCall
from testing.emulators import bedrock
from testing.emulators.bedrock import BedrockEmulator, Hang
from testing.emulators.scripted import gated, one_by_one
from testing.waits import within

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
HISTORY = (
    ChatMessage("system", "Be brief."),
    ChatMessage("user", "Hi there"),
)


_SESSION = get_session()  # shared so the service model is loaded once
_SESSION.set_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


def _session() -> AioSession:
    return _SESSION


@pytest.fixture
async def emulator() -> AsyncIterator[BedrockEmulator]:
    async with BedrockEmulator() as emu:
        yield emu


def _settings(emu: BedrockEmulator, **over: Any) -> LlmSettings:
    values: dict[str, Any] = {
        "backend": "bedrock",
        "model": MODEL,
        "region": "us-west-2",
        "endpoint_url": emu.url,
        "max_attempts": 1,
        "max_tokens": 123,
        "temperature": 0.3,
        "read_timeout_s": 5.0,
    }
    values.update(over)
    return LlmSettings(**values)


@pytest.fixture
async def llm(emulator: BedrockEmulator) -> AsyncIterator[BedrockLLM]:
    adapter = BedrockLLM(_settings(emulator), session=_session())
    yield adapter
    await adapter.aclose()


async def _collect(llm: BedrockLLM, history: tuple[ChatMessage, ...] = HISTORY) -> list[str | ToolCall]:
    return [delta async for delta in llm.stream_reply(history, language="en")]


async def test_streams_text_and_sends_the_request_shape(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    assert await _collect(llm) == ["Hello", " from", " Bedrock."]
    (req,) = emulator.requests
    assert req.model_id == MODEL
    assert req.headers["Authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert req.body["system"] == [{"text": "Be brief."}]
    assert req.body["messages"] == [{"role": "user", "content": [{"text": "Hi there"}]}]
    assert req.body["inferenceConfig"] == {"maxTokens": 123, "temperature": 0.3}
    assert emulator.completed_streams == 1


async def test_client_is_reused_across_turns(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    await _collect(llm)
    await _collect(llm)
    assert len(emulator.requests) == 2


async def test_history_is_merged_to_alternate_from_a_user_message(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    history = (
        ChatMessage("system", "Sys."),
        ChatMessage("assistant", "Hello! How can I help?"),
        ChatMessage("user", "What is"),
        ChatMessage("user", "the time?"),
        ChatMessage("assistant", "Noon."),
        ChatMessage("user", "  "),
        ChatMessage("user", "Thanks"),
    )
    assert await _collect(llm, history)
    body = emulator.requests[0].body
    assert body["system"] == [{"text": "Sys."}]
    assert [(m["role"], m["content"][0]["text"]) for m in body["messages"]] == [
        ("user", "What is\n\nthe time?"),
        ("assistant", "Noon."),
        ("user", "Thanks"),
    ]


async def test_settings_system_prompt_is_used_when_history_has_none(emulator: BedrockEmulator) -> None:
    adapter = BedrockLLM(_settings(emulator, system_prompt="From settings."), session=_session())
    try:
        await _collect(adapter, (ChatMessage("user", "Hi"),))
    finally:
        await adapter.aclose()
    assert emulator.requests[0].body["system"] == [{"text": "From settings."}]


def test_history_without_a_user_message_is_an_error() -> None:
    with pytest.raises(ProviderError):
        to_converse((ChatMessage("system", "x"), ChatMessage("assistant", "hi")))


async def test_reasoning_is_not_spoken(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    emulator.script(bedrock.text_reply(["Four."], reasoning=["The user asks 2+2.", " That is 4."]))
    assert await _collect(llm) == ["Four."]


async def test_tool_input_for_a_block_that_did_not_start_as_a_tool_use_is_an_error(
    llm: BedrockLLM, emulator: BedrockEmulator
) -> None:
    steps = bedrock.text_reply(["Four."])
    steps.insert(-3, bedrock.tool_use_delta('{"x": 1}', index=1))
    emulator.script(steps)
    got: list[str | ToolCall] = []
    with pytest.raises(ProviderError, match="no tool use"):
        async for delta in llm.stream_reply(HISTORY, language="en"):
            got.append(delta)
    assert got == ["Four."]


async def test_deltas_arrive_incrementally(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    steps, gates = gated(bedrock.text_reply(["one", " two", " three"], delay_s=1.0))
    emulator.script(steps)
    assert await one_by_one(llm.stream_reply(HISTORY, language="en"), gates) == ["one", " two", " three"]


@pytest.mark.parametrize(
    ("status", "error_type", "expected"),
    [
        (429, "ThrottlingException", ProviderUnavailable),
        (503, "ServiceUnavailableException", ProviderUnavailable),
        (400, "ValidationException", ProviderError),
        (403, "AccessDeniedException", ProviderError),
        (408, "ModelTimeoutException", ProviderTimeout),
        (424, "ModelErrorException", ProviderError),
    ],
)
async def test_errors_before_the_stream_are_mapped(
    llm: BedrockLLM, emulator: BedrockEmulator, status: int, error_type: str, expected: type[ProviderError]
) -> None:
    emulator.fail(status, error_type, "injected failure")
    with pytest.raises(expected) as info:
        await _collect(llm)
    assert type(info.value) is expected
    assert error_type in str(info.value) and "injected failure" in str(info.value)
    assert info.value.provider == "bedrock"


async def test_throttling_is_retried_when_attempts_allow(emulator: BedrockEmulator) -> None:
    adapter = BedrockLLM(_settings(emulator, max_attempts=2), session=_session())
    emulator.fail(429, "ThrottlingException", "slow down")
    try:
        assert await _collect(adapter) == ["Hello", " from", " Bedrock."]
    finally:
        await adapter.aclose()
    assert len(emulator.requests) == 2


async def test_invalid_conversation_is_rejected_by_the_service_shape(
    llm: BedrockLLM, emulator: BedrockEmulator
) -> None:
    adapter = BedrockLLM(_settings(emulator, temperature=1.5), session=_session())
    try:
        with pytest.raises(ProviderError, match="ValidationException"):
            await _collect(adapter)
    finally:
        await adapter.aclose()


@pytest.mark.parametrize(
    ("exception_type", "expected"),
    [
        ("modelStreamErrorException", ProviderError),
        ("throttlingException", ProviderUnavailable),
        ("serviceUnavailableException", ProviderUnavailable),
        ("validationException", ProviderError),
    ],
)
async def test_mid_stream_exceptions_are_mapped_after_some_text(
    llm: BedrockLLM, emulator: BedrockEmulator, exception_type: str, expected: type[ProviderError]
) -> None:
    emulator.script(
        [
            bedrock.message_start(),
            bedrock.text_delta("Partial"),
            bedrock.stream_exception(exception_type, "broke mid-stream", originalStatusCode=500),
        ]
    )
    got: list[str | ToolCall] = []
    with pytest.raises(expected) as info:
        async for delta in llm.stream_reply(HISTORY, language="en"):
            got.append(delta)
    assert got == ["Partial"]
    assert type(info.value) is expected and exception_type in str(info.value)


async def test_a_stalled_stream_times_out(emulator: BedrockEmulator) -> None:
    adapter = BedrockLLM(_settings(emulator, read_timeout_s=0.2), session=_session())
    emulator.script([bedrock.message_start(), bedrock.text_delta("Hel"), Hang()])  # only the timeout ends it
    try:
        with pytest.raises(ProviderTimeout):
            await within(_collect(adapter), what="the read timeout")
    finally:
        await adapter.aclose()


async def test_unreachable_endpoint_is_unavailable() -> None:
    settings = LlmSettings(
        backend="bedrock", model=MODEL, region="us-west-2", endpoint_url="http://127.0.0.1:9", max_attempts=1
    )
    adapter = BedrockLLM(settings, session=_session())
    try:
        with pytest.raises(ProviderUnavailable):
            await _collect(adapter)
    finally:
        await adapter.aclose()


async def test_closing_the_generator_closes_the_http_stream(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    emulator.script([bedrock.message_start(), bedrock.text_delta("First"), Hang()])
    stream = llm.stream_reply(HISTORY, language="en")
    assert await anext(stream) == "First"
    await stream.aclose()
    await within(emulator.client_closed.wait(), what="the client to close its stream")


async def test_cancelling_the_turn_closes_the_http_stream(llm: BedrockLLM, emulator: BedrockEmulator) -> None:
    emulator.script([bedrock.message_start(), bedrock.text_delta("First"), Hang()])
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
