"""Real servers on loopback with the real bundled local models (loaded once per test run)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agent.config import Settings
from agent.front_door.listener import RunningServer, running_server
from agent.ports import VoiceStore
from agent.runtime.components import Components
from agent.wiring import build_components, build_enrollment_limits
from testing.redis_server import RedisServer, redis_server
from testing.waits import until


def local_settings(**sections: dict[str, Any]) -> Settings:
    """Local defaults on a free port, with overrides per section.

    Load-aware admission is off (``admission_wait_ms`` 0): whether it refuses depends on how fast this machine
    runs the models, which a test must not; the tests of admission set it themselves."""
    data: dict[str, Any] = {"server": {"port": 0, "admission_wait_ms": 0}}
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    return Settings(**data)


async def models_at_rest(components: Components, *models: str, wait_s: float = 60.0) -> None:
    """Wait until ``components``' models (those named in ``models``, else all) have no work queued or running.

    The models outlive each test's server (loaded once per worker process), and so does their work: a reply an
    earlier test's call left synthesising, a transcript its hang-up did not need, run on after that server closed.
    Load-aware admission rightly counts it, so a test that sets ``admission_wait_ms`` on these components and
    expects a caller taken starts from models at rest. Fails loudly, with the queues seen last, after ``wait_s``."""

    def busy() -> dict[str, tuple[int, int]]:
        stats = components.queue_stats()
        found = stats.models if stats is not None else {}
        wanted = {name: m for name, m in found.items() if not models or name in models}
        return {name: (m.queued, m.running) for name, m in wanted.items() if m.queued or m.running}

    await until(lambda: not busy(), wait_s, lambda: f"the models to rest (queued, running by model: {busy()})")


def server_env(*strip: str, **settings: str) -> dict[str, str]:
    """The environment of a ``python -m agent`` a test starts: this process's, less every ``AGENT_*`` variable (and
    those starting with a prefix in ``strip``), with load-aware admission off as in ``local_settings`` (a server
    process under the parallel suite's load would otherwise refuse calls as busy), then ``settings``."""
    prefixes = ("AGENT_", *strip)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return env | {"AGENT_SERVER__ADMISSION_WAIT_MS": "0"} | settings


def with_voice_store(components: Components, store: VoiceStore | None, settings: Settings | None = None) -> Components:
    """``components`` enrolling into ``store``, with enrollment limits of their own (``settings``, else the local
    defaults): the limits count what a server's tenants enrolled, so a new store starts with none used."""
    limits = build_enrollment_limits(settings if settings is not None else local_settings())
    return dataclasses.replace(components, voices=store, enrollment_limits=limits)


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    """A real ``redis-server`` on loopback for the module's tests (``testing.redis_server``), empty at first. A test
    may ``stop`` and ``start`` it; one that needs it running starts it if it is not (``redis.running``)."""
    with redis_server() as server:
        yield server


@pytest.fixture(scope="session")
def components() -> Components:
    return build_components(local_settings())


@pytest.fixture
async def server(components: Components) -> AsyncIterator[RunningServer]:
    async with running_server(local_settings(), lambda: components) as running:
        await running.wait_ready()
        yield running
