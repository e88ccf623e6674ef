"""The telephony core: what every phone gateway's wire does, whatever the provider speaks.

A provider plugs in as a ``Gateway``: its pure codec (``agent.wires.phone.<provider>.codec``) bound to one call,
which turns the provider's messages into the few things a call carries (caller audio as PCM16LE, a mark the
far end played, a keypress, a hang-up) and makes the provider's messages for reply audio, a mark and a
clear. ``TelephonyWire`` does the rest, the same for all of them:

- **pacing**: reply audio leaves in real time (``Pacer``: a small lead, never a burst of seconds), so a
  ``clear`` (or, for a provider without one, simply no more frames) has little to throw away;
- **marks**: after each frame, a mark named ``turn:played_ms[:segment]`` (``agent.wires.phone.marks``); the
  far end echoes it once the caller heard the audio before it, which becomes a ``PlaybackMark`` for the core.
  A provider without marks (``Gateway.mark`` returns ``None``) sends none: the core then takes what was heard
  from its own playback clock;
- **clear**: barge-in (``PlaybackClear``) and a pause (``PlaybackPause``, the caller started speaking over the
  reply) send the provider's clear; after a pause the reply is sent again from the paused position, its marks in
  a new segment, so that the marks echoed for the cleared audio are told apart and dropped;
- **pause**: every call can pause at the caller's onset, since the server paces the audio: it stops sending
  frames. A provider without a clear (``Gateway.clear`` returns ``None``) still plays the lead it was sent, so
  the reply resumes after it (``pause_overrun_ms``);
- **bad input**: malformed or out-of-order messages are counted in ``dropped`` and refused (the connection
  logs and counts them; the call goes on); DTMF is logged. What a peer sent goes into log lines through
  ``agent.security.logsafe.shown`` (the codecs check ids and digits too): one record stays one line.

The opening (the provider's start message, the voice it asks for) is ``agent.wires.phone.opening.open_call`` with a
``StartDecoder`` from the provider's module; ``PhoneStart`` is what it yields.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from agent.core.events import (
    AudioChunk,
    ClientEnded,
    PlaybackClear,
    PlaybackMark,
    PlaybackPause,
    ServerEvent,
    SessionEnded,
)
from agent.errors import ProtocolError
from agent.runtime.call.outbox import Payload
from agent.runtime.call.wire import Inbound
from agent.security.logsafe import shown
from agent.wires.phone import marks
from agent.wires.phone.pacing import Pacer

log = logging.getLogger(__name__)

FRAME_MS = 20
"""Reply audio frame length on every phone gateway (what Twilio, Telnyx and Vonage expect)."""


@dataclass(frozen=True, slots=True)
class MarkPlayed:
    """The far end played everything sent before the mark ``name`` (or dropped it at a clear)."""

    name: str


@dataclass(frozen=True, slots=True)
class Keypress:
    digit: str


@dataclass(frozen=True, slots=True)
class HungUp:
    """The provider ended the stream (Twilio and Telnyx ``stop``)."""


CallMessage = bytes | MarkPlayed | Keypress | HungUp | None
"""What one provider message means for the call: caller PCM16LE at ``Gateway.input_rate``, a mark played, a
keypress, the end, or nothing (a message with nothing for the call, such as an acknowledgement)."""


class Gateway(Protocol):
    """One provider's codec bound to one call: everything ``TelephonyWire`` needs from it."""

    @property
    def provider(self) -> str:
        """``twilio``, ``telnyx``, ``vonage``...: for log lines."""
        ...

    @property
    def call_id(self) -> str:
        """The provider's id of the call (Twilio ``callSid``, Telnyx ``call_control_id``...), for log lines."""
        ...

    @property
    def input_rate(self) -> int: ...

    @property
    def output_rate(self) -> int: ...

    def decode(self, message: str | bytes) -> CallMessage:
        """One message after the start. Raises ``ProtocolError`` (``already_started`` for a second start)."""
        ...

    def media(self, pcm: bytes) -> Payload:
        """The message carrying one frame of reply audio (PCM16LE at ``output_rate``)."""
        ...

    def mark(self, name: str) -> str | None:
        """The (text) message asking to be told when the audio sent so far has played; ``None``: none exists."""
        ...

    def clear(self) -> str | None:
        """The (text) message that empties the far end's playout buffer; ``None``: the provider has none."""
        ...


@dataclass(frozen=True, slots=True)
class PhoneStart:
    """A call's start, decoded: the bound codec, the voice the call asks for (``None``: the default) and the
    language it is in (the gateway's ``language`` custom parameter, as given: ``phone_language`` reads it)."""

    gateway: Gateway
    voice: str | None = None
    language: str | None = None


