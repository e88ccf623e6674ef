"""Twilio Media Streams (``/twilio``): the ``TwilioWire`` a ``Connection`` runs on (its opening handshake is
``agent.runtime.opening.PreStart.open_twilio``).

Twilio sends ``connected`` then ``start``; the voice comes from ``start.customParameters.voice``. Caller
audio is μ-law 8 kHz (``CallerAudio`` resamples it to 16 kHz); replies are synthesized at 8 kHz in 20 ms
frames and leave as ``media`` messages paced in real time by ``Pacer`` (a small lead, never a burst of
seconds, so a ``clear`` has little to throw away), each followed by a ``mark`` named ``turn:played_ms``.
Twilio echoes a mark when the caller has heard the audio before it; that becomes a ``PlaybackMark`` for
the core. Barge-in (``PlaybackClear``) sends ``clear``; so does a pause (``PlaybackPause``: the caller started
speaking over the reply), after which the reply is sent again from the paused position, its marks in a new
segment so that the marks Twilio echoes for the cleared audio are told apart. Malformed or out-of-order
messages are counted and dropped; the call goes on.
"""

from __future__ import annotations

import logging
from collections import Counter, deque

from websockets.asyncio.server import ServerConnection

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
from agent.runtime.outbox import Payload
from agent.runtime.pacing import Pacer
from agent.runtime.wire import Inbound
from agent.transport import twilio

log = logging.getLogger(__name__)


class TwilioWire:
    """The Twilio side of one call: decode its messages, encode ours, pace the audio."""

    input_rate = twilio.RATE
    output_rate = twilio.RATE
    frame_ms = twilio.FRAME_MS
    can_pause = True

    def __init__(self, start: twilio.Start, lead_ms: int, dropped: Counter[str] | None = None) -> None:
        self.start = start
        self.dropped: Counter[str] = dropped if dropped is not None else Counter()
        self._pacer = Pacer(lead_ms / 1000)
        self._played: dict[int, float] = {}  # position in each turn's reply audio of what was sent so far
        self._segments: dict[int, int] = {}  # per turn: how many times it was paused
        self._cleared: set[int] = set()
        self._clears: deque[tuple[int, int] | None] = deque()  # per queued ``clear``: the pause it is, if one
        self._clear = twilio.clear(start.stream_sid)

    def opening(self, session_id: str, voice: str) -> list[Payload]:
        return []

    def decode(self, message: str | bytes) -> Inbound:
        try:
            return self._decode(message)
        except ProtocolError as exc:
            self.dropped[exc.code] += 1
            raise

    def _decode(self, message: str | bytes) -> Inbound:
        match twilio.decode(message):
            case twilio.Media(pcm=pcm):
                return pcm
            case twilio.Mark(name=name):
                parsed = twilio.parse_mark(name)
                if parsed is None or parsed[0] in self._cleared:  # a clear also echoes dropped marks
                    return None
                turn, played, segment = parsed
                if segment != self._segments.get(turn, 0):
                    return None  # audio from before a pause, which the pause's clear dropped
                return PlaybackMark(turn, played)
            case twilio.Stop():
                return ClientEnded()
            case twilio.Dtmf(digit=digit):
                log.info("call %s: DTMF %s", self.start.call_sid, digit)
                return None
            case twilio.Start() | twilio.Connected():
                raise ProtocolError("already_started", "the stream has already started")

    def encode(self, event: ServerEvent) -> list[Payload]:
        if isinstance(event, AudioChunk):
            return [event.pcm]
        if isinstance(event, PlaybackClear):
            self._cleared.add(event.turn)
            self._clears.append(None)
            return [self._clear]
        if isinstance(event, PlaybackPause):
            self._clears.append((event.turn, event.played_ms))
            return [self._clear]
        if isinstance(event, SessionEnded):
            log.info("call %s ended: %s", self.start.call_sid, event.reason)
        return []  # Twilio has no messages for transcripts, metrics or errors

    def _cleared_now(self) -> None:
        """A ``clear`` goes out: nothing is buffered any more; after a pause, the turn's audio is sent again
        from the paused position, in a new segment of marks."""
        self._pacer.reset()
        pause = self._clears.popleft() if self._clears else None
        if pause is not None:
            turn, played_ms = pause
            self._segments[turn] = self._segments.get(turn, 0) + 1
            self._played[turn] = float(played_ms)

    async def send(self, ws: ServerConnection, turn: int | None, payload: Payload) -> None:
        if isinstance(payload, str):
            if payload == self._clear:
                self._cleared_now()
            await ws.send(payload)
            return
        duration_ms = len(payload) / 16  # PCM16 at 8 kHz
        await self._pacer.wait(duration_ms / 1000)
        sid = self.start.stream_sid
        await ws.send(twilio.media(sid, payload))
        if turn is not None:
            played = self._played[turn] = self._played.get(turn, 0.0) + duration_ms
            await ws.send(twilio.mark(sid, turn, played, self._segments.get(turn, 0)))
