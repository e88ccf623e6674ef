"""Our own retry policy for remote speech: bounded attempts, jittered backoff, one deadline for all of them.

The SDK's retries are off (one layer retries, not two). A request is retried only when the adapter mapped
its failure to ``ProviderUnavailable`` (throttled, overloaded, not ready, a 5xx of the model);
``ProviderError`` (a 4xx, a validation error) and ``ProviderTimeout`` are final. Every attempt and every
pause must fit before the deadline, so a caller never waits past it, and every retry is paid from the
reply's ``RetryBudget`` (shared by its sentences), so a failing endpoint costs a reply a bounded time.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass

from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import Retries

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_attempts`` tries in all; pause ``base_delay_s × 2^n`` capped at ``max_delay_s``, with full jitter."""

    max_attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 2.0
    deadline_s: float = 10.0
    """Time from the first attempt until audio must have started, retries and pauses included."""

    def delay(self, retry: int, rand: Callable[[], float] = random.random) -> float:
        """The pause before retry number ``retry`` (1 = the first retry): uniform in (0, cap]."""
        cap = min(self.max_delay_s, self.base_delay_s * 2.0 ** (retry - 1))
        return max(0.001, cap * float(rand()))


def is_retryable(exc: ProviderError) -> bool:
    """Transient failures only: ``ProviderUnavailable``. Timeouts are final: the deadline was spent waiting."""
    return isinstance(exc, ProviderUnavailable)


class Attempts:
    """Bookkeeping for the attempts at one request. Use::

    attempts = Attempts(policy, "sagemaker", budget)
    while True:
        try:
            async with attempts.time_left():
                ...one attempt...
            break
        except ProviderError as exc:
            await attempts.before_retry(exc)   # re-raises when it may not retry
    """

    def __init__(self, policy: RetryPolicy, provider: str, budget: Retries) -> None:
        self._policy = policy
        self._provider = provider
        self._budget = budget
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._deadline = loop.time() + policy.deadline_s
        self.count = 1

    def remaining(self) -> float:
        return self._deadline - self._loop.time()

    def time_left(self) -> asyncio.Timeout:
        """A timeout context ending at the deadline (``TimeoutError`` inside; map it with ``timed_out``)."""
        return asyncio.timeout_at(self._deadline)

    def timed_out(self) -> ProviderTimeout:
        return ProviderTimeout(self._provider, f"no audio within {self._policy.deadline_s:g} s ({self.count} attempts)")

    async def before_retry(self, exc: ProviderError) -> None:
        """Sleep before the next attempt, or re-raise ``exc`` if it is final, attempts are used up, the
        pause would end past the deadline, or the reply's retry budget is spent."""
        if not is_retryable(exc) or self.count >= self._policy.max_attempts:
            raise exc
        pause = self._policy.delay(self.count)
        if pause >= self.remaining():
            raise exc
        if not self._budget.take():
            log.info("%s: no retries left for this reply (%s)", self._provider, exc)
            raise exc
        log.info("%s: attempt %d failed (%s); retrying in %.0f ms", self._provider, self.count, exc, pause * 1000)
        await asyncio.sleep(pause)
        self.count += 1
