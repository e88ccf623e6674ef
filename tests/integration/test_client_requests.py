"""The CLI client asks a loopback server for its language, and prints it with the transcripts."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.server import ServerConnection, serve

from agent.audio.wav import write_wav
from clients.cli import EXIT_OK, parse_args, run
from clients.protocol_client import converse


class LanguageServer:
    """Records ``session.start``; answers one turn, transcribed in ``heard_in``, as soon as audio arrives."""

    def __init__(self, heard_in: str | None) -> None:
        self.heard_in = heard_in
        self.starts: list[dict[str, object]] = []
        self.url = ""

    async def handler(self, ws: ServerConnection) -> None:
        start = json.loads(await ws.recv())
        self.starts.append(start)
        started = {"type": "session.started", "session_id": "s1", "protocol": 1, "input_sample_rate": 16000,
                   "output_sample_rate": 24000, "voice": "joe", "capabilities": []}  # fmt: skip
        if "language" in start:
            started["language"] = start["language"]
        await ws.send(json.dumps(started))
        answered = False
        async for message in ws:
            if isinstance(message, bytes) and not answered:
                answered = True
                transcript = {"type": "transcript", "turn": 1, "text": "Wie spät ist es?"}
                if self.heard_in is not None:
                    transcript["language"] = self.heard_in
                for msg in (
                    {"type": "speech.stopped", "turn": 1, "audio_ms": 100},
                    transcript,
                    {"type": "reply.done", "turn": 1, "text": "Es ist acht Uhr."},
                    {"type": "turn.metrics", "turn": 1, "interrupted": False},
                ):
                    await ws.send(json.dumps(msg))
            elif isinstance(message, str) and json.loads(message)["type"] == "session.end":
                await ws.send(json.dumps({"type": "session.ended", "reason": "client"}))
                await ws.close(1000)
                return


@pytest.fixture
async def german() -> AsyncIterator[LanguageServer]:
    fake = LanguageServer(heard_in="de")
    async with serve(fake.handler, "127.0.0.1", 0) as server:
        fake.url = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}/ws"
        yield fake


async def test_the_cli_asks_for_its_language_and_prints_it_with_transcripts(
    german: LanguageServer, tmp_path: Path
) -> None:
    wav = tmp_path / "in.wav"
    write_wav(wav, bytes(3200), 16000)  # 100 ms
    args = parse_args(["--url", german.url, "--wav", str(wav), "--language", "de-DE", "--json",
                       "--trailing-silence", "0.1", "--timeout", "30"])  # fmt: skip
    stdout, stderr = io.StringIO(), io.StringIO()
    assert await run(args, stdout=stdout, stderr=stderr) == EXIT_OK, stderr.getvalue()
    (start,) = german.starts
    assert start["language"] == "de"  # the tag, normalised to the code
    err = stderr.getvalue()
    assert "voice joe, language de" in err
    assert "turn 1 heard [de (Deutsch)]: 'Wie spät ist es?'" in err
    (line,) = stdout.getvalue().splitlines()
    assert json.loads(line)["language"] == "de"


async def test_without_a_language_nothing_is_asked_and_an_older_servers_transcripts_print_as_before(
    tmp_path: Path,
) -> None:
    fake = LanguageServer(heard_in=None)
    async with serve(fake.handler, "127.0.0.1", 0) as server:
        url = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}/ws"
        lines: list[str] = []
        conversation = await converse(url, bytes(3200), trailing_silence_s=0.1, timeout_s=30,
                                      on_event=lambda m: lines.append(str(m.get("type"))))  # fmt: skip
        auto = await converse(url, bytes(3200), language="auto", trailing_silence_s=0.1, timeout_s=30)
    assert "language" not in fake.starts[0]
    assert fake.starts[1]["language"] == "auto"
    (turn,) = conversation.turns
    assert turn.transcript == "Wie spät ist es?" and turn.language is None
    assert "language" not in turn.summary()
    assert auto.session["language"] == "auto"
    assert "transcript" in lines
