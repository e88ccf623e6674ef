"""What a connection speaks on its socket: the ``Wire`` a ``Connection`` is generic over.

A wire turns inbound frames into core events (or caller audio), server events into outbound payloads, and
sends each payload (``BrowserWire`` at once; the Twilio wire paces audio in real time). Payloads tagged
with a turn and of type ``bytes`` are reply audio: the outbox counts them for backpressure and drops them
on barge-in, so a wire keeps audio as raw PCM until ``send``.
"""

from __future__ import annotations

from typing import Protocol

from websockets.asyncio.server import ServerConnection

from agent.core.events import ClientEnded, Event, PlaybackMark, ServerEvent
from agent.errors import ProtocolError
from agent.runtime.outbox import Payload
from agent.transport import browser

Inbound = bytes | Event | browser.EnrollmentMessage | None
"""Caller PCM16LE at ``input_rate``, an event for the core, an enrollment request, or nothing."""


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

    def opening(self, session_id: str, voice: str) -> list[Payload]: ...

    def decode(self, message: str | bytes) -> Inbound:
        """One inbound frame. Raises ``ProtocolError``."""
        ...

    def encode(self, event: ServerEvent) -> list[Payload]:
        """Outbound payloads for ``event`` (none for events the wire has no message for)."""
        ...

    async def send(self, ws: ServerConnection, turn: int | None, payload: Payload) -> None: ...


class BrowserWire:
    """Protocol v1 (``/ws``): JSON text frames and binary PCM, sent as soon as they are ready."""

    def __init__(self, start: browser.SessionStart, output_rate: int, frame_ms: int, max_input_frame_ms: int) -> None:
        self._start = start
        self._output_rate = output_rate
        self._frame_ms = frame_ms
        self._max_ms = max_input_frame_ms

    @property
    def input_rate(self) -> int:
        return self._start.sample_rate

    @property
    def output_rate(self) -> int:
        return self._output_rate

    @property
    def frame_ms(self) -> int:
        return self._frame_ms

    @property
    def can_pause(self) -> bool:
        return "playback.pause" in self._start.capabilities

    def opening(self, session_id: str, voice: str) -> list[Payload]:
        start = self._start
        return [browser.session_started(session_id, self.input_rate, self._output_rate, voice, start.capabilities)]

    def decode(self, message: str | bytes) -> Inbound:
        if isinstance(message, bytes):
            return browser.check_audio(message, self.input_rate, self._max_ms)
        request = browser.decode_text(message)
        if isinstance(request, browser.SessionEnd):
            return ClientEnded()
        if isinstance(request, browser.PlaybackMarkMessage):
            return PlaybackMark(request.turn, request.played_ms)
        if isinstance(request, browser.SessionStart):
            raise ProtocolError("already_started", "this session has already started")
        return request

    def encode(self, event: ServerEvent) -> list[Payload]:
        return [browser.encode(event)]

    async def send(self, ws: ServerConnection, turn: int | None, payload: Payload) -> None:
        await ws.send(payload)
