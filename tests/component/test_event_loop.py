"""The server's event loop choice (``AGENT_SERVER__EVENT_LOOP``)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from agent.errors import ConfigError
from agent.runtime.server.event_loop import loop_factory, loop_name, run


async def _which() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_auto_runs_on_uvloop_where_it_is_installed() -> None:
    pytest.importorskip("uvloop")
    factory = loop_factory("auto")
    assert factory is not None and loop_name(factory) == "uvloop"
    assert run(_which(), "auto").startswith("uvloop")


def test_asyncio_is_the_standard_loop() -> None:
    assert loop_factory("asyncio") is None and loop_name(None) == "asyncio"
    assert run(_which(), "asyncio").startswith("asyncio")


def test_without_uvloop_auto_falls_back_and_uvloop_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    assert loop_factory("auto") is None
    with pytest.raises(ConfigError, match="uvloop is not installed"):
        loop_factory("uvloop")
