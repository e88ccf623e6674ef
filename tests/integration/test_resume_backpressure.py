"""A reply resumed after a cough goes through the same backpressure as synthesis, over a real socket with real
tiny.en and Piper: a client that reads every message and plays the reply in real time is never closed as "not
reading", however much of the reply was kept while it was paused: all of it waits for room in the outbox.

The issue this guards: resuming emitted all the audio kept since the pause at once, past the outbox's bound for
clients that really stop reading, and the server closed a listening caller ``1008 client is not reading``.
Here the bound is made small (64 kB beyond the 2 s audio buffer) so that a 21 s story shows it.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect

from agent.runtime.components import Components
from testing.listener import ListeningCaller
from testing.sockets import next_json, until
from testing.speech import cough, silence, speech_pcm16
from tests.integration.conftest import local_settings
from tests.integration.scripted import scripted_server
from tests.integration.test_barge_in import STORY

pytestmark = pytest.mark.models


async def test_a_cough_over_a_long_reply_resumes_it_to_the_end_without_closing_a_client_that_reads(
    components: Components,
) -> None:
    settings = local_settings(server={"max_outbox_bytes": 65536})
    async with scripted_server(components, [STORY], settings) as (server, _emulator), connect(server.ws_url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "capabilities": ["playback.pause"]}))
        started = await next_json(ws)
        assert started["type"] == "session.started", started
        listener = ListeningCaller(ws, started["output_sample_rate"])
        running = asyncio.create_task(listener.run())
        got = listener.got
        listener.say(silence(300) + speech_pcm16("Please tell me a long story."))
        await until(lambda: running.done() or (listener.turn == 1 and listener.played_ms() >= 2000), 60, "2 s")
        # (the story's first sentence, prepared before the end of turn and released at it, is 4 s: it meets the same
        # bound, and goes through the same backpressure)
        assert got.closed is None, f"closed {got.closed} before the cough"
        listener.say(cough())
        await until(lambda: bool(got.pauses) or running.done(), 10, "a pause at the cough")
        # the rest of the story (19 s, all kept while paused: far past the bound) goes on being heard, or the call
        # is closed at the resume (heard to its end in tests/integration/test_promises_together.py)
        resumed = 6000 * 48
        await until(lambda: running.done() or got.pauses[0].resent_bytes >= resumed, 30, "6 s of the rest")
        listener.stop()
        await running

    assert got.closed is None, f"closed {got.closed}"
    assert not got.of("error"), got.of("error")
    pause = got.pauses[0]
    assert pause.played_ms <= pause.heard_ms + 2  # nothing skipped
    assert pause.exact and pause.resent_bytes >= resumed  # the rest of it, byte for byte, from there
    assert len(got.pauses) == 1 and not got.of("playback.clear") and not got.of("turn.metrics")
