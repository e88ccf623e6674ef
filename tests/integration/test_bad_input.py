"""Bad input over a real socket: a clear error event or close code, the server stays up, others untouched."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agent.runtime.components import Components
from agent.runtime.server import RunningServer, running_server
from tests.integration.conftest import local_settings
from tests.speech import silence, speech_pcm16

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})


async def next_json(ws: ClientConnection, wait_s: float = 5.0) -> dict[str, Any]:
    while True:
        message = await asyncio.wait_for(ws.recv(), wait_s)
        if isinstance(message, str):
            return json.loads(message)  # type: ignore[no-any-return]


async def expect_error(ws: ClientConnection, code: str) -> dict[str, Any]:
    message = await next_json(ws)
    assert message["type"] == "error", message
    assert message["code"] == code, message
    assert message["message"]
    return message


async def started(ws: ClientConnection) -> dict[str, Any]:
    await ws.send(START)
    message = await next_json(ws)
    assert message["type"] == "session.started", message
    return message


def http_get(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def test_non_json_then_valid_start(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send("hello?")
        await expect_error(ws, "bad_json")
        await started(ws)


async def test_unknown_type_before_and_after_start(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send('{"type":"session.dance"}')
        await expect_error(ws, "unknown_type")
        await started(ws)
        await ws.send('{"type":"session.dance"}')
        await expect_error(ws, "unknown_type")
        await ws.send('{"type":"session.start","sample_rate":16000}')
        await expect_error(ws, "already_started")


async def test_audio_before_session_start(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send(silence(20))
        await expect_error(ws, "not_started")
        await started(ws)


async def test_unsupported_sample_rate(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send('{"type":"session.start","sample_rate":44100}')
        error = await expect_error(ws, "unsupported_sample_rate")
        assert "16000" in error["message"]
        await started(ws)


async def test_unknown_voice(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send('{"type":"session.start","sample_rate":16000,"voice":"nobody"}')
        error = await expect_error(ws, "unknown_voice")
        assert "nobody" in error["message"]


async def test_odd_length_and_too_long_frames_keep_the_session(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await started(ws)
        await ws.send(b"\x00" * 641)
        await expect_error(ws, "bad_audio")
        await ws.send(b"\x00" * 3202)  # 100 ms + one sample at 16 kHz
        await expect_error(ws, "frame_too_long")
        await ws.send(silence(20))
        await ws.send('{"type":"session.end"}')
        assert (await next_json(ws))["type"] == "session.ended"
        await ws.wait_closed()
        assert ws.close_code == 1000


async def test_oversized_message_closes_1009_and_others_are_untouched(server: RunningServer) -> None:
    async with connect(server.ws_url) as bystander:
        await started(bystander)
        async with connect(server.ws_url, max_size=None) as attacker:
            await started(attacker)
            with pytest.raises(ConnectionClosed):
                await attacker.send(b"\x00" * (70 * 1024))
                await attacker.recv()
            assert attacker.close_code == 1009
        # the bystander still gets a full turn
        await bystander.send(b"")  # empty frame is harmless
        pcm = silence(300) + speech_pcm16("Hello there.") + silence(900)
        for i in range(0, len(pcm), 3200):
            await bystander.send(pcm[i : i + 3200])
        types: list[str] = []
        while "turn.metrics" not in types:
            types.append((await next_json(bystander, 20))["type"])
        assert "transcript" in types and "audio.start" in types
    status, body = await asyncio.to_thread(http_get, server.http_url + "/healthz")
    assert status == 200 and body["ready"] is True


async def test_compression_is_off(server: RunningServer) -> None:
    async with connect(server.ws_url, compression="deflate") as ws:
        assert ws.response is not None
        assert "Sec-WebSocket-Extensions" not in ws.response.headers
        assert "Server" not in ws.response.headers


async def test_start_timeout_closes_1008(components: Components) -> None:
    settings = local_settings(server={"start_timeout_s": 0.3})
    async with running_server(settings, lambda: components) as srv:
        await srv.wait_ready()
        async with connect(srv.ws_url) as ws:
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 5)
            assert ws.close_code == 1008
            assert "session.start" in (ws.close_reason or "")


async def test_unknown_path_is_404(server: RunningServer) -> None:
    status, _ = await asyncio.to_thread(http_get, server.http_url + "/nope")
    assert status == 404
    with pytest.raises(InvalidStatus) as info:
        async with connect(server.ws_url.replace("/ws", "/other")):
            pass
    assert info.value.response.status_code == 404


async def test_health_is_503_until_models_are_loaded(components: Components) -> None:
    release = threading.Event()

    def slow_load() -> Components:
        release.wait(10)
        return components

    async with running_server(local_settings(), slow_load) as srv:
        status, body = await asyncio.to_thread(http_get, srv.http_url + "/healthz")
        assert status == 503 and body["ready"] is False
        with pytest.raises(InvalidStatus) as info:
            async with connect(srv.ws_url):
                pass
        assert info.value.response.status_code == 503
        release.set()
        await srv.wait_ready()
        status, body = await asyncio.to_thread(http_get, srv.http_url + "/healthz")
        assert status == 200 and body == {"status": "ok", "ready": True, "sessions": 0}


async def test_failed_load_reports_in_health(components: Components) -> None:
    def broken() -> Components:
        raise RuntimeError("model file missing")

    async with running_server(local_settings(), broken) as srv:
        with pytest.raises(RuntimeError):
            await srv.wait_ready()
        status, body = await asyncio.to_thread(http_get, srv.http_url + "/healthz")
        assert status == 503 and body["status"] == "failed" and "model file missing" in body["error"]


async def test_session_limit_refuses_with_503(components: Components) -> None:
    settings = local_settings(server={"max_sessions": 1})
    async with running_server(settings, lambda: components) as srv:
        await srv.wait_ready()
        async with connect(srv.ws_url) as first:
            await started(first)
            with pytest.raises(InvalidStatus) as info:
                async with connect(srv.ws_url):
                    pass
            assert info.value.response.status_code == 503
