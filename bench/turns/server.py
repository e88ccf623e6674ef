"""The servers and the other callers of the live end-of-turn bench (``bench/turns/live.py``): ``python -m agent``
started per policy (its overrides as the server's environment) or a running one at ``--url``, a call opened while
the server is busy, and the callers of ``--load`` that talk beside the scored ones. It changes when how the live
bench starts servers or loads them changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from bench.progress import progress
from bench.turns.corpus import build, plan
from bench.turns.policies import Policy
from bench.turns.voices import RATE
from clients.protocol_client import ClientError, converse_utterances
from testing.sockets import free_port, http_get

ROOT = Path(__file__).resolve().parents[2]


# --- a policy as a server's environment -------------------------------------------------------------------


def policy_env(overrides: dict[str, Any]) -> dict[str, str]:
    """``{"section": {"field": value}}`` as the server's environment (``AGENT_SECTION__FIELD``): strings as they
    are, anything else as JSON (``true``, ``420``, ``["a"]``)."""
    env: dict[str, str] = {}

    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value)

    for section, values in overrides.items():
        if isinstance(values, dict):
            for name, value in values.items():
                env[f"AGENT_{section.upper()}__{name.upper()}"] = text(value)
        else:
            env[f"AGENT_{section.upper()}"] = text(values)
    return env


# --- the server -----------------------------------------------------------------------------------------


class ChildServer:
    """``python -m agent`` on a free loopback port with the policy's overrides; its log in a temporary file."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}/ws"
        self._proc: asyncio.subprocess.Process | None = None
        fd, name = tempfile.mkstemp(prefix="eot-live-server-", suffix=".log")
        os.close(fd)
        self._log = Path(name)

    def tail(self) -> str:
        return "\n".join(self._log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:])

    async def __aenter__(self) -> ChildServer:
        env = {**os.environ, **policy_env(self.policy.overrides)}
        env.setdefault("HF_HUB_OFFLINE", "1")
        command = [sys.executable, "-m", "agent", "--host", "127.0.0.1", "--port", str(self.port)]
        with self._log.open("wb") as out:
            self._proc = await asyncio.create_subprocess_exec(
                *command, cwd=ROOT, env=env, stdout=out, stderr=asyncio.subprocess.STDOUT
            )
        progress(f"policy {self.policy.name}: server pid {self._proc.pid} on port {self.port}, log {self._log}")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self._proc.returncode is not None:
                raise RuntimeError(f"the server exited with status {self._proc.returncode}:\n{self.tail()}")
            with contextlib.suppress(OSError):
                health = await asyncio.to_thread(http_get, f"http://127.0.0.1:{self.port}/healthz", 5.0)
                if health.status == 200:
                    return self
            await asyncio.sleep(0.5)
        await self.__aexit__()
        raise RuntimeError(f"the server was not ready within 300 s:\n{self.tail()}")

    async def __aexit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(proc.wait(), 40)
        except TimeoutError:
            proc.kill()
            code = await proc.wait()
        if code == 0:
            self._log.unlink(missing_ok=True)  # kept only where the server failed


class RunningServer:
    """A server at ``--url``."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def __aenter__(self) -> RunningServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


async def open_call(url: str, wait_s: float = 60.0) -> ClientConnection:
    """The WebSocket, retried while the server answers 503 (busy, full, loading) for up to ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return await connect(url, open_timeout=30, compression=None, max_size=None)
        except InvalidStatus as exc:
            if exc.response.status_code != 503 or time.monotonic() > deadline:
                raise
            retry = exc.response.headers.get("Retry-After", "1")
            await asyncio.sleep(min(5.0, max(0.5, float(retry) if retry.isdigit() else 1.0)))


# --- the other callers (--load) -------------------------------------------------------------------------


async def other_caller(url: str, index: int, speech: Sequence[bytes], counts: dict[str, int]) -> None:
    """Says ``speech`` in turn (three utterances a call, listening to each reply), from its own starting point."""
    await asyncio.sleep(1.3 * index)
    at = 3 * index

    def count(event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in ("speech.stopped", "audio.start"):
            counts["turns" if kind == "speech.stopped" else "answered"] += 1

    while True:
        batch = [speech[(at + k) % len(speech)] for k in range(3)]
        at += 3
        try:
            await converse_utterances(url, batch, RATE, wait_for_playback=True, turn_timeout_s=20, on_event=count)
        except ClientError:
            counts["failed"] += 1
            await asyncio.sleep(1.0)


def load_speech(n: int) -> list[bytes]:
    """Dev utterances (English, synthetic) for the other callers: never the scored ones of a test run."""
    plans = [p for p in plan("dev", 3) if getattr(p, "language", "en") == "en"][: max(6, n)]
    return [build(p).pcm for p in plans]
