"""Clients that stop reading, against a real ``python -m agent`` (real tiny.en and Piper): closed as documented
(1008 ``client is not reading``) and the server's memory comes back.

The server's resident memory is read from ``/proc/<pid>/status`` after a warm-up call (the models have grown
their arenas) and again once each bad client is closed: within ``RSS_SLACK_KB``. Two clients:

- on ``/ws``, a caller asks for a long reply and never reads it (a 4 KiB receive buffer, a one-message queue):
  the server's sends stop being taken and the client is closed within the send deadline, not the keepalive's;
- on ``/v1/realtime``, a client floods 60 KB text items, whose echoes it never reads: what is queued for it is
  bounded (``AGENT_SERVER__MAX_OUTBOX_BYTES``), and past that it is closed at once.

Nothing is timed: waits only guard against a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from testing.sockets import read_until
from testing.speech import silence, speech_pcm16
from testing.waits import until, within
from tests.integration.test_drain_process import Agent, agent, ask

pytestmark = pytest.mark.models

RSS_SLACK_KB = 50 * 1024
NOT_READING = "closed 1008 (client is not reading)"
PATIENCE_S = 60.0  # only against a hang


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def logged(server: Agent, text: str, times: int) -> None:
    await until(
        lambda: server.log.read_text().count(text) >= times,
        PATIENCE_S,
        lambda: f"{text!r} logged {times} times: {server.log.read_text()[-4000:]}",
        every_s=0.05,
    )


async def stuck(url: str, port: int, **kwargs: object) -> ClientConnection:
    """A client that takes almost nothing: a 4 KiB receive buffer and one message in its queue."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await connect(url, sock=sock, max_queue=1, **kwargs)  # type: ignore[arg-type]


async def test_clients_that_stop_reading_are_closed_and_the_memory_comes_back(tmp_path: Path) -> None:
    async with agent(tmp_path, AGENT_SERVER__SEND_TIMEOUT_S="3", AGENT_SERVER__CLOSE_TIMEOUT_S="1") as server:
        # Warm-up: a whole long reply, read to its end (the models' first long synthesis grows their arenas).
        async with connect(server.ws_url) as ws:
            await ask(ws, "Please tell me a story.")
            # The turn ends once the reply has played, after its audio has all arrived: no bound between messages.
            await within(read_until(ws, "turn.metrics", PATIENCE_S), PATIENCE_S, "the warm-up's whole reply")
        baseline = rss_kb(server.proc.pid)

        # /ws: a long reply that is never read.
        ws = await stuck(server.ws_url, server.port)
        try:
            await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None}))
            pcm = silence(300) + speech_pcm16("Please tell me a story.") + silence(1500)
            for i in range(0, len(pcm), 3200):
                await ws.send(pcm[i : i + 3200])
            await logged(server, NOT_READING, 1)
        finally:
            ws.transport.abort()
        after_ws = rss_kb(server.proc.pid)

        # /v1/realtime: text items flooded, their echoes never read.
        realtime = await stuck(
            f"ws://127.0.0.1:{server.port}/v1/realtime", server.port, additional_headers={"Authorization": "Bearer k"}
        )
        item = {"type": "conversation.item.create", "item": {"type": "message", "role": "user"}}
        item["item"]["content"] = [{"type": "input_text", "text": "x" * 60_000}]  # type: ignore[index]
        flood = json.dumps(item)
        sent = 0
        try:
            with contextlib.suppress(ConnectionClosed):

                async def send_flood() -> None:
                    nonlocal sent
                    while sent < 5000:  # 300 MB if nothing stopped it
                        await realtime.send(flood)
                        sent += 1

                await within(send_flood(), PATIENCE_S, "the server to stop the flood")
            await logged(server, NOT_READING, 2)
        finally:
            realtime.transport.abort()
        after_realtime = rss_kb(server.proc.pid)

        assert sent < 5000, "the flood was never refused"
        assert after_ws - baseline < RSS_SLACK_KB, (baseline, after_ws)
        assert after_realtime - baseline < RSS_SLACK_KB, (baseline, after_realtime)
        status, _ = await server.health()
        assert status == 200
        print(f"RSS kB: baseline {baseline}, after /ws {after_ws}, after /v1/realtime {after_realtime}, {sent} items")
