"""Yield at once and resume, over real sockets with real tiny.en, Piper and an OpenAI-compatible emulator.

A caller with the ``playback.pause`` capability listens to a reply and makes a short sound over it (a
200 ms burst of voice, like a cough): the reply must stop at once (``playback.pause``), then go on from
exactly where the caller stopped hearing it, byte for byte, and end as an uninterrupted turn. Then the
caller talks over the next reply: pause, then ``playback.clear``, and what was heard is what played before
the pause. The same cough on ``/twilio`` (once the echo gate has learned that the call has no echo):
``clear``, then the reply sent again from the heard position, marked in a new segment.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.runtime.components import Components
from clients.twilio_client import TwilioCaller
from testing.speech import cough, silence, speech_pcm16
from testing.waits import within
from tests.integration.scripted import scripted_server
from tests.integration.test_barge_in import INTERRUPTION, STORY, Caller

pytestmark = pytest.mark.models

REPLY = [
    "A fox lived at the edge of a quiet forest. ",
    "Every morning she walked down to the river to watch the fish jump in the sun. ",
]
SECOND = ["The river was wide and cold, ", "and the fish were quick and silver and hard to see. "]
BYTES_PER_MS = 48  # 24 kHz PCM16


@dataclasses.dataclass
class Player:
    """A client's playout of one turn at real time: what it received where, what it has played."""

    timeline: bytearray = dataclasses.field(default_factory=bytearray)  # first copy of each position
    end_ms: float = 0.0  # buffered up to here
    base_ms: float = 0.0
    base_at: float | None = None
    resent: bytearray = dataclasses.field(default_factory=bytearray)  # audio received after the pause

    def played(self, now: float) -> float:
        if self.base_at is None:
            return 0.0
        return min(self.end_ms, self.base_ms + (now - self.base_at) * 1000.0)

    def receive(self, pcm: bytes, now: float, paused: bool) -> None:
        if self.base_at is None:
            self.base_at = now
        at = round(self.end_ms * BYTES_PER_MS)
        if at + len(pcm) > len(self.timeline):
            self.timeline += pcm[len(self.timeline) - at :]
        if paused:
            self.resent += pcm
        if self.played(now) >= self.end_ms:  # starved: playing resumes from the buffer's end now
            self.base_ms, self.base_at = self.end_ms, now
        self.end_ms += len(pcm) / BYTES_PER_MS

    def pause(self, played_ms: float, now: float) -> None:
        self.base_ms = self.end_ms = played_ms
        self.base_at = now


@dataclasses.dataclass
class Talk:
    messages: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    pause_heard_ms: float = 0.0  # what the client had itself played when the pause arrived
    first: Player = dataclasses.field(default_factory=Player)


async def _converse(ws: ClientConnection, talk: Talk) -> None:
    caller = Caller(ws)
    sender = asyncio.create_task(caller.run())
    messages, player = talk.messages, talk.first
    await caller.queue.put(silence(300) + speech_pcm16("Tell me about the fox."))
    paused = coughed = talked_over = False

    async def listen() -> None:
        nonlocal paused, coughed, talked_over
        while True:
            try:
                message = await asyncio.wait_for(ws.recv(), 0.1)
            except TimeoutError:
                message = None
            now = time.monotonic()
            if isinstance(message, bytes):
                if not talked_over:
                    player.receive(message, now, paused)
            elif message is not None:
                event = json.loads(message)
                messages.append(event)
                if event["type"] == "playback.pause" and event["turn"] == 1:
                    talk.pause_heard_ms = player.played(now)
                    player.pause(event["played_ms"], now)
                    paused = True
                if event["type"] == "turn.metrics" and event["turn"] == 1:
                    await caller.queue.put(speech_pcm16("And then what happened?"))
                    talked_over = True  # from now on the second reply
                if event["type"] == "reply.done" and event["turn"] == 3:
                    return
            if not talked_over and player.base_at is not None:
                played = player.played(now)
                await ws.send(json.dumps({"type": "playback.mark", "turn": 1, "played_ms": round(played)}))
                if played >= 1200 and not coughed:
                    coughed = True
                    await caller.queue.put(cough())
            audio_2 = [m for m in messages if m["type"] == "audio.start" and m["turn"] == 2]
            if audio_2 and caller.queue.empty() and now - audio_2[0].setdefault("_at", now) >= 1.0:
                await caller.queue.put(speech_pcm16(INTERRUPTION))
                audio_2[0]["_at"] = float("inf")

    try:
        await within(listen(), 90, "the reply to the third turn")
    finally:
        caller.stop.set()
        await sender
        await ws.send(json.dumps({"type": "session.end"}))


