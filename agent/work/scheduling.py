"""Which model job runs next: end-of-turn work, then first audio, then slack work; earliest deadline first (pure).

Local models (faster-whisper, Piper, the turn scorers) share a few worker threads, and a remote voice a few
endpoint slots; when several callers want them at once, arrival order is the wrong order. Three tiers:

1. **end-of-turn work** (``END_OF_TURN``): the speculative transcript of a pause and its scores (the sound's,
   the words'), and the final transcript of an ended turn. The end of turn waits for them (it is never judged
   blind, ``agent.core.turn_end``), so each millisecond they queue is a millisecond of every caller's wait, and
   of a thinking caller's risk of being cut off when they come too late;
2. **first audio**: the first sentence of a reply, a fixed phrase;
3. **slack** work: a later sentence, needed only when playback reaches it; a quick transcript (a look at a
   sound made over the agent). A slack job whose deadline has passed joins the second tier: its caller would
   hear a gap.

Within each tier the earliest deadline goes first.

A droppable job (speculative or quick transcript) is refused at ``submit`` when the estimated wait before it
could start exceeds how long it may wait (``JobInfo.drop_after_s``, by default its latest start): its waiter
gets ``Dropped`` at once, and the core tries the final transcript later, as for any failed speculative
transcript. A speculative transcript that is kept but waits past its latest start joins the first tier like
any late slack job: by then its turn has (nearly) ended and it is that turn's final transcript.

Admission asks how long a new caller's first sentence would wait (``stats(now, pending_turns)``): the work queued
now, plus the first turns of callers admitted but not answered yet. Callers who arrive together speak together,
so each of those is counted as one turn's first-audio work (a transcript and a first sentence, at what they
have cost lately) ahead of the new one; without it, ten calls opened in the same second all look free.

``Scheduler`` takes ``now`` as a parameter and holds no lock and no thread: ``agent.work.workers`` (threads) and
``agent.adapters.clone_tts`` (endpoint slots) run what it picks. Costs are estimated per model from what the
jobs cost so far (seconds per unit of ``size``: seconds of audio to transcribe, characters to speak).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Generic, TypeVar

from agent.errors import WorkDropped
from agent.ports import JobInfo, Work

T = TypeVar("T")


FIRST_AUDIO = frozenset({Work.FINAL_TRANSCRIPT, Work.FIRST_SENTENCE, Work.PHRASE})
END_OF_TURN = frozenset({Work.FINAL_TRANSCRIPT, Work.SPECULATIVE_TRANSCRIPT, Work.TURN_SCORE})
DROPPABLE = frozenset({Work.SPECULATIVE_TRANSCRIPT, Work.QUICK_TRANSCRIPT, Work.TURN_SCORE})


Dropped = WorkDropped
"""Raised by ``submit`` for a droppable job the workers could not start within its slack."""


@dataclass(slots=True)
class Job(Generic[T]):
    id: int
    model: str
    info: JobInfo
    payload: T
    submitted: float
    deadline: float
    """The latest start that has its result ready when it is needed (monotonic seconds, like ``submitted``)."""
    cost: float
    started: float | None = None

    @property
    def first_audio(self) -> bool:
        return self.info.work in FIRST_AUDIO


@dataclass(slots=True)
class ModelStats:
    """Counters of one model's queue, for ``/metrics``."""

    queued: int = 0
    running: int = 0
    started: int = 0
    dropped: int = 0
    wait_s_total: float = 0.0
    last_wait_s: float = 0.0
    cpu_s_total: float = 0.0
    """CPU time of the worker threads that ran the model's jobs (the compute they cost, whatever they waited);
    what a model computes in threads of its own (CTranslate2's) is not in it."""


@dataclass(frozen=True, slots=True)
class QueueStats:
    models: dict[str, ModelStats]
    first_audio_wait_s: float
    """Estimated wait before a new first-audio job would start now, behind the pending turns (admission's signal)."""
    turn_cost_s: float = 0.0
    """One turn's first-audio work (a transcript and a first sentence) as it has cost lately, in seconds."""


TURN_PARTS: dict[Work, str] = {
    Work.FINAL_TRANSCRIPT: "transcript",
    Work.SPECULATIVE_TRANSCRIPT: "transcript",
    Work.FIRST_SENTENCE: "first_sentence",
}
"""The jobs that make up a turn's first-audio work, by part (a speculative transcript is usually the final one)."""


@dataclass(slots=True)
class _Estimate:
    """A learned figure (seconds per unit of a model, or seconds of a turn's part), smoothed once observed."""

    value: float
    observed: bool = False


