"""SIGTERM on a real ``python -m agent`` (real tiny.en and Piper) over real sockets.

One signal drains: ``/healthz`` 503 ``draining``, a new upgrade 503 with ``Retry-After``, the live call hears
its reply to the end, then the goodbye, then close 1001, and the process exits 0. A second signal closes the
call at once (1001) and the process still exits 0. Nothing is timed; waits only guard against a hang.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.core.events import SHUTTING_DOWN
from testing.sockets import free_port, http_get
from testing.speech import silence, speech_pcm16
from testing.waits import until
from tests.integration.conftest import server_env
from tests.integration.test_drain import GOODBYE, START, Heard, heard_until, refused, to_the_close

pytestmark = pytest.mark.models
ROOT = Path(__file__).parents[2]
PATIENCE_S = 120.0  # only against a hang


@dataclass
class Agent:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/healthz"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    async def health(self) -> tuple[int, str]:
        got = await asyncio.to_thread(http_get, self.health_url)
        status, body = got.status, got.json()
        return status, str(body["status"])

    async def health_until(self, wanted: str) -> None:
        async def says() -> bool:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                return (await self.health())[1] == wanted
            except OSError:  # not listening yet
                return False

        await until(says, PATIENCE_S, lambda: f"/healthz to say {wanted}: {self.log.read_text()}", every_s=0.05)

    async def exit_code(self) -> int:
        """The exit code; the log must show no traceback and no task left pending."""
        code = await asyncio.to_thread(self.proc.wait, 120)
        text = self.log.read_text()
        assert "Traceback" not in text and "Task was destroyed" not in text and "ERROR" not in text, text
        return code


def spawn(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "agent", "--port", str(port)], cwd=ROOT, env=env, stdout=out, stderr=out
        )


@asynccontextmanager
async def agent(tmp_path: Path, **settings: str) -> AsyncIterator[Agent]:
    port = free_port()
    env = server_env(**settings)
    log = tmp_path / "agent.log"
    running = Agent(spawn(port, env, log), port, log)
    proc = running.proc
    try:
        await running.health_until("ok")
        yield running
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def ask(ws: ClientConnection, question: str) -> Heard:
    """Start a session, say ``question``, and return once its reply has started to play."""
    heard = Heard()
    await ws.send(START)
    await heard_until(ws, "session.started", heard)
    pcm = silence(300) + speech_pcm16(question) + silence(1500)
    for i in range(0, len(pcm), 3200):  # 100 ms frames, at once: within the input rate's burst
        await ws.send(pcm[i : i + 3200])
    await heard_until(ws, "audio.start", heard)
    return heard


async def test_sigterm_drains_a_live_call_then_exits_0(tmp_path: Path) -> None:
    async with agent(tmp_path, AGENT_SERVER__DRAIN_S="120") as server:
        async with connect(server.ws_url) as ws:
            heard = await ask(ws, "What time is it?")
            server.proc.send_signal(signal.SIGTERM)
            await server.health_until("draining")
            refusal, retry_after = await refused(server.ws_url)
            assert refusal["reason"] == "draining" and int(retry_after) > 0
            await to_the_close(ws, heard)
        assert ws.close_code == 1001 and ws.close_reason == SHUTTING_DOWN
        assert await server.exit_code() == 0, server.log.read_text()

    (reply,) = heard.of("turn.metrics", 1)
    assert not reply["interrupted"] and reply["reply_audio_ms"] > 0
    assert heard.audio[1] >= reply["reply_audio_ms"] * 48  # the whole reply (24 kHz PCM16: 48 bytes a ms)
    assert heard.of("reply.done", 2)[0]["text"] == GOODBYE
    assert heard.audio[2] > 24000  # the goodbye, spoken (over half a second of it)
    assert heard.index("turn.metrics", 1) < heard.index("reply.done", 2)
    assert json.dumps(heard.of("session.ended")[0]["reason"]) == json.dumps(SHUTTING_DOWN)


async def test_a_second_sigterm_closes_the_call_at_once_and_exits_0(tmp_path: Path) -> None:
    async with agent(tmp_path, AGENT_SERVER__DRAIN_S="600") as server:
        async with connect(server.ws_url) as ws:
            heard = await ask(ws, "Please tell me a story.")  # a long reply: far from over at the second signal
            server.proc.send_signal(signal.SIGTERM)
            await server.health_until("draining")
            server.proc.send_signal(signal.SIGTERM)
            await to_the_close(ws, heard)
        assert ws.close_code == 1001 and ws.close_reason == SHUTTING_DOWN
        assert await server.exit_code() == 0, server.log.read_text()
    assert not heard.of("turn.metrics", 1) and not heard.of("reply.done", 2)  # cut short: no end, no goodbye
    assert "second signal" in server.log.read_text()
