"""Clients carry the access token as ``Authorization: Bearer`` on the upgrade (never in the URL)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import WebSocketException

from clients import twilio_client
from clients.cli import parse_args
from clients.protocol_client import bearer, converse


def test_cli_token_flag_and_environment_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_TOKEN", raising=False)
    assert parse_args(["--wav", "a.wav"]).token is None
    assert parse_args(["--wav", "a.wav", "--token", "T1"]).token == "T1"
    monkeypatch.setenv("AGENT_TOKEN", "T2")
    assert parse_args(["--wav", "a.wav"]).token == "T2"
    assert parse_args(["--wav", "a.wav", "--token", "T3"]).token == "T3"


def test_bearer_header() -> None:
    assert bearer(None) == {} and bearer("") == {}
    assert bearer("abc") == {"Authorization": "Bearer abc"}


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
