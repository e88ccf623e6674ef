"""One adapter's blocking calls on the model workers, awaited from the event loop.

An adapter of a blocking model (Smart Turn, the text turn model) hands each call to a ``WorkPool``: normally the
server's one pool, shared with faster-whisper and Piper and ordered by ``agent.work.scheduling``; or, built on its
own (tools, tests), a private pool of one worker that it also closes. After ``close`` a call raises
``ProviderUnavailable``. One reason to change: how an adapter's call reaches the workers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from agent.errors import ProviderUnavailable
from agent.ports import JobInfo
from agent.work.workers import WorkPool

T = TypeVar("T")


class PooledCalls:
    def __init__(self, provider: str, model: str, pool: WorkPool | None = None) -> None:
        """``provider`` names the adapter in errors; ``model`` its queue in the scheduler and ``/metrics``."""
        self._provider = provider
        self._model = model
        self._own_pool = pool is None
        self._pool = pool if pool is not None else WorkPool(1)
        self._closed = False

    async def run(self, info: JobInfo, size: float, call: Callable[[], T]) -> T:
        """``call()`` on a worker, as a job of ``info`` and ``size``; raises what it raises, ``WorkDropped`` when
        the scheduler refuses the job, ``ProviderUnavailable`` after ``close``."""
        if self._closed:
            raise ProviderUnavailable(self._provider, "closed")
        future = self._pool.submit(self._model, info, size, call)
        result: T = await asyncio.wrap_future(future)
        return result

    def close(self) -> None:
        self._closed = True
        if self._own_pool:
            self._pool.close()
