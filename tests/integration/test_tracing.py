"""A call's OpenTelemetry trace, as a collector receives it: a real server exporting OTLP over HTTP to a receiver
in this test, which decodes the protobuf with OpenTelemetry's own proto package.

One call of two spoken turns (the first calls the built-in clock tool) against the OpenAI-compatible model
emulator, and one refused upgrade. The trace is flushed by closing the exporter (``Tracing.close``), which posts
every pending span before it returns, so nothing here waits on a timer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websockets
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.adapters.otel_traces import OtelTracing
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.adapters.tool_box import ToolBox
from agent.config import LlmSettings, ToolSettings, TracingSettings, TtsSettings
from agent.config.tool_file import parse_tools
from agent.front_door.listener import running_server
from agent.ports import ToolCall
from agent.runtime.components import Components
from agent.wiring import build_tracing
from clients.protocol_client import converse_utterances
from testing.emulators.openai import OpenAIEmulator
from testing.emulators.sagemaker import SageMakerEmulator
from testing.emulators.tool_calls import Call, ReplyItem
from testing.speech import speech_pcm16
from testing.tool_servers import HttpToolServer, McpToolServer
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.sagemaker_fixtures import aws_env, emulator, store, voice  # noqa: F401

pytestmark = pytest.mark.models
MS = 1e6  # nanoseconds


@dataclass(slots=True)
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: dict[str, int] = field(default_factory=dict)

    @property
    def ms(self) -> float:
        return (self.end - self.start) / MS


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    assert kind in ("string_value", "bool_value", "int_value", "double_value"), kind  # never bytes, never arrays
    return getattr(value, kind)


class Receiver:
    """An OTLP/HTTP traces endpoint on loopback: ``POST /v1/traces`` with a protobuf ``ExportTraceServiceRequest``."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.service_names: set[str] = set()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def _traces(self, request: web.Request) -> web.Response:
        assert request.content_type == "application/x-protobuf"
        export = ExportTraceServiceRequest.FromString(await request.read())
        for resource_spans in export.resource_spans:
            for attribute in resource_spans.resource.attributes:
                if attribute.key == "service.name":
                    self.service_names.add(_value(attribute.value))
            for scope in resource_spans.scope_spans:
                for s in scope.spans:
                    attributes = {a.key: _value(a.value) for a in s.attributes}
                    span = Span(
                        s.name,
                        s.trace_id.hex(),
                        s.span_id.hex(),
                        s.parent_span_id.hex(),
                        s.start_time_unix_nano,
                        s.end_time_unix_nano,
                        attributes,
                        {e.name: e.time_unix_nano for e in s.events},
                    )
                    for e in s.events:
                        span.attributes |= {f"{e.name}.{a.key}": _value(a.value) for a in e.attributes}
                    self.spans.append(span)
        body = ExportTraceServiceResponse().SerializeToString()
        return web.Response(body=body, content_type="application/x-protobuf")

    async def __aenter__(self) -> Receiver:
        app = web.Application()
        app.router.add_post("/v1/traces", self._traces)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    def named(self, name: str) -> list[Span]:
        return [span for span in self.spans if span.name == name]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with Receiver() as r:
        yield r


def _model() -> Any:
    """The first request calls the clock; every later one answers in words."""
    asked: list[int] = []

    def reply(body: dict[str, Any]) -> list[ReplyItem]:
        asked.append(1)
        if len(asked) == 1:
            return [Call("get_time", "{}")]
        return ["It is a fine", " time of day."] if len(asked) == 2 else ["You are", " welcome."]

    return reply


