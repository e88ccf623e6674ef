"""The AudioSocket wire on the event loop with a simulated clock and socket: its pacing, no marks, no pause."""

from __future__ import annotations

import pytest

from agent.core.events import AudioChunk, ClientEnded, PlaybackClear, PlaybackPause, SessionEnded
from agent.errors import ProtocolError
from agent.wires.audiosocket.gateway import AudioSocketGateway
from agent.wires.phone.telephony import TelephonyWire
from tests.unit.test_audiosocket import CALL, FRAME, raw


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


class Socket:
    def __init__(self) -> None:
        self.sent: list[tuple[float, str | bytes]] = []
        self.clock: Clock | None = None

    async def send(self, message: str | bytes, /) -> None:
        self.sent.append((self.clock() if self.clock else 0.0, message))


async def test_the_wire_paces_audio_messages_sends_no_marks_and_pauses_by_stopping() -> None:
    clock = Clock()
    wire = TelephonyWire(AudioSocketGateway(CALL), lead_ms=100, clock=clock, sleep=clock.sleep)
    socket = Socket()
    socket.clock = clock
    assert wire.can_pause and wire.pause_overrun_ms == 100  # no clear: the lead sent still plays after a pause
    assert wire.input_rate == wire.output_rate == 8000 and wire.frame_ms == 20
    for _ in range(50):  # one second of reply, handed over at once
        for payload in wire.encode(AudioChunk(1, FRAME)):
            await wire.send(socket, 1, payload)
    assert [message for _, message in socket.sent] == [raw(0x10, FRAME)] * 50  # audio only, no marks
    # Real time with a 100 ms lead: frame n leaves when the audio before it is at most 100 ms ahead.
    assert [round(at, 3) for at, _ in socket.sent[:8]] == [0.0] * 6 + [0.02, 0.04]
    assert socket.sent[-1][0] == pytest.approx(0.88)
    assert wire.encode(PlaybackClear(1)) == []  # nothing to send: the connection drops what is queued
    assert wire.encode(PlaybackPause(1, 500)) == []  # likewise: the frames stop, the lead plays out
    assert wire.encode(SessionEnded("bye")) == []
    assert wire.decode(raw(0x00)) == ClientEnded()
    with pytest.raises(ProtocolError):
        wire.decode(raw(0x42))
    assert wire.dropped == {"unknown_type": 1}
