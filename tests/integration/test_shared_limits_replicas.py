"""Two replicas, one Redis: two ``python -m agent`` processes counting their limits in one real ``redis-server``
(``AGENT_LIMITS__REDIS_URL``). A tenant's enrollment burst is spent across both, not per replica; the bound on
an address's sockets opening holds across both. Redis stopped mid-run: calls are still taken (fail open),
enrollments are refused with ``limits_unavailable`` (fail closed), each replica says so once in its log and counts
it on ``/metrics``; Redis started again (empty): the limits hold again, with no restart of either replica.

One pair of replicas for every check (each start loads the models): the checks run in order in one test.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from testing.agent_process import AgentProcess, start_agent
from testing.redis_server import RedisServer
from testing.sockets import http_get, next_json
from testing.waits import until, until_sync
from tests.integration.conftest import server_env

pytestmark = pytest.mark.models
BURST = 3
PER_PEER = 2
UNAVAILABLE_LINE = "shared limits unavailable"
BACK_LINE = "shared limits answer again"


def start(name: str, tmp_path: Path, redis_url: str) -> AgentProcess:
    env = server_env(
        HF_HUB_OFFLINE="1",
        AGENT_LIMITS__REDIS_URL=redis_url,
        # Not the 5 ms default: under the parallel suite's load a check may take longer, and this test is about what
        # is shared, not the bound (test_shared_limits.py: a check never waits past it).
        AGENT_LIMITS__CHECK_TIMEOUT_MS="1000",
        AGENT_VOICES__DIR=str(tmp_path / f"voices-{name}"),
        AGENT_VOICES__ENROLL_BURST=str(BURST),
        AGENT_VOICES__ENROLL_PER_HOUR="1",  # no refill within the test
        AGENT_SERVER__MAX_OPENING_PER_PEER=str(PER_PEER),
        AGENT_SERVER__START_TIMEOUT_S="600",  # the sockets held opening stay until the test closes them
        AGENT_TTS__WARM_PHRASES="false",
    )
    return start_agent(name, tmp_path, env)


def errors(replica: AgentProcess, limit: str, outcome: str) -> float:
    labels = f'limit="{limit}",outcome="{outcome}"'
    return replica.metric("voice_agent_shared_limit_errors_total", labels)


@pytest.fixture
def replicas(tmp_path: Path, redis: RedisServer) -> Iterator[tuple[AgentProcess, AgentProcess]]:
    if not redis.running:
        redis.start()
    started: list[AgentProcess] = []
    try:
        for name in ("a", "b"):
            started.append(start(name, tmp_path, redis.url))
        yield started[0], started[1]
    finally:
        codes = {r.name: r.stop() for r in started}
    assert codes == {r.name: 0 for r in started}, "\n".join(r.output() for r in started)
    for r in started:
        assert "Traceback" not in r.output(), r.output()


async def enroll(replica: AgentProcess, name: str) -> dict[str, Any]:
    """One enrollment of an upload that is not audio: it is decoded (and refused, ``bad_audio``) when admitted, so
    it spends one token of the tenant's rate; the answer, or the refusal of its ``begin``."""
    data = b"this is not audio" * 64
    async with connect(replica.ws_url) as ws:
        await ws.send(
            json.dumps({"type": "voice.enroll.begin", "name": name, "consent": "I agree.", "size": len(data)})
        )
        ready = await next_json(ws)
        if ready["type"] != "voice.enroll.ready":
            return ready
        await ws.send(json.dumps({"type": "voice.enroll.chunk", "data": base64.b64encode(data).decode()}))
        await ws.send(json.dumps({"type": "voice.enroll.end"}))
        return await next_json(ws)


async def counted_again(replica: AgentProcess) -> bool:
    """Whether an enrollment's ``begin`` is told ``ready`` rather than ``limits_unavailable`` (it takes nothing)."""
    async with connect(replica.ws_url) as ws:
        await ws.send(json.dumps({"type": "voice.enroll.begin", "name": "probe", "consent": "I agree.", "size": 64}))
        answer = await next_json(ws)
    assert answer["type"] == "voice.enroll.ready" or answer.get("code") == "limits_unavailable", answer
    return bool(answer["type"] == "voice.enroll.ready")


