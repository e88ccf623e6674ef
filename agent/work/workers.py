"""The worker threads that run local model work (faster-whisper, Piper) in the order ``Scheduler`` picks.

One ``WorkPool`` is shared by the ASR and the Piper adapters: both compete for the same cores, so one
policy orders all of it (a caller's first sentence before another caller's later sentences, whatever the
model). The pool is thin: ``submit`` queues a blocking function with its ``JobInfo``; a free worker asks the
scheduler for the next job and runs it. The result is a ``concurrent.futures.Future`` (wrap it with
``asyncio.wrap_future``): cancelling it while queued removes the job from the queue, so it never runs.

Sizing (``pool_workers``): workers x threads per model <= cores, so two runs never fight for one core. The
cores are those this process may use (its CPU affinity and a cgroup CPU limit), not the machine's; a container
with a CPU request but no limit sees the node's cores, so set ``AGENT_SERVER__MODEL_WORKERS`` there.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from agent.errors import ProviderUnavailable
from agent.ports import JobInfo
from agent.work.scheduling import Dropped, Job, QueueStats, Scheduler

log = logging.getLogger(__name__)

_Payload = tuple[Callable[[], Any], "Future[Any]", float]


def pool_workers(configured: int, threads_per_model: int, cores: int | None = None) -> int:
    """``configured`` workers, or (0) as many as the cores allow with ``threads_per_model`` threads each."""
    if configured > 0:
        return configured
    available = cores if cores is not None else available_cores()
    return max(1, available // max(1, threads_per_model))


def available_cores(cgroup_cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """Cores this process may use: its CPU affinity, capped by a cgroup v2 CPU limit when there is one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        cores = os.cpu_count() or 1
    try:
        quota, period = cgroup_cpu_max.read_text(encoding="ascii").split()[:2]
        if quota != "max":
            cores = min(cores, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    return max(1, cores)


class WorkPool:
    """``workers`` threads running blocking model calls in the scheduler's order. ``close()`` at shutdown."""

    def __init__(
        self,
        workers: int,
        rates: dict[str, float] | None = None,
        clock: Callable[[], float] = time.monotonic,
        turn_parts: dict[str, float] | None = None,
    ):
        self._scheduler: Scheduler[_Payload] = Scheduler(workers, rates, turn_parts)
        self._clock = clock
        self._lock = threading.Condition()
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"model-{i}", daemon=True) for i in range(self._scheduler.capacity)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def workers(self) -> int:
        return self._scheduler.capacity

    def submit(self, model: str, info: JobInfo, size: float, fn: Callable[[], Any]) -> Future[Any]:
        """Queue ``fn`` (blocking) as ``model`` work of ``size`` units.

        Raises ``Dropped`` for a droppable job the pool cannot start within its slack, and
        ``ProviderUnavailable`` after ``close()``.
        """
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise ProviderUnavailable(model, "closed")
            job = self._scheduler.submit(model, info, (fn, future, size), size, self._clock())
            self._lock.notify()
        future.add_done_callback(lambda f: self._cancelled(job) if f.cancelled() else None)
        return future

    def stats(self, pending_turns: int = 0) -> QueueStats:
        """The queues now; ``pending_turns``: admitted callers' first turns, not queued yet (admission)."""
        with self._lock:
            return self._scheduler.stats(self._clock(), pending_turns)

    def close(self, wait_s: float = 30.0) -> None:
        """Stop: queued jobs are cancelled, running ones finish; blocks up to ``wait_s`` until they have.

        The wait matters at exit: the workers are daemon threads, and an interpreter that finalises while one
        is still inside ONNX Runtime or CTranslate2 aborts the process ("terminate called without an active
        exception"). Call it off the event loop (``Components.aclose`` does).
        """
        with self._lock:
            self._closed = True
            for job in self._scheduler.clear():
                job.payload[1].cancel()
            self._lock.notify_all()
        deadline = time.monotonic() + wait_s
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    def _cancelled(self, job: Job[_Payload]) -> None:
        with self._lock:
            self._scheduler.cancel(job.id)

    def _work(self) -> None:
        while True:
            with self._lock:
                while (job := self._scheduler.next(self._clock())) is None:
                    if self._closed:
                        return
                    self._lock.wait()
            fn, future, size = job.payload
            ran, result, error = False, None, None
            cpu_started = time.thread_time()
            try:
                if future.set_running_or_notify_cancel():
                    ran = True
                    try:
                        result = fn()
                    except BaseException as exc:  # handed to the waiter, whatever it is
                        error = exc
            finally:
                # The job leaves the queues before its waiter hears of it: whoever awaited it and then reads
                # ``stats`` (admission) sees the work done.
                cpu_s = time.thread_time() - cpu_started
                with self._lock:
                    self._scheduler.finish(job, self._clock(), size, cpu_s)
                    self._lock.notify()
            if ran:
                if error is None:
                    future.set_result(result)
                else:
                    future.set_exception(error)


__all__ = ["Dropped", "JobInfo", "WorkPool", "available_cores", "pool_workers"]


Streamed = bytes | BaseException | None
"""What a streaming job hands on: a chunk, its failure, or its end."""
Producer = Callable[[Callable[[Streamed], None], threading.Event], None]
"""A streaming job's work: ``produce(put, stop)``."""


async def stream_job(
    pool: WorkPool, model: str, job: JobInfo, size: float, produce: Producer
) -> AsyncGenerator[bytes, None]:
    """Run ``produce(put, stop)`` as a job on ``pool`` and yield the chunks it ``put``s, as they come.

    ``produce`` runs in a worker thread: it puts each chunk, then ``None`` at its end, or an exception (raised
    here; it maps its own errors) and checks ``stop`` between chunks. Closing or cancelling the generator sets
    ``stop`` and drops the job if it has not started yet. A closed loop makes ``put`` set ``stop`` too."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Streamed] = asyncio.Queue()
    stop = threading.Event()

    def put(item: Streamed) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            stop.set()

    worker = pool.submit(model, job, size, lambda: produce(put, stop))
    try:
        while True:
            item = await queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.cancel()  # drops the job if it has not started; a running one sees ``stop``
