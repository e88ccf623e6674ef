"""``GET /metrics`` on a real server, and session counting around a real WebSocket connection."""

from __future__ import annotations

import asyncio
import urllib.request

from websockets.asyncio.client import connect

from agent.front_door.listener import RunningServer
from testing.waits import until
from tests.unit.test_metrics import parse


def _get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.headers["Content-Type"], response.read().decode()


async def _scrape(server: RunningServer) -> tuple[int, str, str]:
    return await asyncio.to_thread(_get, f"{server.http_url}/metrics")


async def test_metrics_endpoint_answers_prometheus_text(server: RunningServer) -> None:
    status, content_type, body = await _scrape(server)
    assert status == 200
    assert content_type.startswith("text/plain; version=0.0.4")
    _, types, samples = parse(body)
    assert types["voice_agent_turn_latency_seconds"] == "histogram"
    assert ("voice_agent_active_sessions", {}, 0.0) in samples


async def test_open_sessions_are_counted(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        _, _, body = await _scrape(server)
        assert ("voice_agent_active_sessions", {}, 0.0) in parse(body)[2]  # a socket is not a session yet
        assert ("voice_agent_opening_connections", {}, 1.0) in parse(body)[2]
        await ws.send('{"type": "session.start", "sample_rate": 16000}')
        # The session starts once its start is read.
        await until(lambda: server.state.metrics.active_sessions.value() == 1, what="the session to start")
        _, _, body = await _scrape(server)
        assert ("voice_agent_active_sessions", {}, 1.0) in parse(body)[2]
        assert ("voice_agent_opening_connections", {}, 0.0) in parse(body)[2]
        assert ("voice_agent_speaking_calls", {}, 0.0) in parse(body)[2]
    await until(lambda: server.state.metrics.active_sessions.value() == 0, what="the session to end")
    _, _, body = await _scrape(server)
    samples = parse(body)[2]
    assert ("voice_agent_active_sessions", {}, 0.0) in samples
    assert ("voice_agent_sessions_total", {}, 1.0) in samples


async def test_the_process_is_on_metrics_and_its_handles_come_back_after_a_call(server: RunningServer) -> None:
    def figure(body: str, name: str) -> float:
        found = [value for sample, _, value in parse(body)[2] if sample == name]
        assert len(found) == 1, name
        return found[0]

    _, _, before = await _scrape(server)
    assert figure(before, "process_resident_memory_bytes") > 10 * 1024 * 1024
    assert figure(before, "voice_agent_peak_resident_memory_bytes") >= figure(before, "process_resident_memory_bytes")
    assert figure(before, "voice_agent_threads") >= 1
    fds, tasks = figure(before, "process_open_fds"), figure(before, "voice_agent_asyncio_tasks")
    assert fds > 0 and tasks > 0
    async with connect(server.ws_url) as ws:
        # The handler runs once the handshake is done: the socket is then an opening connection (not a session).
        await until(lambda: server.state.occupancy.opening == 1, what="the handler to take the connection")
        _, _, during = await _scrape(server)
        assert figure(during, "process_open_fds") > fds  # the call's socket
        await ws.close()
    seen: dict[str, float] = {}

    async def back() -> bool:
        _, _, after = await _scrape(server)
        seen.update((name, figure(after, name)) for name in ("process_open_fds", "voice_agent_asyncio_tasks"))
        return seen == {"process_open_fds": fds, "voice_agent_asyncio_tasks": tasks}

    await until(back, what=lambda: f"{fds} open fds and {tasks} tasks as before the call, not {seen}")