StartDecoder = Callable[[str | bytes], "PhoneStart | HungUp | None"]
"""Reads one message before the start: the start, ``HungUp()`` for a stream that ended before it started, or
``None`` for a message that precedes the start (Twilio's and Telnyx's ``connected``). Raises ``ProtocolError``
(``not_started`` for media before the start)."""


class Sender(Protocol):
    """Where payloads go: a WebSocket connection, or any socket with an ``async send``."""

    def send(self, message: str | bytes, /) -> Awaitable[None]: ...


class TelephonyWire:
    """The ``Wire`` of a phone call on any gateway: decode its messages, encode ours, pace the audio."""

    frame_ms = FRAME_MS
    phone_line = True

    def __init__(
        self,
        gateway: Gateway,
        lead_ms: int,
        dropped: Counter[str] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """``lead_ms``: reply audio sent ahead of real time; ``dropped``: counts refused messages by code
        (shared with the opening, so the count covers the whole call); ``clock``/``sleep``: the pacer's."""
        self.gateway = gateway
        self.dropped: Counter[str] = dropped if dropped is not None else Counter()
        self._pacer = Pacer(lead_ms / 1000, clock, sleep)
        self._played: dict[int, float] = {}  # position in each turn's reply audio of what was sent so far
        self._segments: dict[int, int] = {}  # per turn: how many times it was paused
        self._cleared: set[int] = set()
        self._clears: deque[tuple[int, int] | None] = deque()  # per queued clear: the pause it is, if one
        self._clear = gateway.clear()
        self._lead_ms = lead_ms
        self._bytes_per_ms = gateway.output_rate * 2 / 1000

    @property
    def input_rate(self) -> int:
        return self.gateway.input_rate

    @property
    def output_rate(self) -> int:
        return self.gateway.output_rate

    @property
    def can_pause(self) -> bool:
        return True  # the pacer stops sending at once; a clear also drops what the far end holds

    @property
    def pause_overrun_ms(self) -> int:
        return 0 if self._clear is not None else self._lead_ms

    def opening(self, session_id: str, voice: str) -> list[Payload]:
        return []

    def summary(self) -> str:
        """One line for the end of the call: its provider, id and the messages dropped."""
        return f"{self.gateway.provider} call {shown(self.gateway.call_id)}: dropped messages {dict(self.dropped)}"

    def decode(self, message: str | bytes) -> Inbound:
        try:
            return self._decode(message)
        except ProtocolError as exc:
            self.dropped[exc.code] += 1
            raise

    def _decode(self, message: str | bytes) -> Inbound:
        match self.gateway.decode(message):
            case bytes() as pcm:
                return pcm
            case MarkPlayed(name=name):
                parsed = marks.parse(name)
                if parsed is None or parsed[0] in self._cleared:  # a clear also echoes dropped marks
                    return None
                turn, played, segment = parsed
                if segment != self._segments.get(turn, 0):
                    return None  # audio from before a pause, which the pause's clear dropped
                return PlaybackMark(turn, played)
            case HungUp():
                return ClientEnded()
            case Keypress(digit=digit):
                log.info("%s call %s: DTMF %s", self.gateway.provider, shown(self.gateway.call_id), shown(digit))
                return None
            case None:
                return None

    def encode(self, event: ServerEvent) -> list[Payload]:
        if isinstance(event, AudioChunk):
            return [event.pcm]
        if isinstance(event, PlaybackClear):
            self._cleared.add(event.turn)
            if self._clear is None:
                return []  # nothing to send: the far end plays out the small lead, then hears no more
            self._clears.append(None)
            return [self._clear]
        if isinstance(event, PlaybackPause) and self._clear is not None:
            self._clears.append((event.turn, event.played_ms))
            return [self._clear]
        if isinstance(event, SessionEnded):
            log.info("%s call %s ended: %s", self.gateway.provider, shown(self.gateway.call_id), event.reason)
        return []  # phone gateways have no messages for transcripts, metrics or errors

    def _cleared_now(self) -> None:
        """A clear goes out: nothing is buffered any more; after a pause, the turn's audio is sent again from
        the paused position, in a new segment of marks."""
        self._pacer.reset()
        pause = self._clears.popleft() if self._clears else None
        if pause is not None:
            turn, played_ms = pause
            self._segments[turn] = self._segments.get(turn, 0) + 1
            self._played[turn] = float(played_ms)

    async def send(self, ws: Sender, turn: int | None, payload: Payload) -> None:
        if isinstance(payload, str):
            if payload == self._clear:
                self._cleared_now()
            await ws.send(payload)
            return
        duration_ms = len(payload) / self._bytes_per_ms
        await self._pacer.wait(duration_ms / 1000)
        await ws.send(self.gateway.media(payload))
        if turn is not None:
            played = self._played[turn] = self._played.get(turn, 0.0) + duration_ms
            mark = self.gateway.mark(marks.name(turn, played, self._segments.get(turn, 0)))
            if mark is not None:
                await ws.send(mark)
