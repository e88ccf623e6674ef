"""What a connection speaks on its socket: the ``Wire`` a ``Connection`` is generic over.

A wire turns inbound frames into core events (or caller audio), server events into outbound payloads, and
sends each payload (``BrowserWire`` at once; the Twilio wire paces audio in real time). Payloads tagged
with a turn and of type ``bytes`` are reply audio: the outbox counts them for backpressure and drops them
on barge-in, so a wire keeps audio as raw PCM until ``send``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agent.core.events import ClientEnded, ConversationEvent, Event, PlaybackMark, ServerEvent
from agent.core.turn_state import SessionConfig
from agent.errors import ProtocolError
from agent.runtime.call.outbox import Payload
from agent.runtime.call.socket import CallSocket
from agent.wires.browser import codec as browser


@dataclass(frozen=True, slots=True)
class Reconfigure:
    """The client changes its session's settings (a Realtime ``session.update``), already checked by the wire.

    The connection switches to ``voice`` (a voice name to resolve; ``None``: unchanged), hears the caller at the
    wire's ``input_rate`` with speech ``threshold`` (``None``: unchanged), gives the core ``rules(current, base)``
    (``base``: the rules from the server's settings), then sends what ``applied(voice)`` returns, ``voice`` being
    the name of the voice now spoken in. An unknown voice is refused (``ProtocolError``) and nothing changes.
    With ``language_set``, the caller's language becomes ``language`` (a code of ``agent.languages.LANGUAGES``,
    already parsed; ``None``: detect it); without, it stays as it is."""

    voice: str | None
    threshold: float | None
    rules: Callable[[SessionConfig, SessionConfig], SessionConfig]
    applied: Callable[[str], list[Payload]]
    language_set: bool = False
    language: str | None = None


Inbound = bytes | Event | browser.EnrollmentMessage | Reconfigure | None
"""Caller PCM16LE at ``input_rate``, an event for the core, an enrollment request, a change of the session's
settings, or nothing."""


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

    async def send(self, ws: CallSocket, turn: int | None, payload: Payload) -> None: ...


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
        rates = (self.input_rate, self._output_rate)
        return [browser.session_started(session_id, *rates, voice, start.capabilities, start.language)]

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
        if isinstance(event, ConversationEvent):
            return []  # answers to requests a v1 client cannot make
        return [browser.encode(event)]

    async def send(self, ws: CallSocket, turn: int | None, payload: Payload) -> None:
        await ws.send(payload)