async def test_a_cough_pauses_the_reply_which_resumes_with_no_word_lost_and_talk_over_still_barges_in(
    components: Components,
) -> None:
    async with scripted_server(components, [REPLY, SECOND, ["It is ", "half past three."]]) as (server, emulator):
        talk = Talk()
        async with connect(server.ws_url) as ws:
            start = {"type": "session.start", "sample_rate": 16000, "capabilities": ["playback.pause"]}
            await ws.send(json.dumps(start))
            await _converse(ws, talk)

    messages = talk.messages
    assert messages[0]["type"] == "session.started" and messages[0]["capabilities"] == ["playback.pause"]
    turn_1 = [m for m in messages if m.get("turn") == 1]
    kinds = [m["type"] for m in turn_1]
    # The cough paused the reply at once, and it was not a barge-in: no clear, no turn of its own.
    pauses = [m for m in turn_1 if m["type"] == "playback.pause"]
    assert len(pauses) == 1, kinds
    heard = [(m["type"], m.get("turn"), m.get("text")) for m in messages if m["type"] in ("transcript",)]
    assert "playback.clear" not in kinds, heard
    metrics = {m["turn"]: m for m in messages if m["type"] == "turn.metrics"}
    assert metrics[1]["interrupted"] is False
    # The server's position is never ahead of what the client had played (nothing skipped) ...
    played_ms = pauses[0]["played_ms"]
    assert 1000 <= played_ms <= talk.pause_heard_ms + 2
    # ... and the resumed audio is the reply from exactly that position, byte for byte.
    player = talk.first
    start = played_ms * BYTES_PER_MS
    overlap = min(len(player.resent), len(player.timeline) - start)
    assert overlap > 0, "nothing was sent again after the pause"
    assert player.resent[:overlap] == player.timeline[start : start + overlap]
    # audio.end again after the resumed audio (and once before the pause too when the whole reply had been sent by
    # then: on a loaded machine its synthesis may still be going when the cough comes)
    paused_at = kinds.index("playback.pause")
    assert kinds[paused_at:].count("audio.end") == 1, kinds
    assert kinds[:paused_at].count("audio.end") <= 1, kinds
    # The model's next request holds the whole first reply: the caller heard all of it.
    second = emulator.requests[1].body["messages"]
    assert [m["content"] for m in second if m["role"] == "assistant"] == ["".join(REPLY).strip()]

    # Talk-over on the second reply: a pause, then the barge-in, cut at the paused position.
    turn_2 = [m for m in messages if m.get("turn") == 2]
    kinds_2 = [m["type"] for m in turn_2]
    said = [
        (m["type"], m.get("turn"), m.get("text")) for m in messages if m["type"] in ("transcript", "speech.started")
    ]
    assert "playback.pause" in kinds_2 and "playback.clear" in kinds_2, (kinds_2, said)
    assert kinds_2.index("playback.pause") < kinds_2.index("playback.clear"), kinds_2
    # ("Wait," alone is too short to take the floor: the reply may resume after it, and pause again at "what".)
    pause_2 = [m for m in turn_2 if m["type"] == "playback.pause"][-1]
    assert metrics[2]["interrupted"] is True and metrics[2]["heard_ms"] == pause_2["played_ms"]
    third = next(r.body["messages"] for r in emulator.requests[2:] if r.body["messages"][-2]["role"] == "assistant")
    heard = third[-2]["content"]
    assert heard.startswith("The river") and heard != "".join(SECOND).strip(), heard


async def test_on_twilio_a_cough_clears_then_the_reply_is_sent_again_from_the_heard_mark(
    components: Components,
) -> None:
    async with scripted_server(components, [STORY]) as (server, _emulator), connect(server.url("twilio")) as ws:
        caller = TwilioCaller(ws)
        await caller.begin()
        caller.say(silence(300, 8000) + speech_pcm16("Tell me about the fox.", 8000))
        got = caller.received
        # 6 s of the reply: by then the echo gate knows this call has no echo (before, a sound over the
        # reply may be the agent's own voice, and it waits for a barge-in's length to yield)
        assert await caller.run_until(lambda: len(got.media_times) >= 300, 60)
        caller.say(cough(8000))
        assert await caller.run_until(lambda: bool(got.clears), 10), "no clear at the sound's onset"
        cleared_at, before = got.clears[0], len(got.audio)

        def resumed() -> list[str]:
            return [n for t, n in got.marks if t > cleared_at and n.endswith(":1")]

        assert await caller.run_until(lambda: len(resumed()) >= 25, 20), "the reply did not resume"
        await caller.hang_up()

    assert len(got.clears) == 1  # the pause; no barge-in
    first_resumed = resumed()[0]
    turn, position, segment = (int(part) for part in first_resumed.split(":"))
    assert (turn, segment) == (1, 1)
    resume_ms = position - 20  # the mark follows the first resumed 20 ms frame
    # The resumed audio (after what was received before the clear) is the reply from the heard position.
    frames_before = [t for t in got.media_times if t <= cleared_at]
    received_before = len(frames_before) * 320
    again = bytes(got.audio[before:])
    start = resume_ms * 16  # PCM16 at 8 kHz
    overlap = min(len(again), received_before - start)
    assert overlap > 0 and again[:overlap] == bytes(got.audio[start : start + overlap])
    assert resume_ms <= received_before / 16
