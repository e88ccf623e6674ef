"""Whether the server takes another call now, decided before the upgrade (pure).

``refusal`` is asked by ``process_request`` for every WebSocket upgrade and by ``/healthz``: while it
answers, the upgrade gets HTTP 503 with ``Retry-After`` (a refused caller costs one small HTTP answer) and
``/healthz`` answers 503 with the same ``reason``, so a load balancer sends calls elsewhere.

Besides the session limit, a load-aware one: ``busy`` while a new caller's first sentence would wait longer than
``server.admission_wait_ms`` for the models (the scheduler's estimate, ``agent.work.scheduling``): the work queued
and running, plus one turn for every call whose caller is speaking now (``agent.runtime.server.occupancy``). Sockets
that have not spoken, idle sessions and unauthenticated sockets add nothing to it. Calls already live are never
touched by it: the refusal is only ever of a new upgrade.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Reason = Literal["loading", "failed", "draining", "full", "busy", "peer_limit", "tenant_limit", "opening_full"]


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: Reason
    message: str
    retry_after_s: int
    """Sent as ``Retry-After``: when trying this server again may succeed."""
    status: int = 503
    """The HTTP status of a refused upgrade (429 for a peer or a tenant over its own bound)."""


LOADING = Refusal("loading", "server is still loading models", 5)
FAILED = Refusal("failed", "server could not load its models", 30)
DRAINING = Refusal("draining", "server is shutting down", 10)
FULL = Refusal("full", "server is at its session limit", 2)


def busy(wait_s: float) -> Refusal:
    """Too busy to give a new caller a fast first word; retry once the work queued now is likely done."""
    return Refusal("busy", "server is too busy to start another call now", max(1, min(30, math.ceil(wait_s))))


def refusal(
    *,
    loaded: bool,
    failed: bool,
    draining: bool,
    sessions: int,
    max_sessions: int,
    first_audio_wait_s: float = 0.0,
    max_wait_s: float = 0.0,
) -> Refusal | None:
    """Why a new call is refused now, or ``None`` when it is taken. ``first_audio_wait_s``: how long a new first
    sentence would wait for the models now; over ``max_wait_s`` (when above 0) the server is ``busy``."""
    if draining:
        return DRAINING
    if failed:
        return FAILED
    if not loaded:
        return LOADING
    if sessions >= max_sessions:
        return FULL
    if max_wait_s > 0 and first_audio_wait_s > max_wait_s:
        return busy(first_audio_wait_s)
    return None
