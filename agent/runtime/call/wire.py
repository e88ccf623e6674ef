"""What a connection speaks on its socket: the ``Wire`` protocol a ``Connection`` is generic over.

A wire turns inbound frames into core events (or caller audio), server events into outbound payloads, and
sends each payload (protocol v1 at once; the phone gateways pace audio in real time). Payloads tagged with a
turn and of type ``bytes`` are reply audio: the outbox counts them for backpressure and drops them on
barge-in, so a wire keeps audio as raw PCM until ``send``. What one protocol does that another does not (a
change of the session's settings, a summary line for the log) is a method or a message here, never a test of
which wire a connection runs on. The implementations live in ``agent.wires``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent.config import Settings
from agent.core.events import Event, ServerEvent
from agent.core.policies import SessionConfig
from agent.runtime.call.outbox import Payload
from agent.runtime.call.socket import CallSocket
from agent.runtime.components import Components
from agent.security.auth import Principal

VoiceLookup = Callable[[str | None], Awaitable[str]]
"""The voice handle for a voice name in the caller's tenant (``None``: the server's default voice); raises
``UnknownVoice`` for a voice that is not here."""


@dataclass(frozen=True, slots=True)
class Reconfigure:
    """The client changes its session's settings (a Realtime ``session.update``), already checked by the wire.

    The connection switches to the voice ``voice(lookup)`` finds (``None``: unchanged; it raises
    ``ProtocolError`` for a voice that is not here), hears the caller at the wire's ``input_rate`` with speech
    ``threshold`` (``None``: unchanged), gives the core ``rules(current, base)`` (``base``: the rules from the
    server's settings), then sends what ``applied(voice)`` returns, ``voice`` being the name of the voice now
    spoken in. A refused voice or language raises ``ProtocolError`` and nothing changes. With
    ``language_set``, the caller's language becomes ``language`` (a code of ``agent.languages.LANGUAGES``,
    already parsed; ``None``: detect it); without, it stays as it is."""

    voice: Callable[[VoiceLookup], Awaitable[str]] | None
    threshold: float | None
    rules: Callable[[SessionConfig, SessionConfig], SessionConfig]
    applied: Callable[[str], list[Payload]]
    language_set: bool = False
    language: str | None = None


@dataclass(frozen=True, slots=True)
class Aside:
    """A request the connection hands to its ``SideChannel`` (protocol v1's voice enrollment), as decoded."""

    request: object


Inbound = bytes | Event | Reconfigure | Aside | None
"""Caller PCM16LE at ``input_rate``, an event for the core, a change of the session's settings, a request for
the side channel, or nothing."""


class SideChannel(Protocol):
    """Requests a connection serves beside its call, before the session and during it, in the order they
    arrive (protocol v1's voice enrollment, ``agent.wires.browser.enrollment``): one per connection."""

    @property
    def busy(self) -> bool:
        """The server is still working on a request (the start deadline waits for it)."""
        ...

    async def handle(self, principal: Principal, request: Any) -> None:
        """Serve ``request`` (a message the path's wire or opening decoded for it) as ``principal``; the answers
        go through the connection's outbox. Never raises."""
        ...

    def close(self) -> None:
        """The connection ends: stop what is still running."""
        ...


SideChannels = Callable[[Components, Settings, Callable[[str], None], "logging.LoggerAdapter[Any]"], SideChannel]
"""Makes a connection's side channel: its components and settings, where its answers go (the outbox), the
connection's log."""


class Wire(Protocol):
    @property
    def input_rate(self) -> int: ...

    @property
    def output_rate(self) -> int: ...

    @property
    def frame_ms(self) -> int:
        """Reply audio frame length."""
        ...

    @property
    def can_pause(self) -> bool:
        """The client stops playing at once on a pause and plays the audio sent again after it."""
        ...

    @property
    def pause_overrun_ms(self) -> int:
        """Reply audio the far end still plays after a pause (it cannot drop what it was sent ahead): the resumed
        reply goes on after it."""
        ...

    @property
    def phone_line(self) -> bool:
        """The caller is on a phone line, whose far end cancels no echo of what it plays: the echo gate listens
        whenever it is on (elsewhere only where ``echo.browser`` asks, ``agent.runtime.call.caller_audio``)."""
        ...

    def opening(self, session_id: str, voice: str) -> list[Payload]: ...

    def decode(self, message: str | bytes) -> Inbound:
        """One inbound frame. Raises ``ProtocolError``."""
        ...

    def encode(self, event: ServerEvent) -> list[Payload]:
        """Outbound payloads for ``event`` (none for events the wire has no message for)."""
        ...

    async def send(self, ws: CallSocket, turn: int | None, payload: Payload) -> None: ...

    def summary(self) -> str | None:
        """One line for the log when the call ends (a phone call's provider, id and dropped messages); ``None``:
        nothing to add to the connection's own."""
        ...