async def test_a_call_is_one_trace_whose_turn_spans_match_turn_metrics(
    components: Components, receiver: Receiver
) -> None:
    settings = local_settings(tracing={"endpoint": receiver.url, "service_name": "agent-under-test"})
    tracing = build_tracing(settings)
    assert tracing is not None
    async with OpenAIEmulator(reply=_model()) as model_server:
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=model_server.base_url))
        served = dataclasses.replace(components, llm=llm, tracing=tracing)
        try:
            async with running_server(settings, lambda: served) as server:
                await server.wait_ready()
                utterances = [speech_pcm16("What time is it now?"), speech_pcm16("Thank you very much.")]
                conversation = await converse_utterances(server.ws_url, utterances, 16000, gap_s=1.0)
                with pytest.raises(websockets.InvalidStatus):  # an upgrade to no endpoint: refused, not_found
                    async with websockets.connect(server.ws_url.rsplit("/", 1)[0] + "/nowhere"):
                        pass
        finally:
            await llm.aclose()
    await asyncio.to_thread(tracing.close)  # posts every pending span to the receiver (on this loop) first
    await until(lambda: len(receiver.named("call")) == 1, what="the call's root span at the receiver")

    assert conversation.errors == []
    turns = [turn for turn in conversation.turns if turn.metrics is not None]
    spoken = [turn for turn in turns if turn.transcript]
    assert len(spoken) == 2, [(t.turn, t.transcript) for t in conversation.turns]
    assert receiver.service_names == {"agent-under-test"}

    # one trace per call: the root span, every turn under it, every stage under its turn
    (call,) = receiver.named("call")
    assert call.parent_id == ""
    assert call.attributes["call.wire"] == "browser"
    assert call.attributes["call.tenant"] == "default"
    assert call.attributes["call.language"] == "en"
    assert call.attributes["call.voice"]
    assert call.attributes["call.turns"] == len(turns)
    traced = [span for span in receiver.spans if span.name != "upgrade.refused"]
    assert {span.trace_id for span in traced} == {call.trace_id}
    by_number = {span.attributes["turn.number"]: span for span in receiver.named("turn")}
    assert sorted(by_number) == sorted(turn.turn for turn in turns)
    for turn in turns:
        span = by_number[turn.turn]
        assert span.parent_id == call.span_id
        assert call.start <= span.start <= span.end <= call.end
        _matches(span, turn.metrics or {}, [s for s in traced if s.parent_id == span.span_id])

    first, second = (by_number[turn.turn] for turn in spoken)
    tool = next(s for s in traced if s.parent_id == first.span_id and s.name == "tool")
    assert tool.attributes["tool.name"] == "get_time" and tool.attributes["tool.outcome"] == "ok"
    assert "tool.arguments" not in tool.attributes  # content is opt-in
    assert first.attributes["turn.tool_calls"] == 1 and second.attributes["turn.tool_calls"] == 0

    # nothing said, by the caller or the agent, is in any attribute (AGENT_TRACING__CONTENT is off)
    said = [turn.transcript for turn in spoken] + [turn.reply for turn in spoken if turn.reply]
    values = [str(v) for span in receiver.spans for v in span.attributes.values()]
    for text in said:
        assert text is not None and not any(text.strip() in value for value in values), text
    assert not any(key in span.attributes for span in receiver.spans for key in ("turn.transcript", "turn.reply"))

    # the model's requests named their turn's span as parent (W3C traceparent)
    parents = [request.headers.get("traceparent") for request in model_server.requests]
    assert len(parents) == 3 and all(parents), parents
    for parent in parents:
        version, trace_id, span_id, flags = (parent or "").split("-")
        assert (version, trace_id) == ("00", call.trace_id) and int(flags, 16) & 1  # sampled
        assert span_id in (first.span_id, second.span_id)
    assert [p.split("-")[2] for p in parents if p] == [first.span_id, first.span_id, second.span_id]

    # the refused upgrade: a span of its own, with the reason and the counts of its log line
    (refused,) = receiver.named("upgrade.refused")
    assert refused.trace_id != call.trace_id and refused.parent_id == ""
    assert refused.attributes["refusal.reason"] == "not_found"
    assert refused.attributes["http.response.status_code"] == 404
    assert refused.attributes["url.path"] == "/nowhere"
    assert refused.attributes["refusal.sessions_bound"] == settings.server.max_sessions
    assert refused.attributes["refusal.sessions"] == 0


