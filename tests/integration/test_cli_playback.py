"""The CLI client against a loopback server that pauses and resumes or clears its reply."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from websockets.asyncio.server import ServerConnection, serve

from clients.playback import CAPABILITIES
from clients.protocol_client import converse
from tests.unit.test_cli_playback import RATE, _audio


@dataclass
class PausingServer:
    """Answers the first audio frame with a turn whose reply is paused at 300 ms and then resumed or cleared."""

    resume: bool
    start: dict[str, object] = field(default_factory=dict)
    url: str = ""

    async def handler(self, ws: ServerConnection) -> None:
        self.start = json.loads(await ws.recv())
        await ws.send(json.dumps({
            "type": "session.started", "session_id": "s1", "protocol": 1, "input_sample_rate": 16000,
            "output_sample_rate": RATE, "voice": "joe", "capabilities": self.start.get("capabilities", []),
        }))  # fmt: skip
        answered = False
        async for message in ws:
            if isinstance(message, str):
                if json.loads(message)["type"] == "session.end":
                    await ws.send(json.dumps({"type": "session.ended", "reason": "client"}))
                    await ws.close(1000)
                    return
            elif not answered:
                answered = True
                await self._answer(ws)

    async def _answer(self, ws: ServerConnection) -> None:
        for msg in (
            {"type": "speech.started", "audio_ms": 0},
            {"type": "speech.stopped", "turn": 1, "audio_ms": 500},
            {"type": "reply.done", "turn": 1, "text": "One two three."},
            {"type": "audio.start", "turn": 1, "sample_rate": RATE},
        ):
            await ws.send(json.dumps(msg))
        for _ in range(10):
            await ws.send(_audio(40, 100))
        await ws.send(json.dumps({"type": "audio.end", "turn": 1}))
        await ws.send(json.dumps({"type": "playback.pause", "turn": 1, "played_ms": 300}))
        if self.resume:
            for _ in range(5):
                await ws.send(_audio(40, 200))
            await ws.send(json.dumps({"type": "audio.end", "turn": 1}))
            metrics: dict[str, bool | int | None] = {"interrupted": False, "heard_ms": None}
        else:
            await ws.send(json.dumps({"type": "playback.clear", "turn": 1}))
            metrics = {"interrupted": True, "heard_ms": 300}
        await ws.send(json.dumps({"type": "turn.metrics", "turn": 1, **metrics}))


@pytest.fixture(params=[True, False], ids=["resumed", "cleared"])
async def pausing_server(request: pytest.FixtureRequest) -> AsyncIterator[PausingServer]:
    fake = PausingServer(resume=request.param)
    async with serve(fake.handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        fake.url = f"ws://127.0.0.1:{port}/ws"
        yield fake


async def test_converse_with_the_capability_keeps_the_reply_as_heard(pausing_server: PausingServer) -> None:
    speech = (5000).to_bytes(2, "little", signed=True) * 1600  # 100 ms at 16 kHz
    events: list[str] = []
    conv = await converse(
        pausing_server.url, speech, 16000, capabilities=CAPABILITIES, trailing_silence_s=0.2, timeout_s=20,
        on_event=lambda m: events.append(str(m["type"])),
    )  # fmt: skip
    assert pausing_server.start["capabilities"] == ["playback.pause"]
    assert conv.session["capabilities"] == ["playback.pause"]
    assert "playback.pause" in events and not conv.timed_out
    [turn] = conv.turns
    assert turn.done and turn.pauses == [300.0]
    if pausing_server.resume:
        assert bytes(turn.audio) == _audio(300, 100) + _audio(200, 200)
        assert turn.resumes == 1 and turn.audio_ended
    else:
        assert bytes(turn.audio) == _audio(300, 100)
        assert turn.resumes == 0 and turn.metrics is not None and turn.metrics["interrupted"]
