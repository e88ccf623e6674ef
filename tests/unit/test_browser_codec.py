"""Protocol v1 codec: recorded client messages in, wire messages out."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioStart,
    ErrorNotice,
    PlaybackPause,
    ReplyText,
    SessionEnded,
    SpeechStarted,
    SpeechStopped,
    ToolCalled,
    ToolResult,
    ToolTiming,
    TranscriptText,
    TurnMetrics,
)
from agent.errors import ProtocolError
from agent.ports import ToolCall, ToolSpec
from agent.wires.browser import codec as browser
from agent.wires.browser import tools as tooling
from tests.fuzzing import JSON_VALUES, budget


def code_of(text: str) -> str:
    with pytest.raises(ProtocolError) as info:
        browser.decode_text(text)
    return info.value.code


def test_session_start_defaults_and_fields() -> None:
    msg = browser.decode_text('{"type":"session.start","sample_rate":16000,"voice":null}')
    assert msg == browser.SessionStart(sample_rate=16000, voice=None, output_sample_rate=None)
    msg = browser.decode_text('{"type":"session.start","sample_rate":48000,"voice":"ana","output_sample_rate":16000}')
    assert msg == browser.SessionStart(sample_rate=48000, voice="ana", output_sample_rate=16000)
    assert browser.decode_text('{"type":"session.end"}') == browser.SessionEnd()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("not json", "bad_json"),
        ("[1,2]", "bad_json"),
        ('"string"', "bad_json"),
        ("[" * 100000, "bad_json"),
        ('{"type":"dance"}', "unknown_type"),
        ('{"kind":"session.start"}', "bad_message"),
        ('{"type":5}', "bad_message"),
        ('{"type":"session.start","sample_rate":44100}', "unsupported_sample_rate"),
        ('{"type":"session.start","sample_rate":"16000"}', "unsupported_sample_rate"),
        ('{"type":"session.start","sample_rate":true}', "unsupported_sample_rate"),
        ('{"type":"session.start","sample_rate":16000,"output_sample_rate":11025}', "unsupported_sample_rate"),
        ('{"type":"session.start","sample_rate":16000,"voice":7}', "bad_message"),
        ('{"type":"session.start","sample_rate":16000,"voice":""}', "bad_message"),
        ('{"type":"session.start","sample_rate":' + "9" * 5000 + "}", "bad_json"),
    ],
)
def test_bad_text_frames_have_codes(text: str, code: str) -> None:
    assert code_of(text) == code


def test_audio_frame_checks() -> None:
    ok = b"\x00\x01" * 1600  # 100 ms at 16 kHz
    assert browser.check_audio(ok, 16000, 100) is ok
    with pytest.raises(ProtocolError) as odd:
        browser.check_audio(b"\x00\x01\x02", 16000, 100)
    assert odd.value.code == "bad_audio"
    with pytest.raises(ProtocolError) as long:
        browser.check_audio(ok + b"\x00\x00", 16000, 100)
    assert long.value.code == "frame_too_long"


def test_encode_every_server_event() -> None:
    def j(event: object) -> dict[str, object]:
        wire = browser.encode(event)  # type: ignore[arg-type]
        assert isinstance(wire, str)
        return json.loads(wire)  # type: ignore[no-any-return]

    assert j(SpeechStarted(120)) == {"type": "speech.started", "audio_ms": 120}
    assert j(SpeechStopped(2, 900)) == {"type": "speech.stopped", "turn": 2, "audio_ms": 900}
    assert j(TranscriptText(2, "hi", language="en")) == {
        "type": "transcript",
        "turn": 2,
        "text": "hi",
        "language": "en",
    }
    assert j(TranscriptText(3, "Hallo", language="de"))["language"] == "de"
    assert j(ReplyText(2, "Hel", False)) == {"type": "reply.delta", "turn": 2, "text": "Hel"}
    assert j(ReplyText(2, "Hello.", True)) == {"type": "reply.done", "turn": 2, "text": "Hello."}
    assert j(AudioStart(2, 24000)) == {"type": "audio.start", "turn": 2, "sample_rate": 24000}
    assert j(AudioEnd(2)) == {"type": "audio.end", "turn": 2}
    assert j(ErrorNotice("x", "y")) == {"type": "error", "code": "x", "message": "y"}
    assert j(ErrorNotice("x", "y", 3))["turn"] == 3
    assert j(SessionEnded("bye")) == {"type": "session.ended", "reason": "bye"}
    metrics = j(TurnMetrics(2, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 700, 800, False))
    assert metrics["type"] == "turn.metrics"
    assert metrics["voice_to_voice_ms"] == 6.0
    assert set(metrics) >= {"turn", "endpoint_ms", "asr_ms", "llm_first_text_ms", "tts_first_audio_ms", "interrupted"}
    assert browser.encode(AudioChunk(2, b"\x01\x02")) == b"\x01\x02"
    assert j(PlaybackPause(2, 1840)) == {"type": "playback.pause", "turn": 2, "played_ms": 1840}


def test_session_start_capabilities() -> None:
    def start(extra: str) -> browser.SessionStart:
        message = browser.decode_text('{"type": "session.start"' + extra + "}")
        assert isinstance(message, browser.SessionStart)
        return message

    assert start("").capabilities == frozenset()
    assert start(', "capabilities": ["playback.pause", "telepathy"]').capabilities == {"playback.pause"}
    for bad in ('"playback.pause"', "[1]", '{"a": 1}', "[" + ", ".join(['"x"'] * 17) + "]", '["' + "x" * 65 + '"]'):
        with pytest.raises(ProtocolError) as caught:
            start(', "capabilities": ' + bad)
        assert caught.value.code == "bad_message"
    started = json.loads(browser.session_started("abc", 16000, 24000, "v", frozenset({"playback.pause"})))
    assert started["capabilities"] == ["playback.pause"]


def test_session_started_message() -> None:
    msg = json.loads(browser.session_started("abc", 16000, 24000, "local-preview"))
    assert msg == {
        "type": "session.started",
        "session_id": "abc",
        "protocol": 1,
        "input_sample_rate": 16000,
        "output_sample_rate": 24000,
        "voice": "local-preview",
        "capabilities": [],
        "language": "auto",
        "tools": [],
    }


def test_pre_session_messages_carry_an_optional_token() -> None:
    start = browser.decode_text('{"type":"session.start","token":"abc"}')
    assert isinstance(start, browser.SessionStart) and start.token == "abc"
    assert browser.decode_text('{"type":"voices.list","token":"abc"}') == browser.VoicesList(token="abc")
    assert browser.decode_text('{"type":"voices.list"}') == browser.VoicesList(token=None)
    begin = browser.decode_text(
        '{"type":"voice.enroll.begin","name":"a","consent":"yes","size":3,"token":"t","speaker":"Ana Lima"}'
    )
    assert isinstance(begin, browser.EnrollBegin) and (begin.token, begin.speaker) == ("t", "Ana Lima")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"type":"session.start","token":5}', "bad_message"),
        ('{"type":"session.start","token":{"a":1}}', "bad_message"),
        ('{"type":"voices.list","token":["x"]}', "bad_message"),
        ('{"type":"session.start","token":"' + "t" * 4097 + '"}', "unauthorized"),
        (
            '{"type":"voice.enroll.begin","name":"a","consent":"y","size":3,"token":"' + "t" * 4097 + '"}',
            "unauthorized",
        ),
        ('{"type":"voice.enroll.begin","name":"a","consent":"y","size":3,"speaker":7}', "bad_message"),
        (
            '{"type":"voice.enroll.begin","name":"a","consent":"y","size":3,"speaker":"' + "s" * 201 + '"}',
            "bad_message",
        ),
    ],
)
def test_bad_tokens_and_speakers_have_codes(text: str, code: str) -> None:
    assert code_of(text) == code


def test_the_codecs_do_not_import_settings_or_the_runtime() -> None:
    """The codec is pure: the rates it accepts come from ``agent.audio.rates``, not the settings.

    (Every codec's purity is also an import contract in ``.importlinter``; the rest of agent/wires/browser is the
    wire, which runs on the runtime.)"""
    import ast
    from pathlib import Path

    for path in [Path(browser.__file__), Path(tooling.__file__)]:
        tree = ast.parse(path.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert not {m for m in imported if m == "agent.config" or m.startswith("agent.runtime")}, path.name


def test_session_start_language() -> None:
    def start(**fields: object) -> browser.SessionStart:
        message = browser.decode_text(json.dumps({"type": "session.start", **fields}))
        assert isinstance(message, browser.SessionStart)
        return message

    assert start().language is None
    assert start(language="auto").language is None
    assert start(language="de").language == "de"
    assert start(language="ko-KR").language == "ko"
    for bad in ("nl", 7, ["de"], "x" * 100):
        with pytest.raises(ProtocolError) as caught:
            start(language=bad)
        assert caught.value.code == "bad_message"
    started = json.loads(browser.session_started("abc", 16000, 24000, "v", language="de"))
    assert started["language"] == "de"


WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city now.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def declared(tools: object) -> tuple[ToolSpec, ...]:
    message = browser.decode_text(json.dumps({"type": "session.start", "tools": tools}))
    assert isinstance(message, browser.SessionStart)
    return message.tools


def test_session_start_declares_client_tools_in_every_openai_shape() -> None:
    expected = ToolSpec(
        "get_weather", "The weather in a city now.", json.dumps(WEATHER["parameters"]), runs_on="client"
    )
    assert declared([WEATHER]) == (expected,)
    assert declared([{"type": "function", **WEATHER}]) == (expected,)
    assert declared([{"type": "function", "function": WEATHER}]) == (expected,)
    bare = declared([{"name": "hang_up"}, {"name": "get-time_2", "description": "", "parameters": None}])
    assert [(t.name, t.description, json.loads(t.parameters), t.runs_on) for t in bare] == [
        ("hang_up", "", {"type": "object", "properties": {}}, "client"),
        ("get-time_2", "", {"type": "object", "properties": {}}, "client"),
    ]
    assert declared(None) == () and declared([]) == ()
    start = browser.decode_text('{"type": "session.start"}')
    assert isinstance(start, browser.SessionStart) and start.tools == ()


def _nest(levels: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize(
    ("tools", "says"),
    [
        ({"name": "a"}, "must be a list"),
        ("get_time", "must be a list"),
        ([{"name": f"t{i}"} for i in range(33)], "at most 32"),
        (["get_time"], "tools[0] must be an object"),
        ([{"description": "no name"}], "tools[0].name"),
        ([{"name": "get time"}], "tools[0].name"),
        ([{"name": "get_time\n"}], "tools[0].name"),
        ([{"name": "x" * 65}], "tools[0].name"),
        ([{"name": "héllo"}], "tools[0].name"),
        ([{"name": 7}], "tools[0].name"),
        ([{"name": "a"}, {"name": "b"}, {"name": "a"}], "'a' is declared twice"),
        ([{"type": "code_interpreter"}], "type 'function'"),
        ([{"type": "function", "function": "get_time"}], "tools[0].function must be an object"),
        ([{"type": "function", "function": {"name": "a b"}}], "tools[0].function.name"),
        ([{"name": "a", "description": 5}], "description"),
        ([{"name": "a", "description": "d" * 2049}], "description"),
        ([{"name": "a", "description": "\ud800"}], "lone surrogate"),
        ([{"name": "a", "parameters": {"properties": {}}}], '"type": "object"'),
        ([{"name": "a", "parameters": {"type": "string"}}], '"type": "object"'),
        ([{"name": "a", "parameters": "{}"}], '"type": "object"'),
        ([{"name": "a", "parameters": {"type": "object", "properties": []}}], "properties must be an object"),
        ([{"name": "a", "parameters": _nest(40)}], "deeper than 32"),
        ([{"name": "a", "parameters": {"type": "object", "description": "x" * 16400}}], "over 16384"),
    ],
)
def test_bad_tool_declarations_are_refused_with_what_is_wrong(tools: object, says: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        declared(tools)
    assert caught.value.code == "bad_message"
    assert says in caught.value.message


def test_a_schema_with_nan_is_refused() -> None:
    text = '{"type":"session.start","tools":[{"name":"a","parameters":{"type":"object","default":NaN}}]}'
    assert code_of(text) == "bad_message"


def test_session_started_names_the_declared_tools() -> None:
    tools = declared([WEATHER, {"name": "hang_up"}])
    started = json.loads(browser.session_started("abc", 16000, 24000, "v", tools=tools))
    assert started["tools"] == ["get_weather", "hang_up"]


def test_tool_result_output_and_error() -> None:
    def result(**fields: object) -> object:
        return browser.decode_text(json.dumps({"type": "tool.result", **fields}))

    assert result(call_id="c1", output="Sunny, 21 °C") == ToolResult("c1", "Sunny, 21 °C")
    assert result(call_id="c1", output={"temp": 21, "sky": "sunny"}) == ToolResult("c1", '{"temp": 21, "sky": "sunny"}')
    assert result(call_id="c1", output=[1, "€"]) == ToolResult("c1", '[1, "€"]')
    assert result(call_id="c1", output=None) == ToolResult("c1", "null")
    assert result(call_id="c1", output="") == ToolResult("c1", "")
    assert result(call_id="c1", error="no such city") == ToolResult("c1", "no such city", ok=False)
    assert result(call_id="c1", error={"code": 404}) == ToolResult("c1", '{"code": 404}', ok=False)


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ('"output": "x"', "call_id"),
        ('"call_id": 5, "output": "x"', "call_id"),
        ('"call_id": "", "output": "x"', "call_id"),
        ('"call_id": "' + "c" * 257 + '", "output": "x"', "call_id"),
        ('"call_id": "c1"', "exactly one of output"),
        ('"call_id": "c1", "output": "x", "error": "y"', "exactly one of output"),
        ('"call_id": "c1", "output": {"t": NaN}', "no NaN"),
        ('"call_id": "c1", "output": "\ud800"', "lone surrogate"),
        ('"call_id": "\udfff", "output": "x"', "lone surrogate"),
    ],
)
def test_bad_tool_results_are_refused(fields: str, says: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        browser.decode_text('{"type": "tool.result", ' + fields + "}")
    assert caught.value.code == "bad_message"
    assert says in caught.value.message


@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ('{"city": "Paris"}', {"city": "Paris"}),
        ("{}", {}),
        ('{"city": "Par', '{"city": "Par'),
        ('["Paris"]', '["Paris"]'),
        ('{"t": NaN}', '{"t": NaN}'),
        ("", ""),
    ],
)
def test_tool_call_sends_the_arguments_as_an_object_when_they_are_one(arguments: str, sent: object) -> None:
    wire = browser.encode(ToolCalled(3, ToolCall("call_1", "get_weather", arguments)))
    assert isinstance(wire, str)
    assert json.loads(wire) == {
        "type": "tool.call",
        "turn": 3,
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": sent,
    }


def test_turn_metrics_list_the_tool_calls() -> None:
    timings = (ToolTiming("get_weather", 412.5, "ok"), ToolTiming("book", 10000.0, "timeout"))
    wire = browser.encode(TurnMetrics(2, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 700, 800, False, tools=timings))
    assert isinstance(wire, str)
    assert json.loads(wire)["tools"] == [
        {"name": "get_weather", "ms": 412.5, "outcome": "ok"},
        {"name": "book", "ms": 10000.0, "outcome": "timeout"},
    ]
    plain = browser.encode(TurnMetrics(2, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 700, 800, False))
    assert isinstance(plain, str) and json.loads(plain)["tools"] == []


@given(st.lists(JSON_VALUES | st.fixed_dictionaries({"name": JSON_VALUES, "parameters": JSON_VALUES}), max_size=4))
@budget(300)
def test_any_tools_field_is_a_declaration_or_bad_message(tools: list[object]) -> None:
    try:
        specs = declared(tools)
    except ProtocolError as exc:
        assert exc.code == "bad_message" and len(exc.message) < 400
        return
    for spec in specs:
        assert json.loads(spec.parameters)["type"] == "object"
        spec.description.encode("utf-8")


@given(st.dictionaries(st.sampled_from(["call_id", "output", "error"]), JSON_VALUES, max_size=3))
@budget(300)
def test_any_tool_result_is_a_result_or_bad_message(fields: dict[str, object]) -> None:
    try:
        message = browser.decode_text(json.dumps({"type": "tool.result", **fields}))
    except ProtocolError as exc:
        assert exc.code == "bad_message" and len(exc.message) < 400
        return
    assert isinstance(message, ToolResult)
    (message.call_id + message.output).encode("utf-8")