async def opening(replica: AgentProcess, stack: AsyncExitStack) -> ClientConnection | int:
    """A socket that stays opening (no ``session.start``), held by ``stack``; or the HTTP status that refused it."""
    try:
        return await stack.enter_async_context(connect(replica.ws_url))
    except InvalidStatus as exc:
        body = json.loads(exc.response.body or b"{}")
        assert exc.response.status_code != 429 or body["reason"] == "peer_limit", body
        return exc.response.status_code


async def spend_the_burst(a: AgentProcess, b: AgentProcess, prefix: str) -> None:
    """The tenant's burst, spent across both replicas in turn: each admitted; the next, on either, refused."""
    for i in range(BURST):
        answer = await enroll((a, b)[i % 2], f"{prefix}{i}")
        assert answer.get("code") == "bad_audio", answer  # admitted: decoded, and found not to be audio
    for replica in (a, b):
        refused = await enroll(replica, f"{prefix}late")
        assert refused["type"] == "error" and refused["code"] == "rate_limited", refused
        assert refused["retry_after_s"] > 3000  # one an hour after the burst: not refilled


async def fill_the_address(a: AgentProcess, b: AgentProcess, stack: AsyncExitStack) -> list[ClientConnection]:
    """``PER_PEER`` sockets opening from this address on ``a``: the next one, on ``b``, is refused (429)."""
    held = [await opening(a, stack) for _ in range(PER_PEER)]
    assert all(isinstance(s, ClientConnection) for s in held), held
    assert await opening(b, stack) == 429  # b holds none of them: the count is shared
    return [s for s in held if isinstance(s, ClientConnection)]


async def test_two_replicas_share_their_limits_and_keep_taking_calls_while_redis_is_down(
    replicas: tuple[AgentProcess, AgentProcess], redis: RedisServer
) -> None:
    a, b = replicas
    await spend_the_burst(a, b, "first")
    async with AsyncExitStack() as stack:
        held = await fill_the_address(a, b, stack)
        await held[0].close()  # one place given back on a: b may take it now

        async def b_takes_one() -> bool:
            return isinstance(await opening(b, stack), ClientConnection)

        await until(b_takes_one, what="b to take the place a gave back")
        assert await opening(a, stack) == 429 and await opening(b, stack) == 429

        # Redis goes down: the address's bound is each replica's own again (fail open), enrollment is refused.
        await asyncio.to_thread(redis.stop)
        fresh = await opening(a, stack)  # a holds one of its own two: taken, uncounted across replicas
        assert isinstance(fresh, ClientConnection)
        await fresh.send(json.dumps({"type": "session.start", "sample_rate": 16000}))
        started = await next_json(fresh)
        assert started["type"] == "session.started", started  # a call is taken and starts
        for replica in (a, b) * 3:  # three failed checks in a row: each replica says Redis is down, once
            refused = await enroll(replica, "during")
            assert refused["type"] == "error" and refused["code"] == "limits_unavailable", refused
            assert "cannot be reached" in refused["message"] and refused["retry_after_s"] > 0
    assert await asyncio.to_thread(errors, a, "opening_peer", "failed_open") >= 1
    closed = [await asyncio.to_thread(errors, a, limit, "failed_closed") for limit in ("enroll_rate", "voice_quota")]
    assert sum(closed) >= 2

    # Redis is back, empty: every limit holds again, neither replica restarted.
    await asyncio.to_thread(redis.start)
    for replica in (a, b):
        await until(lambda r=replica: counted_again(r), what=f"{replica.name} to count enrollments again")
    await spend_the_burst(b, a, "second")

    def nothing_opening() -> bool:
        return all(http_get(r.url("/healthz")).json()["opening"] == 0 for r in (a, b))

    await asyncio.to_thread(until_sync, nothing_opening, what="the sockets of before to be given back")
    async with AsyncExitStack() as stack:
        await fill_the_address(a, b, stack)
    for replica in (a, b):
        log = replica.output()
        assert log.count(UNAVAILABLE_LINE) == 1 and log.count(BACK_LINE) == 1, log  # once per change, not per check
        assert "enrollment message refused: limits_unavailable" in log or "refused: limits_unavailable" in log, log
