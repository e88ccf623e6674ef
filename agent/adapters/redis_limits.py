"""``SharedLimits`` in a Redis that every replica shares: token buckets and places held, each one atomic Lua script
(EVALSHA; loaded again by the client after a Redis restart flushed it).

Its one reason to change is how the limits are kept in Redis. Keys are ``<prefix>:<limit>:<tenant or address>``
(``agent.security.limit_rules.key``); only counters are stored, never audio, transcripts or call state:

- a bucket is a hash ``{tokens, at}`` (the tokens left and when they were counted, on Redis's own clock, so the
  replicas' clocks never disagree), expiring once it would be full again (a full bucket is no different from
  none); the script is ``Buckets.take``'s arithmetic;
- places held are a sorted set: one member per place (``<replica>:<n>``) scored by its deadline (Redis's clock plus
  the hold's ``ttl_s``); lapsed members are dropped before every count, and the key expires with its last place.
  A replica releases a place when its socket stops opening or its enrollment ends; one that dies leaks its places
  only until their deadline (the start deadline plus a margin for a socket opening; ``ENROLL_HOLD_S`` for an
  enrollment). No refresh is needed: a place is never held longer than its own deadline bounds. A ``hold`` the
  check stopped waiting for still ends in the background: a place it took after all is given back at once; one
  whose answer never came, 0.1, 1 and 10 s later (``ZREM``), so a slow Redis does not fill a bound with places
  nobody holds.

Every check is bounded by ``timeout_s`` (``AGENT_LIMITS__CHECK_TIMEOUT_MS``): its call runs as a task the check
stops waiting for at the bound (``asyncio.wait``), left to end in the background (the client gives up after
``LATE_S`` and never retries); a check past its bound, or any client error, is ``LimitsUnavailable``. ``warm``
connects and loads the scripts at start, since a first connection and the scripts' compilation take longer than a
check's bound. The client reconnects on its own at the next call, so limits resume when Redis is back, without a
restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeout

from agent.errors import LimitsUnavailable
from agent.ports import Hold, Rate

T = TypeVar("T")
LATE_S = 1.0
"""When the client itself gives up on a call (connect or answer): a check stops waiting long before (its bound),
and the call ends in the background, so that the check's outcome in Redis is known when it comes."""
UNDO_AFTER_S = (0.1, 1.0, 10.0)
"""When a place whose answer never came is taken back (``ZREM``; nothing when its script never ran)."""

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""

# KEYS[1] bucket; ARGV burst, per_hour, cost. Returns the seconds to wait, as a string ('0': taken, or cost 0 and
# a token is there). Buckets.take in Lua.
_TAKE = (
    _NOW
    + """
local burst = tonumber(ARGV[1])
local per_s = tonumber(ARGV[2]) / 3600
local cost = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(b[1]), tonumber(b[2])
if tokens == nil or at == nil then tokens, at = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - at) * per_s)
local missing = math.max(cost, 1) - tokens
if missing > 1e-9 then return tostring(missing / per_s) end
if cost > 0 then
  tokens = tokens - cost
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / per_s * 1000) + 1000)
end
return '0'
"""
)

# KEYS[1] places; ARGV bound, ttl_ms, member. Returns 1 when held, 0 when full.
_HOLD = (
    _NOW
    + """
now = math.floor(now * 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""
)

# KEYS[1] places. Returns how many are held now.
_HELD = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', math.floor(now * 1000))
return redis.call('ZCARD', KEYS[1])
"""
)


