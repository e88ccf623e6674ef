"""The CLI over a real socket, against a scripted fake server that speaks protocol v1."""

from __future__ import annotations

import asyncio
import io
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from websockets.asyncio.server import ServerConnection, serve

from agent.audio.wav import write_wav
from clients.cli import EXIT_CONNECT, EXIT_FAILED, EXIT_OK, parse_args, run
from clients.protocol_client import converse

OUT_RATE = 24000
REPLY_AUDIO = (np.sin(np.arange(OUT_RATE // 10) * 0.05) * 8000).astype("<i2").tobytes()  # 100 ms
METRICS = {
    "endpoint_ms": 600.0,
    "asr_ms": 12.0,
    "llm_first_text_ms": 1.0,
    "tts_first_audio_ms": 3.0,
    "voice_to_voice_ms": 616.0,
    "interrupted": False,
}


@dataclass
class FakeServer:
    """Answers one turn once ``speech_bytes`` of audio arrived; records what the client sent."""

    speech_bytes: int
    refuse: bool = False
    start: dict[str, object] = field(default_factory=dict)
    frame_sizes: list[int] = field(default_factory=list)
    got_end: bool = False
    url: str = ""

    async def handler(self, ws: ServerConnection) -> None:
        self.start = json.loads(await ws.recv())
        if self.refuse:
            await ws.send(json.dumps({"type": "error", "code": "unknown_voice", "message": "no voice 'x'"}))
            await ws.close(1008, "unknown voice")
            return
        out_rate = int(self.start.get("output_sample_rate") or OUT_RATE)  # type: ignore[call-overload]
        await ws.send(json.dumps({
            "type": "session.started", "session_id": "s1", "protocol": 1,
            "input_sample_rate": self.start["sample_rate"], "output_sample_rate": out_rate, "voice": "joe",
        }))  # fmt: skip
        received = 0
        answered = False
        async for message in ws:
            if isinstance(message, str):
                if json.loads(message)["type"] == "session.end":
                    self.got_end = True
                    await ws.send(json.dumps({"type": "session.ended", "reason": "client"}))
                    await ws.close(1000)
                    return
                continue
            self.frame_sizes.append(len(message))
            received += len(message)
            if received >= self.speech_bytes and not answered:
                answered = True
                await self._answer(ws)

    async def _answer(self, ws: ServerConnection) -> None:
        for msg in (
            {"type": "speech.started", "audio_ms": 0},
            {"type": "speech.stopped", "turn": 1, "audio_ms": 500},
            {"type": "something.new", "turn": 1},  # unknown types are ignored
            {"type": "transcript", "turn": 1, "text": "hello there"},
            {"type": "reply.delta", "turn": 1, "text": "Hi! "},
            {"type": "reply.delta", "turn": 1, "text": "How can I help?"},
            {"type": "reply.done", "turn": 1, "text": "Hi! How can I help?"},
            {"type": "audio.start", "turn": 1, "sample_rate": OUT_RATE},
        ):
            await ws.send(json.dumps(msg))
        await ws.send(REPLY_AUDIO[:2400])
        await ws.send(REPLY_AUDIO[2400:])
        await ws.send(json.dumps({"type": "audio.end", "turn": 1}))
        await asyncio.sleep(0.05)
        await ws.send(json.dumps({"type": "turn.metrics", "turn": 1, **METRICS}))


@pytest.fixture
async def fake_server() -> AsyncIterator[FakeServer]:
    fake = FakeServer(speech_bytes=16000)  # 0.5 s at 16 kHz
    async with serve(fake.handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        fake.url = f"ws://127.0.0.1:{port}/ws"
        yield fake


def _input_wav(path: Path) -> None:
    """0.5 s of a loud tone, stereo 48 kHz, so the CLI has to convert it."""
    t = np.arange(24000) / 48000
    tone = (0.5 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
    sf.write(path, np.stack([tone, tone], axis=1), 48000, subtype="PCM_16")


async def test_cli_json_and_out_wav(fake_server: FakeServer, tmp_path: Path) -> None:
    wav_in, wav_out = tmp_path / "in.wav", tmp_path / "out.wav"
    _input_wav(wav_in)
    args = parse_args(
        ["--url", fake_server.url, "--wav", str(wav_in), "--out", str(wav_out), "--json", "--voice", "joe",
         "--timeout", "10"]
    )  # fmt: skip
    stdout, stderr = io.StringIO(), io.StringIO()
    status = await run(args, stdout=stdout, stderr=stderr)

    assert status == EXIT_OK, stderr.getvalue()
    lines = stdout.getvalue().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {
        "turn": 1,
        "transcript": "hello there",
        "reply": "Hi! How can I help?",
        "audio_seconds": 0.1,
        "metrics": {"type": "turn.metrics", "turn": 1, **METRICS},
    }
    data, rate = sf.read(str(wav_out), dtype="int16")
    assert rate == OUT_RATE
    assert data.tobytes() == REPLY_AUDIO

    assert fake_server.start == {
        "type": "session.start", "sample_rate": 16000, "voice": "joe", "capabilities": ["playback.pause"],
    }  # fmt: skip
    assert set(fake_server.frame_sizes) == {640}
    # 0.5 s of speech, then at least 1 s of trailing silence before session.end.
    assert len(fake_server.frame_sizes) >= 25 + 50
    assert fake_server.got_end
    err = stderr.getvalue()
    assert "turn 1 heard: 'hello there'" in err
    assert "turn 1 reply: 'Hi! How can I help?'" in err
    assert "voice-to-voice 616 ms" in err
    assert "session ended: client" in err


async def test_converse_reports_client_timing(fake_server: FakeServer) -> None:
    speech = (np.sin(np.arange(8000) * 0.1) * 10000).astype("<i2").tobytes()
    events: list[str] = []
    conv = await converse(
        fake_server.url, speech, 16000, output_sample_rate=16000, trailing_silence_s=0.2,
        on_event=lambda m: events.append(str(m["type"])),
    )  # fmt: skip
    assert conv.session_id == "s1"
    assert conv.output_sample_rate == 16000
    assert fake_server.start["output_sample_rate"] == 16000
    assert "capabilities" not in fake_server.start  # none asked for: the server behaves as before them
    assert conv.close_code == 1000
    assert conv.ended_reason == "client"
    assert not conv.timed_out
    assert conv.errors == []
    assert events[0] == "session.started" and events[-1] == "session.ended"
    [turn] = conv.turns
    assert turn.done and turn.audio_ended
    assert turn.speech_end_audio_ms == 500
    assert bytes(turn.audio) == REPLY_AUDIO
    assert turn.last_voice_sent_at is not None and turn.first_audio_at is not None
    assert turn.last_voice_sent_at == pytest.approx(conv.segment_ends[0], abs=0.005)  # input ends in speech
    v2v = turn.client_voice_to_voice_ms
    assert v2v is not None and 0 <= v2v < 500
    assert conv.audio() == REPLY_AUDIO


async def test_session_error_before_start_exits_1(tmp_path: Path) -> None:
    fake = FakeServer(speech_bytes=0, refuse=True)
    wav_in = tmp_path / "in.wav"
    write_wav(wav_in, bytes(3200), 16000)
    async with serve(fake.handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        stderr = io.StringIO()
        status = await run(
            parse_args(["--url", f"ws://127.0.0.1:{port}/ws", "--wav", str(wav_in), "--voice", "x"]),
            stdout=io.StringIO(),
            stderr=stderr,
        )
    assert status == EXIT_FAILED
    assert "server error [unknown_voice]: no voice 'x'" in stderr.getvalue()
    assert "did not start the session [unknown_voice]" in stderr.getvalue()


async def test_connection_refused_exits_2(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    wav_in = tmp_path / "in.wav"
    write_wav(wav_in, bytes(3200), 16000)
    stderr = io.StringIO()
    status = await run(
        parse_args(["--url", f"ws://127.0.0.1:{port}/ws", "--wav", str(wav_in)]),
        stdout=io.StringIO(),
        stderr=stderr,
    )
    assert status == EXIT_CONNECT
    assert f"cannot connect to ws://127.0.0.1:{port}/ws" in stderr.getvalue()


async def test_unreadable_input_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio at all")
    stderr = io.StringIO()
    status = await run(parse_args(["--wav", str(bad)]), stdout=io.StringIO(), stderr=stderr)
    assert status == EXIT_FAILED
    assert "cannot read" in stderr.getvalue()
