"""The per-tenant voice quota and enrollment rate over a real /ws (shared by every connection of a server,
refused at ``voice.enroll.begin`` before any upload), and the ``voices`` CLI's quota and ``--ignore-quota``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from agent.adapters.file_voice_store import FileVoiceStore
from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from testing.sockets import next_json
from tests.integration.conftest import local_settings, with_voice_store
from tests.integration.test_enrollment_bombs import TRANSCRIPT, tone_flac
from tests.integration.test_enrollment_ws import enroll

pytestmark = pytest.mark.models
ROOT = Path(__file__).parents[2]

Server = Callable[..., AbstractAsyncContextManager[RunningServer]]


@pytest.fixture
def voices_server(components: Components, tmp_path: Path) -> Server:
    @asynccontextmanager
    async def start(**voices: Any) -> AsyncIterator[RunningServer]:
        settings = local_settings(voices=voices)
        with_store = with_voice_store(components, FileVoiceStore(tmp_path / "voices"), settings)
        async with running_server(settings, lambda: with_store) as running:
            await running.wait_ready()
            yield running

    return start


async def begin(ws: Any, name: str) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "voice.enroll.begin", "name": name, "consent": "I agree.", "size": 1000}))
    return await next_json(ws)


async def test_the_rate_is_shared_by_every_connection_and_refused_before_the_upload(voices_server: Server) -> None:
    async with voices_server(enroll_burst=2, enroll_per_hour=1) as server:
        async with connect(server.ws_url) as first:
            assert (await enroll(first, "one", tone_flac(), transcript=TRANSCRIPT))["type"] == "voice.enrolled"
            assert (await enroll(first, "bad", b"not audio at all " * 20))["code"] == "bad_audio"  # it counts
        async with connect(server.ws_url) as second:  # a new connection does not start afresh
            refused = await begin(second, "two")
            assert (refused["type"], refused["code"]) == ("error", "rate_limited"), refused
            assert 0 < refused["retry_after_s"] <= 3600 and "try again in" in refused["message"]
            await second.send(json.dumps({"type": "voices.list"}))  # the connection goes on
            assert [v["name"] for v in (await next_json(second))["voices"]] == ["one"]


async def test_the_quota_counts_the_tenants_voices(voices_server: Server) -> None:
    async with voices_server(max_voices_per_tenant=1) as server, connect(server.ws_url) as ws:
        assert (await enroll(ws, "one", tone_flac(), transcript=TRANSCRIPT))["type"] == "voice.enrolled"
        refused = await begin(ws, "two")
        assert (refused["type"], refused["code"]) == ("error", "quota_exceeded"), refused
        assert "retry_after_s" not in refused and "remove one" in refused["message"]
        await ws.send(json.dumps({"type": "voices.remove", "name": "one"}))
        assert (await next_json(ws))["type"] == "voices.removed"
        assert (await enroll(ws, "two", tone_flac(), transcript=TRANSCRIPT))["type"] == "voice.enrolled"


def voices_cli(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_")}
    env |= {"AGENT_VOICES__DIR": str(directory), "HF_HUB_OFFLINE": "1"}
    env |= {"AGENT_VOICES__MAX_VOICES_PER_TENANT": "1", "AGENT_VOICES__ENROLL_BURST": "1"}
    return subprocess.run(
        [sys.executable, "-m", "agent", "voices", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


def test_the_cli_keeps_to_the_quota_unless_told_and_is_not_rate_limited(tmp_path: Path) -> None:
    audio = tmp_path / "tone.flac"
    audio.write_bytes(tone_flac())
    store = tmp_path / "voices"
    add = ("--audio", str(audio), "--transcript", TRANSCRIPT, "--consent", "I agree.")
    assert voices_cli(store, "add", "one", *add).returncode == 0
    over = voices_cli(store, "add", "two", *add)
    assert over.returncode == 1 and "quota_exceeded" in over.stderr and "--ignore-quota" in over.stderr
    forced = voices_cli(store, "add", "two", *add, "--ignore-quota")
    assert forced.returncode == 0, forced.stderr
    assert voices_cli(store, "add", "three", "--tenant", "acme", *add).returncode == 0  # another tenant's quota
    assert "--ignore-quota" in voices_cli(store, "add", "--help").stdout
