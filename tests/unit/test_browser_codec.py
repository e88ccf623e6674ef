"""Protocol v1 codec: recorded client messages in, wire messages out."""

from __future__ import annotations

import json

import pytest

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
    TranscriptText,
    TurnMetrics,
)
from agent.errors import ProtocolError
from agent.wires.browser import codec as browser


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
    assert j(TranscriptText(2, "hi")) == {"type": "transcript", "turn": 2, "text": "hi", "language": "en"}
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

    for path in [Path(browser.__file__)]:
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
