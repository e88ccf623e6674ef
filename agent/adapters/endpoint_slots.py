"""Requests in flight to a remote voice endpoint, granted in the order ``Scheduler`` picks.

For a cloned voice the scarce resource is not the pod's CPU but the endpoint's concurrency: when more sentences
are wanted than it serves at once, the ones blocking a caller's first audio should be sent first, and later
sentences (which have until playback reaches them) after. ``EndpointSlots`` is the asyncio counterpart of
``agent.work.workers.WorkPool`` over the same pure policy: ``async with slots.slot(job, size):`` waits for one of
``capacity`` slots. A waiter cancelled while queued leaves the queue. Loop-agnostic (one lock, grants posted to
each waiter's own loop), like the adapter that owns it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from agent.ports import JobInfo
from agent.work.scheduling import Job, QueueStats, Scheduler

_Waiter = asyncio.Future[None]


class EndpointSlots:
    def __init__(self, capacity: int, model: str = "tts", clock: Callable[[], float] = time.monotonic) -> None:
        self._scheduler: Scheduler[_Waiter] = Scheduler(capacity)
        self._model = model
        self._clock = clock
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        return self._scheduler.capacity

    @asynccontextmanager
    async def slot(self, info: JobInfo, size: float) -> AsyncIterator[None]:
        """Hold one slot for the body. Raises ``WorkDropped`` for droppable work that could not start in time."""
        waiter: _Waiter = asyncio.get_running_loop().create_future()
        with self._lock:
            job = self._scheduler.submit(self._model, info, waiter, size, self._clock())
            self._grant()
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                if not self._scheduler.cancel(job.id):  # granted meanwhile: give it back
                    self._scheduler.finish(job, self._clock())
                    self._grant()
            raise
        try:
            yield
        finally:
            self._release(job, size)

    def stats(self, pending_turns: int = 0) -> QueueStats:
        """The queues now; ``pending_turns``: admitted callers' first turns, not queued yet (admission)."""
        with self._lock:
            return self._scheduler.stats(self._clock(), pending_turns)

    def _release(self, job: Job[_Waiter], size: float) -> None:
        with self._lock:
            self._scheduler.finish(job, self._clock(), size)
            self._grant()

    def _grant(self) -> None:
        """Hand free slots to the jobs the policy picks (called with the lock held)."""
        while (job := self._scheduler.next(self._clock())) is not None:
            waiter = job.payload
            try:
                waiter.get_loop().call_soon_threadsafe(_wake, waiter)
            except RuntimeError:  # its loop is closed: nobody waits any more
                self._scheduler.finish(job, self._clock())


def _wake(waiter: _Waiter) -> None:
    if not waiter.done():
        waiter.set_result(None)
