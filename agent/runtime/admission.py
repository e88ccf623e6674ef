"""Whether the server takes another call now, decided before the upgrade (pure).

``refusal`` is asked by ``process_request`` for every WebSocket upgrade and by ``/healthz``: while it
answers, the upgrade gets HTTP 503 with ``Retry-After`` (a refused caller costs one small HTTP answer) and
``/healthz`` answers 503 with the same ``reason``, so a load balancer sends calls elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Reason = Literal["loading", "failed", "draining", "full"]


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: Reason
    message: str
    retry_after_s: int
    """Sent as ``Retry-After``: when trying this server again may succeed."""


LOADING = Refusal("loading", "server is still loading models", 5)
FAILED = Refusal("failed", "server could not load its models", 30)
DRAINING = Refusal("draining", "server is shutting down", 10)
FULL = Refusal("full", "server is at its session limit", 2)


def refusal(*, loaded: bool, failed: bool, draining: bool, sessions: int, max_sessions: int) -> Refusal | None:
    """Why a new call is refused now, or ``None`` when it is taken."""
    if draining:
        return DRAINING
    if failed:
        return FAILED
    if not loaded:
        return LOADING
    if sessions >= max_sessions:
        return FULL
    return None