def _matches(turn: Span, metrics: dict[str, Any], stages: list[Span]) -> None:
    """``turn``'s figures are the ``turn.metrics`` the client got, and its stages last what they say (1 ms)."""
    for name, value in metrics.items():
        if name not in ("type", "turn", "tools") and value is not None:
            assert turn.attributes[f"turn.{name}"] == pytest.approx(value), name
    assert stages == sorted(stages, key=lambda s: s.start)
    for stage in stages:
        assert turn.start <= stage.start <= stage.end <= turn.end, stage.name
    named = {stage.name: stage for stage in stages}
    expected = {
        "end_of_turn": metrics["endpoint_ms"],
        "recognition": metrics["asr_ms"],
        "llm": metrics["llm_total_ms"],
        "recognition.speculative": metrics["spec_asr_ms"],
    }
    for name, ms in expected.items():
        if ms is None:
            assert name not in named, name
        else:
            assert named[name].ms == pytest.approx(ms, abs=1.0), name
    if metrics["llm_first_text_ms"] is not None:
        llm = named["llm"]
        assert (llm.events["first_token"] - llm.start) / MS == pytest.approx(metrics["llm_first_text_ms"], abs=1.0)
    if metrics["tts_first_audio_ms"] is not None:
        tts = named["tts"]
        assert (tts.events["first_audio"] - tts.start) / MS == pytest.approx(metrics["tts_first_audio_ms"], abs=1.0)
    if "end_of_turn" in named and "recognition" in named:  # one instant ends the wait and starts recognition
        assert named["end_of_turn"].end == named["recognition"].start
    tools = [stage for stage in stages if stage.name == "tool"]
    assert [t.ms for t in tools] == pytest.approx([t["ms"] for t in metrics["tools"]], abs=1.0)


async def test_a_turns_voice_requests_to_sagemaker_carry_its_trace_context(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    exporter = InMemorySpanExporter()
    tracing = OtelTracing(TracingSettings(endpoint="http://127.0.0.1:9"), exporter)
    tts = SageMakerTTS(TtsSettings(backend="sagemaker", endpoint_url=emulator.url), store)
    call = tracing.call(time.time_ns(), {})
    try:
        with call.turn_context(1):  # as the runtime starts a turn's speech task
            task = asyncio.create_task(_speak(tts, "Your order will arrive on Tuesday."))
        assert await task
        untraced = await _speak(tts, "And this one is no turn's.")
    finally:
        await tts.aclose()
        call.end(time.time_ns(), {})
        tracing.close()
    assert untraced
    (root,) = exporter.get_finished_spans()
    assert root.context is not None
    traced, plain = emulator.requests
    assert traced.headers["traceparent"].split("-")[1] == f"{root.context.trace_id:032x}"
    assert "traceparent" not in plain.headers


async def _speak(tts: SageMakerTTS, text: str) -> bytes:
    return b"".join([chunk async for chunk in tts.synthesize(text, "default/alice")])


async def test_a_turns_http_and_mcp_tool_requests_carry_its_trace_context() -> None:
    exporter = InMemorySpanExporter()
    tracing = OtelTracing(TracingSettings(endpoint="http://127.0.0.1:9"), exporter)
    call = tracing.call(time.time_ns(), {})
    with McpToolServer() as mcp_server:
        async with HttpToolServer() as http_server:
            http = {"name": "get_weather", "url": http_server.url("/weather"), "parameters": {"type": "object"}}
            mcp = {"name": "wx", "url": mcp_server.url, "prefix": "wx_"}
            data = {
                "allowed_hosts": ["127.0.0.1"],
                "private_networks": ["127.0.0.0/8", "::1"],
                "tenants": {"default": {"http": [http], "mcp": [mcp]}},
            }
            box = ToolBox(ToolSettings(), parse_tools(data, environ={}, base=Path(".")))
            try:
                for turn in (1, 2):
                    with call.turn_context(turn):  # as the runtime starts a turn's tool task
                        work = [
                            asyncio.create_task(box.run("default", ToolCall(f"h{turn}", "get_weather", "{}"))),
                            asyncio.create_task(
                                box.run("default", ToolCall(f"m{turn}", "wx_get_forecast", '{"city": "Oslo"}'))
                            ),
                        ]
                    await asyncio.gather(*work)
            finally:
                await box.aclose()
    call.end(time.time_ns(), {})
    tracing.close()
    (root,) = exporter.get_finished_spans()
    assert root.context is not None
    trace_id = f"{root.context.trace_id:032x}"
    http_parents = [seen.headers["traceparent"] for seen in http_server.seen]
    mcp_parents = {headers.get("traceparent") for headers in mcp_server.headers_seen}
    assert len(http_parents) == 2 and {p.split("-")[1] for p in http_parents} == {trace_id}
    one, two = (p.split("-")[2] for p in http_parents)
    assert one != two  # each turn's own span
    assert {p.split("-")[2] for p in mcp_parents if p} == {one, two}, mcp_parents
