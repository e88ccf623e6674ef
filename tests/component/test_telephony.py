"""The telephony wire on the event loop with a simulated clock and socket: frames, marks, pacing, clears."""

from __future__ import annotations

import json

import pytest

from agent.core.events import AudioChunk, PlaybackClear, PlaybackMark, PlaybackPause
from agent.runtime.call.outbox import Payload
from agent.wires.phone.telephony import TelephonyWire
from agent.wires.phone.telnyx import codec as telnyx
from agent.wires.phone.twilio import codec as twilio
from agent.wires.phone.twilio.gateway import TwilioGateway
from agent.wires.phone.vonage import codec as vonage
from agent.wires.phone.vonage.gateway import VonageGateway
from tests.unit.test_telephony import Clock, telnyx_wire

FRAME_8K = bytes(320)  # 20 ms of PCM16 at 8 kHz


class Socket:
    """Records what a wire sends."""

    def __init__(self) -> None:
        self.sent: list[str | bytes] = []

    async def send(self, message: str | bytes, /) -> None:
        self.sent.append(message)

    def events(self) -> list[str]:
        return [
            json.loads(m).get("event") or json.loads(m)["action"] if isinstance(m, str) else "binary" for m in self.sent
        ]


async def play(wire: TelephonyWire, socket: Socket, turn: int, frames: int, frame: bytes = FRAME_8K) -> None:
    for payload in wire.encode(AudioChunk(turn, frame)) * frames:
        await wire.send(socket, turn, payload)


def mark_names(socket: Socket) -> list[str]:
    return [json.loads(m)["mark"]["name"] for m in socket.sent if isinstance(m, str) and '"mark"' in m]


async def test_each_frame_is_followed_by_a_mark_and_echoed_marks_become_playback_marks() -> None:
    wire, socket = telnyx_wire(), Socket()
    await play(wire, socket, turn=1, frames=3)
    assert socket.events() == ["media", "mark"] * 3
    assert mark_names(socket) == ["1:20", "1:40", "1:60"]
    assert wire.decode(telnyx.mark("1:40")) == PlaybackMark(1, 40.0)  # Telnyx echoes our mark message
    assert wire.decode(json.dumps({"event": "mark", "mark": {"name": "not-ours"}})) is None


async def test_pacing_holds_frames_to_the_lead() -> None:
    clock = Clock()
    wire, socket = telnyx_wire(clock=clock), Socket()
    await play(wire, socket, turn=1, frames=10)
    assert clock.now - 10.0 == pytest.approx(10 * 0.02 - 0.06 - 0.02)  # real time, minus the 60 ms lead


async def test_barge_in_clears_and_late_marks_of_the_turn_are_dropped() -> None:
    wire, socket = telnyx_wire(), Socket()
    await play(wire, socket, turn=1, frames=2)
    (clear,) = wire.encode(PlaybackClear(1))
    await wire.send(socket, None, clear)
    assert json.loads(socket.sent[-1]) == {"event": "clear"}
    assert wire.decode(telnyx.mark("1:40")) is None  # Telnyx returns the queued marks at a clear


async def test_a_pause_clears_and_the_resumed_audio_marks_a_new_segment() -> None:
    wire, socket = telnyx_wire(), Socket()
    await play(wire, socket, turn=2, frames=3)
    (clear,) = wire.encode(PlaybackPause(2, 40))
    await wire.send(socket, None, clear)
    await play(wire, socket, turn=2, frames=1)  # sent again from the paused position
    assert mark_names(socket)[-1] == "2:60:1"
    assert wire.decode(telnyx.mark("2:60")) is None  # cleared audio of the first segment
    assert wire.decode(telnyx.mark("2:60:1")) == PlaybackMark(2, 60.0)


async def test_vonage_sends_exact_binary_frames_and_notifies() -> None:
    gateway = VonageGateway(vonage.Connected(16000), "call-1")
    socket, clock = Socket(), Clock()
    wire = TelephonyWire(gateway, lead_ms=60, clock=clock, sleep=clock.sleep)
    await play(wire, socket, turn=1, frames=2, frame=bytes(640))
    assert socket.events() == ["binary", "notify"] * 2
    assert all(len(m) == 640 for m in socket.sent if isinstance(m, bytes))
    assert json.loads(socket.sent[1]) == {"action": "notify", "payload": {"mark": "1:20"}}
    assert wire.decode('{"event": "websocket:notify", "payload": {"mark": "1:40"}}') == PlaybackMark(1, 40.0)
    assert wire.decode('{"event": "websocket:cleared"}') is None
    assert wire.decode('{"event": "websocket:dtmf", "digit": "1", "duration": 260}') is None
    (clear,) = wire.encode(PlaybackClear(1))
    assert json.loads(clear) == {"action": "clear"} and wire.can_pause


async def test_twilio_keeps_its_messages() -> None:
    start = twilio.Start("MZ1", "CA1")
    clock = Clock()
    wire, socket = TelephonyWire(TwilioGateway(start), lead_ms=100, clock=clock, sleep=clock.sleep), Socket()
    await play(wire, socket, turn=1, frames=1)
    payload: Payload = socket.sent[1]
    assert json.loads(socket.sent[0])["streamSid"] == "MZ1"
    assert payload == twilio.mark("MZ1", 1, 20.0)
