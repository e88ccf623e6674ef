"""Where the per-tenant and per-address limits are counted (``AGENT_LIMITS__*``): in this process, or in a Redis
that every replica shares.

Reason to change: the shared counting gains or loses an option. What each limit is, and what happens while Redis
cannot answer, is ``agent.security.limit_rules``; the bounds themselves stay in their sections (``server``,
``voices``).
"""

from __future__ import annotations

from pydantic import Field, SecretStr

from agent.config.credentials import WithSecrets


class LimitsSettings(WithSecrets):
    """Unset ``redis_url`` (the default of ``make run``): every limit is counted in this process, per replica.
    Set: the per-tenant enrollment rate and voice quota, and the per-tenant and per-address bounds of sockets
    opening, are counted in that Redis, so N replicas enforce one limit (docs/scaling.md)."""

    redis_url: SecretStr | None = Field(
        None,
        description="redis://[user:password@]host:port/db (rediss:// for TLS) of the Redis the replicas share; "
        "unset = count in this process. A secret: it may carry a password.",
    )
    check_timeout_ms: float = Field(
        5.0,
        gt=0,
        le=1000,
        description="The most one check may wait for Redis. Past it the check fails: open for call admission "
        "(the socket is taken, bounded by this process's own counts), closed for enrollment and the voice quota "
        "(refused with limits_unavailable).",
    )
    key_prefix: str = Field(
        "voice-agent",
        min_length=1,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="Prefix of every key this server writes (<prefix>:<limit>:<tenant or address>), so several "
        "deployments can share one Redis.",
    )