class RedisLimits:
    """``SharedLimits`` in the Redis at ``url``; every check within ``timeout_s``. ``close`` at shutdown."""

    def __init__(self, url: str, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._redis = Redis.from_url(
            url,
            socket_connect_timeout=LATE_S,  # the client's own give-up; a check stops waiting at timeout_s
            socket_timeout=LATE_S,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=0,
            driver_info=None,  # no CLIENT SETINFO: a (re)connection costs one round trip less within the bound
        )
        self._take = self._redis.register_script(_TAKE)
        self._hold = self._redis.register_script(_HOLD)
        self._held = self._redis.register_script(_HELD)
        self._replica = uuid.uuid4().hex[:12]
        self._numbers = itertools.count(1)
        self._background: set[asyncio.Future[Any]] = set()

    async def take(self, key: str, rate: Rate, cost: int = 1) -> float:
        answer = await self._bounded(self._take(keys=[key], args=[rate.burst, repr(rate.per_hour), cost]))
        return float(answer)

    async def hold(self, key: str, bound: int, ttl_s: float) -> Hold | None:
        if bound <= 0:
            return None
        place = Hold(key, f"{self._replica}:{next(self._numbers)}")
        args: list[int | str] = [bound, max(1, round(ttl_s * 1000)), place.token]
        held = await self._bounded(self._hold(keys=[key], args=args), late=lambda call: self._late_hold(call, place))
        return place if int(held) else None

    async def held(self, key: str) -> int:
        return int(await self._bounded(self._held(keys=[key])))

    async def release(self, hold: Hold) -> None:
        """Within ``LATE_S``, not the check's bound: nobody waits for a release (it runs in the background), and a
        place whose release failed would be held by nobody until its deadline; failed, it is tried again."""
        try:
            await self._bounded(self._redis.zrem(hold.key, hold.token), LATE_S)
        except LimitsUnavailable:
            self._in_background(self._take_back(hold))
            raise

    async def warm(self, wait_s: float = 2.0) -> None:
        """Connect and load the scripts, with ``wait_s`` rather than the check's bound (a first connection and the
        scripts' compilation take longer than a check may): call it at start, in the background.
        ``LimitsUnavailable`` when Redis does not answer."""
        try:
            async with asyncio.timeout(wait_s):
                for script in (self._take, self._hold, self._held):
                    await self._redis.script_load(script.script)
        except (TimeoutError, RedisError, OSError) as exc:
            raise LimitsUnavailable("redis", type(exc).__name__) from None

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self._redis.aclose()

    async def _bounded(
        self, call: Awaitable[T], wait_s: float | None = None, late: Callable[[asyncio.Future[T]], None] | None = None
    ) -> T:
        """``call``'s answer within the bound (``wait_s``, else the check's). The call runs as a task of its own and is
        not cancelled at the bound: the check stops waiting for it at once, and the task ends in the background (the
        client gives up after ``LATE_S``), where ``late`` sees how it ended."""
        bound_s = self._timeout_s if wait_s is None else wait_s
        task = asyncio.ensure_future(call)
        done, _ = await asyncio.wait({task}, timeout=bound_s)
        if not done:
            self._keep(task)
            if late is not None:
                task.add_done_callback(late)
            raise LimitsUnavailable("redis", f"no answer within {bound_s * 1000:g} ms")
        try:
            return task.result()
        except RedisTimeout:
            raise LimitsUnavailable("redis", f"no answer within {bound_s * 1000:g} ms") from None
        except (RedisError, OSError) as exc:
            raise LimitsUnavailable("redis", type(exc).__name__) from None

    def _late_hold(self, call: asyncio.Future[Any], place: Hold) -> None:
        """A ``hold`` the check gave up on ended after all: a place it took is held by nobody, so it is given back
        (at once when the answer says so; when the answer never came, a while later, in case it ran)."""
        if call.cancelled():
            return
        if call.exception() is not None:
            self._in_background(self._take_back(place))
        elif int(call.result()):
            self._in_background(self._take_back(place, (0.0,)))

    async def _take_back(self, hold: Hold, after_s: tuple[float, ...] = UNDO_AFTER_S) -> None:
        for delay_s in after_s:
            await asyncio.sleep(delay_s)
            with contextlib.suppress(TimeoutError, RedisError, OSError):
                async with asyncio.timeout(LATE_S):
                    await self._redis.zrem(hold.key, hold.token)

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        self._keep(asyncio.ensure_future(work))

    def _keep(self, task: asyncio.Future[Any]) -> None:
        """Hold a task nobody waits for until it ends."""
        self._background.add(task)
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Future[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a call given up on may still fail
