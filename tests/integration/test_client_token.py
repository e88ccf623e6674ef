"""The protocol and Twilio test clients send the token in the upgrade's header, to a loopback recorder."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import WebSocketException

from clients import twilio_client
from clients.protocol_client import converse


class Recorder:
    def __init__(self) -> None:
        self.authorization: list[str] = []
        self.paths: list[str] = []

    async def handler(self, ws: ServerConnection) -> None:
        assert ws.request is not None
        self.authorization.extend(ws.request.headers.get_all("Authorization"))
        self.paths.append(ws.request.path)
        async for message in ws:
            if not isinstance(message, str):
                continue
            kind = json.loads(message).get("type")
            if kind == "session.start":
                await ws.send(json.dumps({"type": "session.started", "input_sample_rate": 16000}))
            elif kind == "session.end":
                await ws.send(json.dumps({"type": "session.ended"}))
                await ws.close()
            elif "event" in json.loads(message):  # a Twilio caller: enough seen
                await ws.close()


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[Recorder, str]]:
    rec = Recorder()
    async with serve(rec.handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield rec, f"ws://127.0.0.1:{port}"


async def test_protocol_client_sends_the_token_in_the_header(recorder: tuple[Recorder, str]) -> None:
    rec, base = recorder
    await converse(f"{base}/ws", b"", token="secret-token", trailing_silence_s=0.02, timeout_s=5)
    assert rec.authorization == ["Bearer secret-token"]
    assert "secret-token" not in rec.paths[0]
    await converse(f"{base}/ws", b"", trailing_silence_s=0.02, timeout_s=5)
    assert rec.authorization == ["Bearer secret-token"]  # no token, no header


async def test_twilio_client_sends_the_token_in_the_header(recorder: tuple[Recorder, str]) -> None:
    rec, base = recorder
    with contextlib.suppress(WebSocketException):
        await twilio_client.call(f"{base}/twilio", b"\x00\x00" * 160, token="tw-token", settle_s=0.01, timeout_s=2)
    assert rec.authorization == ["Bearer tw-token"]
