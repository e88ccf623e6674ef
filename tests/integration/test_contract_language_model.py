"""The ``LanguageModel`` contract, run against every adapter: the local responder, the OpenAI-compatible client
(against ``testing.emulators.openai``) and Bedrock (against ``testing.emulators.bedrock``).

What every adapter does: it streams a conversation's reply as text deltas that join into the reply; a consumer
that closes the stream, or cancels its turn, mid-reply releases what the reply held (the HTTP stream of a remote
model) and the adapter answers the next turn. What every remote adapter does: a vendor failure, before the stream
or in the middle of it, reaches the caller as one of ``agent.errors`` and never as a vendor type. The local
responder has no vendor to fail, so it is not in the failure cases: that is the parametrisation, not a skip.

What every model that calls tools does (the remote adapters, whose services' emulators can be told to call): a
reply that calls tools yields its text deltas, then each call once, complete (its arguments whole, however the
wire cut them), in the order the model made them; a history holding calls and their results, sent back with or
without tools offered, is one the service accepts (its emulator validates it as the service does).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

import pytest
from aiobotocore.session import get_session

from agent.adapters.bedrock_llm import BedrockLLM
from agent.adapters.local_responder import LocalResponder
from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.errors import AgentError, ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import ChatMessage, LanguageModel, ToolCall, ToolSpec
from testing.emulators import bedrock
from testing.emulators import openai as oai
from testing.emulators.bedrock import BedrockEmulator, Hang
from testing.emulators.openai import OpenAIEmulator
from testing.emulators.tool_calls import Call
from testing.waits import within

KEY = "sk-contract"
HISTORY = (
    ChatMessage("system", "Be brief."),
    ChatMessage("user", "Hello there"),
    ChatMessage("assistant", "Hi! How can I help?"),
    ChatMessage("user", "Tell me a story"),
)
LLMS = ["local", "openai", "bedrock"]
REMOTE = ["openai", "bedrock"]
CALLING = ["openai", "bedrock"]
WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city now.",
    '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}',
)
CLOCK = ToolSpec("get_time", "The time now.")


@dataclass(frozen=True, slots=True)
class Failure:
    """A vendor failure a remote adapter must map: ``inject`` arms it on the emulator, ``expected`` is the exact
    ``agent.errors`` type the caller sees."""

    inject: Callable[[], None]
    expected: type[ProviderError]


@dataclass(frozen=True, slots=True)
class LlmCase:
    """One adapter under the contract, with what the contract needs to know about it.

    ``reply``: what it answers ``HISTORY`` (the deltas joined). ``hang_after_first``: makes the next reply stop
    after its first delta and wait, so a test can leave it mid-reply (``None`` where replies never wait: the local
    responder). ``released``: returns once the adapter has let go of an abandoned reply (the emulator saw the
    client drop the stream; at once for the local responder, which holds nothing). ``failures``: the vendor
    failures it must map, by name; ``fail_mid_stream``: one after some text.
    """

    llm: LanguageModel
    reply: str
    hang_after_first: Callable[[], None] | None
    released: Callable[[], Awaitable[None]]
    failures: dict[str, Failure]
    fail_mid_stream: Callable[[], None] | None
    script_calls: Callable[[list[str | Call]], None] | None = None
    """Makes the next reply say and call what it is given (``None``: a model that cannot be told to call)."""
    refusals: Callable[[], list[str]] = list
    """What the service refused so far (its validation messages)."""


async def _nothing_held() -> None:
    return None


def _fixed_now() -> datetime:
    return datetime(2026, 3, 4, 15, 5)


def _local() -> LlmCase:
    responder = LocalResponder(now=_fixed_now)
    return LlmCase(responder, responder.reply_text(HISTORY, language="en"), None, _nothing_held, {}, None)


def _openai(emu: OpenAIEmulator, llm: OpenAICompatLLM) -> LlmCase:
    def hang() -> None:
        emu.script([oai.content("First"), Hang()])

    def mid_stream() -> None:
        emu.script([oai.content("Part"), oai.stream_error("CUDA out of memory")])

    async def released() -> None:
        await within(emu.client_closed.wait(), what="the client to close its stream")

    failures = {
        "throttled": Failure(lambda: emu.fail(429, "slow down"), ProviderUnavailable),
        "down": Failure(lambda: emu.fail(503, "overloaded"), ProviderUnavailable),
        "gateway timeout": Failure(lambda: emu.fail(504, "too slow"), ProviderTimeout),
        "rejected": Failure(lambda: emu.fail(400, "bad request"), ProviderError),
    }

    def calls(items: list[str | Call]) -> None:
        emu.script(oai.model_reply(items))

    return LlmCase(llm, "Hello from vLLM.", hang, released, failures, mid_stream, calls, lambda: emu.refusals)


def _bedrock(emu: BedrockEmulator, llm: BedrockLLM) -> LlmCase:
    def hang() -> None:
        emu.script([bedrock.message_start(), bedrock.text_delta("First"), Hang()])

    def mid_stream() -> None:
        emu.script(
            [
                bedrock.message_start(),
                bedrock.text_delta("Part"),
                bedrock.stream_exception("modelStreamErrorException", "broke", originalStatusCode=500),
            ]
        )

    async def released() -> None:
        await within(emu.client_closed.wait(), what="the client to close its stream")

    failures = {
        "throttled": Failure(lambda: emu.fail(429, "ThrottlingException", "slow down"), ProviderUnavailable),
        "down": Failure(lambda: emu.fail(503, "ServiceUnavailableException", "overloaded"), ProviderUnavailable),
        "gateway timeout": Failure(lambda: emu.fail(408, "ModelTimeoutException", "too slow"), ProviderTimeout),
        "rejected": Failure(lambda: emu.fail(400, "ValidationException", "bad request"), ProviderError),
    }

    def calls(items: list[str | Call]) -> None:
        emu.script(bedrock.model_reply(items))

    return LlmCase(llm, "Hello from Bedrock.", hang, released, failures, mid_stream, calls, lambda: emu.refusals)


@pytest.fixture
async def case(request: pytest.FixtureRequest) -> AsyncIterator[LlmCase]:
    kind: str = request.param
    if kind == "local":
        yield _local()
    elif kind == "openai":
        async with OpenAIEmulator(api_key=KEY) as emu:
            llm = OpenAICompatLLM(
                LlmSettings(backend="openai", model="m", base_url=emu.base_url, api_key=KEY, read_timeout_s=5.0)
            )
            try:
                yield _openai(emu, llm)
            finally:
                await llm.aclose()
    else:
        session = get_session()
        session.set_credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
        async with BedrockEmulator() as emu:
            settings = LlmSettings(
                backend="bedrock", model="m", region="us-west-2", endpoint_url=emu.url, max_attempts=1
            )
            llm_b = BedrockLLM(settings, session=session)
            try:
                yield _bedrock(emu, llm_b)
            finally:
                await llm_b.aclose()


async def _reply(llm: LanguageModel) -> list[str | ToolCall]:
    return [delta async for delta in llm.stream_reply(HISTORY, language="en")]


def _text(deltas: list[str | ToolCall]) -> str:
    assert all(isinstance(delta, str) for delta in deltas), deltas
    return "".join(str(delta) for delta in deltas)


@pytest.mark.parametrize("case", LLMS, indirect=True)
async def test_streams_the_reply_as_text_deltas(case: LlmCase) -> None:
    deltas = await _reply(case.llm)
    assert len(deltas) > 1  # streamed, not handed over whole
    assert all(isinstance(delta, str) and delta for delta in deltas)
    assert _text(deltas) == case.reply


@pytest.mark.parametrize("case", LLMS, indirect=True)
async def test_takes_the_reply_language(case: LlmCase) -> None:
    deltas = [delta async for delta in case.llm.stream_reply(HISTORY, language="de")]
    assert _text(deltas).strip()


@pytest.mark.parametrize("case", LLMS, indirect=True)
async def test_closing_the_stream_mid_reply_releases_it(case: LlmCase) -> None:
    if case.hang_after_first is not None:
        case.hang_after_first()
    stream = case.llm.stream_reply(HISTORY, language="en")
    assert await anext(stream)
    assert isinstance(stream, AsyncGenerator)  # a stream the consumer can close
    await stream.aclose()
    await case.released()
    assert _text(await _reply(case.llm)) == case.reply  # and the next turn is answered


@pytest.mark.parametrize("case", LLMS, indirect=True)
async def test_cancelling_the_turn_mid_reply_releases_it(case: LlmCase) -> None:
    if case.hang_after_first is not None:
        case.hang_after_first()
    first = asyncio.Event()
    proceed = asyncio.Event()

    async def turn() -> None:
        async for _ in case.llm.stream_reply(HISTORY, language="en"):
            first.set()
            await proceed.wait()  # a consumer busy with the delta when the turn is cancelled

    task = asyncio.create_task(turn())
    await within(first.wait(), what="the first delta")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await case.released()
    assert _text(await _reply(case.llm)) == case.reply


@pytest.mark.parametrize("failure", ["throttled", "down", "gateway timeout", "rejected"])
@pytest.mark.parametrize("case", REMOTE, indirect=True)
async def test_vendor_failures_are_ours(case: LlmCase, failure: str) -> None:
    arm = case.failures[failure]
    arm.inject()
    with pytest.raises(AgentError) as caught:
        await _reply(case.llm)
    assert type(caught.value) is arm.expected


@pytest.mark.parametrize("case", REMOTE, indirect=True)
async def test_a_failure_after_some_text_is_ours(case: LlmCase) -> None:
    assert case.fail_mid_stream is not None
    case.fail_mid_stream()
    got: list[str | ToolCall] = []
    with pytest.raises(ProviderError):
        async for delta in case.llm.stream_reply(HISTORY, language="en"):
            got.append(delta)
    assert got == ["Part"]


@pytest.mark.parametrize("case", CALLING, indirect=True)
async def test_a_reply_that_calls_tools_yields_its_text_then_each_call_whole_in_order(case: LlmCase) -> None:
    assert case.script_calls is not None
    weather = '{"city": "Paris", "unit": "celsius"}'
    case.script_calls(["Let me", " look.", Call("get_weather", weather, "c-1", pieces=5), Call("get_time", "", "c-2")])
    got = [item async for item in case.llm.stream_reply(HISTORY, language="en", tools=(WEATHER, CLOCK))]
    assert got == ["Let me", " look.", ToolCall("c-1", "get_weather", weather), ToolCall("c-2", "get_time", "{}")]


@pytest.mark.parametrize("offered", [(WEATHER,), ()], ids=["tools offered", "no tools"])
@pytest.mark.parametrize("case", CALLING, indirect=True)
async def test_a_history_with_calls_and_results_is_accepted(case: LlmCase, offered: tuple[ToolSpec, ...]) -> None:
    history = (
        *HISTORY[:2],
        ChatMessage("assistant", "", (ToolCall("c-1", "get_weather", '{"city": "Paris"}'),)),
        ChatMessage("tool", "18 degrees, sunny", call_id="c-1"),
        ChatMessage("assistant", "It is 18 degrees and sunny."),
        ChatMessage("user", "And in Rome?"),
        ChatMessage("assistant", "Checking.", (ToolCall("c-2", "get_weather", '{"city": "Rome"}'),)),
        ChatMessage("tool", "timed out", call_id="c-2", failed=True),
    )
    deltas = [item async for item in case.llm.stream_reply(history, language="en", tools=offered)]
    assert _text(deltas) == case.reply
    assert case.refusals() == []
