"""A phone caller on a speakerphone, over a real socket with real tiny.en, Piper and webrtcvad.

The caller (``EchoingCaller``, a Twilio Media Streams client) plays the reply it receives through a simulated
playout buffer and its microphone picks it up again: the played audio 120 ms later, through a reverberant room,
15 dB down, mixed into the μ-law frames it sends. Without the echo gate the agent hears its own story as the
caller talking (it pauses, clears, and tiny.en makes caller turns of it). With it (the default on ``/twilio``):
no ``clear``, and the model is told of no caller turn but the question. A real talk-over on top of the echo
still interrupts.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from agent.audio import mulaw
from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.runtime.components import Components
from testing.echo_audio import espeak, room_response
from testing.sockets import FrameClock, until
from testing.speech import silence, speech_pcm16, wer
from tests.integration.conftest import local_settings, models_at_rest
from tests.integration.scripted import scripted_server
from tests.integration.test_barge_in import STORY

pytestmark = pytest.mark.models

RATE = 8000
FRAME = 160  # 20 ms
QUESTION = "Please tell me a long story."
TALK_OVER = "Stop. What time is it?"


class EchoingCaller:
    """Sends μ-law media in real time: what it says, plus the echo of what it plays (``level_db``, ``delay_ms``,
    a 300 ms room). Plays received media as Twilio does (queued after what is playing; ``clear`` empties it)."""

    def __init__(self, ws: ClientConnection, level_db: float, delay_ms: float) -> None:
        self.ws = ws
        self.gain = 10 ** (level_db / 20)
        self.delay = int(RATE * delay_ms / 1000)
        self.room = room_response(300.0, RATE)
        self.speaker = np.zeros(RATE * 120, dtype=np.float32)  # what played, sample by sample from the start
        self.played_until = 0  # sample where the queued media ends
        self.clears: list[float] = []
        self.media = 0
        self.sent = 0  # media frames sent: 20 ms of what the agent heard each
        self.marks: list[tuple[int, str]] = []
        self.outgoing: list[np.ndarray] = []
        self.said_at: list[float] = []  # when each utterance began to be sent
        self.start = 0.0
        self.late_s = 0.0  # the most a frame was sent after its time: the caller's own loop stalling

    def now(self) -> int:
        return int((time.monotonic() - self.start) * RATE)

    async def run(self, until: asyncio.Event) -> None:
        sid = "MZ1"
        await self.ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
        start = {"streamSid": sid, "callSid": "CA1", "accountSid": "AC1", "tracks": ["inbound"]}
        await self.ws.send(json.dumps({"event": "start", "streamSid": sid, "start": start}))
        self.start = time.monotonic()
        receiver = asyncio.create_task(self._receive())
        try:
            talk = np.zeros(0, dtype=np.float32)
            async for frame in FrameClock(0.02):
                if until.is_set():
                    break
                if not talk.size and self.outgoing:
                    talk = self.outgoing.pop(0)
                    self.said_at.append(time.monotonic())
                self.late_s = max(self.late_s, time.monotonic() - self.start - frame * FRAME / RATE)
                mic, talk = self._echo(frame * FRAME), talk[FRAME:]
                said = talk[:0] if not talk.size else talk[:FRAME]
                mic[: said.size] += said
                payload = base64.b64encode(mulaw.encode(float_to_pcm16(mic))).decode()
                await self.ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {"payload": payload}}))
                self.sent += 1
                for at, name in [m for m in self.marks if m[0] <= self.now()]:
                    self.marks.remove((at, name))
                    await self.ws.send(json.dumps({"event": "mark", "streamSid": sid, "mark": {"name": name}}))
            with contextlib.suppress(ConnectionClosed):
                await self.ws.send(json.dumps({"event": "stop", "streamSid": sid, "stop": {"callSid": "CA1"}}))
        finally:
            receiver.cancel()
            await asyncio.gather(receiver, return_exceptions=True)

    def account(self) -> str:
        """For a failure: when the clears came, and how far behind its clock the caller itself fell."""
        clears = ", ".join(f"{at - self.start:.2f}" for at in self.clears)
        return f"clears at [{clears}] s into the call; a frame sent up to {1000 * self.late_s:.0f} ms late"

    def say(self, pcm16_8k: bytes) -> None:
        self.outgoing.append(pcm16_to_float(pcm16_8k))

    def _echo(self, at: int) -> np.ndarray:
        """The microphone's echo for the frame starting at sample ``at``: the room applied to what played."""
        lo = at - self.delay - self.room.size
        if at - self.delay <= 0:
            return np.zeros(FRAME, dtype=np.float32)
        played = self.speaker[max(lo, 0) : at - self.delay + FRAME]
        wet = np.convolve(played, self.room)[played.size - FRAME : played.size]
        return (self.gain * wet).astype(np.float32)

    async def _receive(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                message: dict[str, Any] = json.loads(raw)
                event = message.get("event")
                if event == "media":
                    pcm = pcm16_to_float(mulaw.decode(base64.b64decode(message["media"]["payload"])))
                    begin = max(self.now(), self.played_until)
                    self.speaker[begin : begin + pcm.size] = pcm[: max(0, self.speaker.size - begin)]
                    self.played_until = begin + pcm.size
                    self.media += 1
                elif event == "mark":
                    self.marks.append((self.played_until, message["mark"]["name"]))
                elif event == "clear":
                    self.clears.append(time.monotonic())
                    cut = self.now()
                    self.speaker[cut:] = 0.0
                    self.played_until = cut
                    self.marks = [(cut, name) for _, name in self.marks]


Heard = Callable[[list[Any]], bool]
"""Whether what the model was told (its requests' messages so far) shows the call's outcome."""


async def _call(
    components: Components, echo_mode: str, talk_over: bool, heard: Heard | None = None
) -> tuple[EchoingCaller, list[Any]]:
    """The call, until ``heard`` holds over what the model was told; without ``heard`` (nothing expected but the
    question), for 3 s more of the call's audio, and then until no transcription waits or runs: whatever the agent
    heard by then has reached the model (its request follows the transcript)."""
    settings = local_settings(echo={"mode": echo_mode})
    async with (
        scripted_server(components, [STORY] * 4, settings) as (server, emulator),
        connect(server.url("twilio")) as ws,
    ):
        caller = EchoingCaller(ws, level_db=-15, delay_ms=120)
        done = asyncio.Event()
        running = asyncio.create_task(caller.run(done))
        caller.say(silence(300, RATE) + speech_pcm16(QUESTION, RATE))
        await until(lambda: caller.media >= 50 * 4, 60, "4 s of the story")  # sent (3+ played)
        if talk_over:
            voice = espeak(TALK_OVER, rate=RATE)
            caller.say(float_to_pcm16(voice))
            await until(lambda: bool(caller.clears), 10, "a clear after the talk-over")
        else:
            await until(lambda: bool(caller.clears) or caller.media >= 50 * 9, 30, "a clear or 9 s of the story")

        def told() -> list[Any]:
            return [r.body["messages"] for r in emulator.requests]

        if heard is not None:  # what the agent heard reaches the model
            await until(lambda: heard(told()), 30, "the model to be told what the agent heard")
        else:
            more = caller.sent + 50 * 3
            await until(lambda: caller.sent >= more, 60, "3 s more of the call's audio")
            await models_at_rest(components, "asr", wait_s=30)  # no transcription waiting or running
        done.set()
        await running
    return caller, told()


def _caller_turns(requests: list[Any]) -> set[str]:
    """What the model was told the caller said, over every request."""
    return {m["content"] for messages in requests for m in messages if m["role"] == "user"}


def _echo_turns(requests: list[Any]) -> set[str]:
    """The caller's turns that are neither the question nor the talk-over: the agent's own voice, transcribed."""
    return {t for t in _caller_turns(requests) if wer(QUESTION, t) > 0.3 and wer(TALK_OVER, t) > 0.3}


def _told_the_talk_over(requests: list[Any]) -> bool:
    return any(wer(TALK_OVER, t) <= 0.5 for t in _caller_turns(requests))


async def test_the_agent_neither_interrupts_itself_nor_hears_its_own_story(components: Components) -> None:
    caller, requests = await _call(components, "gate", talk_over=False)
    assert caller.media >= 50 * 9, "the story kept playing"
    assert caller.clears == [], caller.account()
    assert _caller_turns(requests), "the question reached the model"
    assert _echo_turns(requests) == set(), requests


async def test_without_the_gate_it_does(components: Components) -> None:
    """The same call with ``AGENT_ECHO__MODE=off``: the scene is one the gate is needed for (measured: two dozen
    clears, and the echo transcribed as caller turns)."""
    caller, requests = await _call(components, "off", talk_over=False, heard=lambda told: bool(_echo_turns(told)))
    assert caller.clears
    assert _echo_turns(requests)


async def test_talking_over_the_echo_still_interrupts(components: Components) -> None:
    caller, requests = await _call(components, "gate", talk_over=True, heard=_told_the_talk_over)
    assert caller.clears, "no clear after the talk-over"
    assert caller.clears[0] > caller.said_at[-1], (
        f"a clear before the talk-over: the echo interrupted; {caller.account()}"
    )
    assert any(wer(TALK_OVER, t) <= 0.5 for t in _caller_turns(requests)), requests
