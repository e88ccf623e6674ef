"""The listener's settings (``AGENT_SERVER__*``): address, WebSocket limits, admission, drain, origins.

Reason to change: the front door gains or loses a limit.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from agent.config.addresses import cidrs
from agent.config.origins import normalize_origin


class ServerSettings(BaseModel):
    """WebSocket/HTTP listener and its limits."""

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    max_message_bytes: int = Field(65536, ge=1024, description="Largest WebSocket message accepted (1009).")
    max_queue: int = Field(8, ge=1, description="Incoming frames buffered before TCP backpressure.")
    ping_interval_s: float = Field(20.0, gt=0)
    ping_timeout_s: float = Field(20.0, gt=0)
    open_timeout_s: float = Field(10.0, gt=0)
    close_timeout_s: float = Field(5.0, gt=0)
    max_sessions: int = Field(
        64,
        ge=1,
        description="Concurrent sessions (started: session.start, a phone call's start), a memory bound; more are "
        "refused with 503 full. Load is judged by work (admission_wait_ms), not by this.",
    )
    max_opening: int = Field(
        64,
        ge=1,
        description="Connections whose session has not started yet (before session.start or a phone call's "
        "start, authenticated or not), in total; more are refused with 503. They are never counted as load.",
    )
    max_opening_anonymous: int | None = Field(
        None,
        ge=0,
        description="Of max_opening, how many may be connections with no valid credential at the upgrade (no "
        "bearer token: a browser sends its token in session.start; with auth off, every connection); more are "
        "refused with 503. The rest is kept for upgrades whose credential checked out, so sockets without one, "
        "from anywhere, never refuse those. Default (unset): max_opening less a quarter (48 of 64).",
    )
    max_opening_per_peer: int = Field(
        8,
        ge=0,
        description="Connections with no valid credential at the upgrade whose session has not started yet, per "
        "client address (IPv6: per /64); more are refused with 429. 0 = no bound per address. Behind your own "
        "proxies, set trusted_proxies.",
    )
    max_opening_per_tenant: int = Field(
        16,
        ge=0,
        description="Connections whose upgrade carried a valid bearer token and whose session has not started "
        "yet, per tenant (never per address); more are refused with 429. 0 = no bound per tenant.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Addresses or networks (CIDR) of your own proxies (load balancer, ingress): a connection from "
        "one is counted under the right-most X-Forwarded-For address that is not one of them; from anywhere "
        "else the header is ignored.",
    )
    admission_wait_ms: int = Field(
        500,
        ge=0,
        description="A new call is refused (503 busy) while a new first sentence would wait longer than this "
        "for the models, behind the work queued and running and one turn for every caller speaking now (idle "
        "sessions and connections that have not started count nothing); 0 = never refuse for load.",
    )
    model_workers: int = Field(
        0,
        ge=0,
        description="Worker threads running the local models (ASR and Piper share them, in deadline order); "
        "0 = cores // max(asr.cpu_threads, tts.cpu_threads), so the models never oversubscribe the cores.",
    )
    event_loop: Literal["auto", "asyncio", "uvloop"] = Field(
        "auto",
        description="The event loop: auto = uvloop when installed (about half the per-frame cost), else asyncio.",
    )
    drain_s: float = Field(
        30.0,
        ge=0,
        description="SIGTERM: time live calls get to finish the reply in progress and hear the goodbye; "
        "then every call is closed 1001 and the process exits.",
    )
    start_timeout_s: float = Field(10.0, gt=0, description="Time allowed to send session.start.")
    send_timeout_s: float = Field(
        10.0, gt=0, description="Longest wait to hand one message to a client; a client that does not read is closed."
    )
    max_outbox_bytes: int = Field(
        1 << 20,
        ge=65536,
        description="Messages (text and audio) queued for one client beyond its audio buffer; a client that lets "
        "more pile up is not reading: closed 1008 at once.",
    )
    send_buffer_bytes: int = Field(
        65536,
        ge=0,
        description="The kernel's send buffer of each client socket (SO_SNDBUF); small, so that a client that "
        "stops reading blocks the next send within seconds (send_timeout_s) instead of absorbing minutes of "
        "audio; 0 = the system's default.",
    )
    max_input_rate: float = Field(1.5, gt=1.0, description="Caller audio allowed, as a multiple of real time.")
    input_rate_window_s: float = Field(5.0, gt=0, description="Burst of audio allowed: max_input_rate x this.")
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins (scheme://host[:port]) allowed on the WebSocket paths, besides the "
        "server's own address and localhost; any other Origin gets HTTP 403.",
    )

    @property
    def opening_anonymous(self) -> int:
        """How many connections still opening may have no valid credential (``max_opening_anonymous``)."""
        if self.max_opening_anonymous is not None:
            return self.max_opening_anonymous
        return self.max_opening - self.max_opening // 4

    @model_validator(mode="after")
    def _anonymous_share(self) -> ServerSettings:
        if self.max_opening_anonymous is not None and self.max_opening_anonymous > self.max_opening:
            raise ValueError(
                f"server.max_opening_anonymous ({self.max_opening_anonymous}) must not exceed server.max_opening "
                f"({self.max_opening}): it is the share of those that connections without a credential may take"
            )
        return self

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: list[str]) -> list[str]:
        return cidrs(value)

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        normalized = []
        for origin in value:
            found = normalize_origin(origin)
            if found is None:
                raise ValueError(f"not an origin (scheme://host[:port], no path): {origin!r}")
            normalized.append(found)
        return normalized