class Scheduler(Generic[T]):
    """The pending jobs of ``capacity`` workers and the policy that orders them. Not thread-safe."""

    SMOOTHING = 0.3

    def __init__(
        self, capacity: int, rates: dict[str, float] | None = None, turn_parts: dict[str, float] | None = None
    ) -> None:
        """``rates``: first guesses of seconds per unit by model; ``turn_parts``: first guesses of what each part
        of a turn's first-audio work costs (``TURN_PARTS``: ``transcript``, ``first_sentence``), in seconds. Both
        are replaced by what the jobs are seen to cost."""
        self.capacity = max(1, capacity)
        self._rates = {model: _Estimate(rate) for model, rate in (rates or {}).items()}
        self._parts = {part: _Estimate(cost) for part, cost in (turn_parts or {}).items()}
        self._queued: dict[int, Job[T]] = {}
        self._running: dict[int, Job[T]] = {}
        self._ids = itertools.count(1)
        self._stats: dict[str, ModelStats] = {}

    def submit(self, model: str, info: JobInfo, payload: T, size: float, now: float) -> Job[T]:
        """Queue a job; raises ``Dropped`` for a droppable one that could not start within its slack."""
        cost = self.estimate(model, size)
        start_by = 0.0 if info.work in FIRST_AUDIO else max(info.slack_s - cost, 0.0)  # done when it is needed
        job = Job(next(self._ids), model, info, payload, now, now + start_by, cost)
        stats = self._model(model)
        patience = start_by if info.drop_after_s is None else info.drop_after_s
        if info.work in DROPPABLE and self._wait_before(self._rank(job, now), now) > patience:
            stats.dropped += 1
            raise WorkDropped(model, f"busy: {info.work.value} dropped")
        self._queued[job.id] = job
        stats.queued += 1
        return job

    def cancel(self, job_id: int) -> bool:
        """Forget a queued job (its turn was cancelled, its transcript superseded). False if not queued."""
        job = self._queued.pop(job_id, None)
        if job is None:
            return False
        self._model(job.model).queued -= 1
        return True

    def clear(self) -> list[Job[T]]:
        """Forget every queued job (shutdown) and return them."""
        jobs = list(self._queued.values())
        for job in jobs:
            self.cancel(job.id)
        return jobs

    def next(self, now: float) -> Job[T] | None:
        """The job to start now, if a worker is free and one is queued; it counts as running until ``finish``."""
        if len(self._running) >= self.capacity or not self._queued:
            return None
        job = min(self._queued.values(), key=lambda j: self._rank(j, now))
        del self._queued[job.id]
        job.started = now
        self._running[job.id] = job
        stats = self._model(job.model)
        stats.queued -= 1
        stats.running += 1
        stats.started += 1
        stats.last_wait_s = now - job.submitted
        stats.wait_s_total += stats.last_wait_s
        return job

    def finish(self, job: Job[T], now: float, size: float | None = None, cpu_s: float = 0.0) -> None:
        """``job`` is done, after ``cpu_s`` of its thread's CPU time; with ``size``, its run time refines the
        model's cost estimate."""
        if self._running.pop(job.id, None) is None:
            return
        stats = self._model(job.model)
        stats.running -= 1
        stats.cpu_s_total += max(cpu_s, 0.0)
        if not size or job.started is None:
            return
        ran = now - job.started
        self._learn(self._rates, job.model, ran / size)
        part = TURN_PARTS.get(job.info.work)
        if part is not None:
            self._learn(self._parts, part, ran)

    def _learn(self, table: dict[str, _Estimate], key: str, value: float) -> None:
        known = table.get(key)
        if known is None or not known.observed:
            table[key] = _Estimate(value, observed=True)
        else:
            known.value += self.SMOOTHING * (value - known.value)

    def estimate(self, model: str, size: float) -> float:
        rate = self._rates.get(model)
        return (rate.value if rate else 0.01) * max(size, 0.0)

    def turn_cost(self) -> float:
        """One turn's first-audio work (``TURN_PARTS``) at what it has cost lately, in seconds."""
        return sum(part.value for part in self._parts.values())

    def stats(self, now: float, pending_turns: int = 0) -> QueueStats:
        """The queues now; the wait is a new first-audio job's, behind ``pending_turns`` turns not queued yet."""
        new_first_audio = (1, now, 1 << 62)  # a first sentence: behind all end-of-turn work and urgent audio
        turn_cost = self.turn_cost()
        wait = self._wait_before(new_first_audio, now) + max(pending_turns, 0) * turn_cost / self.capacity
        return QueueStats({model: _copy(s) for model, s in self._stats.items()}, wait, turn_cost)

    def _rank(self, job: Job[T], now: float) -> tuple[int, float, int]:
        if job.info.work in END_OF_TURN:
            return (0, job.deadline, job.id)
        urgent = job.first_audio or job.deadline <= now
        return (1 if urgent else 2, job.deadline, job.id)

    def _wait_before(self, rank: tuple[int, float, int], now: float) -> float:
        """Estimated wait before a job of ``rank`` starts: the work ahead of it spread over the workers."""
        ahead = sum(j.cost for j in self._queued.values() if self._rank(j, now) < rank)
        if len(self._running) < self.capacity and ahead == 0.0:
            return 0.0
        busy = sum(max(j.cost - (now - _started(j, now)), 0.0) for j in self._running.values())
        return (busy + ahead) / self.capacity

    def _model(self, model: str) -> ModelStats:
        return self._stats.setdefault(model, ModelStats())


def merge(stats: list[QueueStats]) -> QueueStats:
    """Several schedulers' statistics as one (their models are distinct); a new call waits for the slowest."""
    models: dict[str, ModelStats] = {}
    for one in stats:
        models.update(one.models)
    return QueueStats(
        models,
        max((one.first_audio_wait_s for one in stats), default=0.0),
        sum(one.turn_cost_s for one in stats),
    )


def _started(job: Job[T], now: float) -> float:
    return job.started if job.started is not None else now


def _copy(stats: ModelStats) -> ModelStats:
    return dataclasses.replace(stats)
