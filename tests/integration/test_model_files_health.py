"""A model file altered after the install step stops the server where it loads its models (in a worker thread, off the
event loop), and ``/healthz`` says ``failed`` with the reason: the file, the sha256 it has and the one it should have.
The altered file is a copy of the installed Smart Turn model (the installed one is only read)."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from agent.adapters import smart_turn
from agent.front_door.listener import running_server
from agent.wiring import build_components
from testing.sockets import http_get
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models


async def test_a_model_file_altered_after_the_install_fails_the_load_and_healthz_says_why(tmp_path: Path) -> None:
    data = bytearray(smart_turn.default_model_path().read_bytes())
    data[len(data) // 2] ^= 1
    copy = tmp_path / smart_turn.MODEL_FILE
    copy.write_bytes(data)
    found = hashlib.sha256(data).hexdigest()
    settings = local_settings(turn={"acoustic_model": str(copy), "text_model": "off"})
    async with running_server(settings, lambda: build_components(settings)) as server:
        with pytest.raises(RuntimeError, match="ConfigError"):
            await server.wait_ready()
        got = await asyncio.to_thread(http_get, server.http_url + "/healthz")
    body = got.json()
    assert (got.status, body["status"]) == (503, "failed"), body
    error = body["error"]
    assert error.startswith("ConfigError: Smart Turn model") and str(copy) in error, error
    assert f"sha256 is {found}, expected {smart_turn.MODEL_SHA256}" in error, error
