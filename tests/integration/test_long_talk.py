"""A caller who talks on past the longest utterance, over a real socket with real tiny.en, Piper and a scripted model.

The server transcribes at most ``AGENT_VAD__MAX_UTTERANCE_MS`` (3 s here) of speech at once. The caller has not
paused there: they keep the floor. Nothing may start over them (no ``audio.start`` until they have stopped), on a
client that cannot pause (the Realtime wire, /ws without ``playback.pause``), and once they stop they are answered
once, for all they said: one ``transcript`` holding the words of every piece (before, each 3 s was a turn of its own,
answered at once and talked over, or joined to what followed and cut and answered anew every ~320 ms).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect

from agent.runtime.components import Components
from testing.sockets import next_json, stream_speech
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings
from tests.integration.scripted import scripted_server

pytestmark = pytest.mark.models

TALK = (
    "I have been trying to reach somebody about the order that I placed last week for two blue chairs and a small "
    "round table because nothing has arrived at my house yet and the tracking page still says that it is being "
    "prepared at the warehouse"
)
LONGEST_MS = 3000


async def _talk(url: str) -> tuple[list[tuple[bool, dict[str, Any]]], float]:
    """Every JSON message with whether the caller had stopped talking when it came; and how long the talk was."""
    talk = speech_pcm16(TALK)
    seen: list[tuple[bool, dict[str, Any]]] = []
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None}))
        spoken, stop = asyncio.Event(), asyncio.Event()
        sender = asyncio.create_task(stream_speech(ws, silence(300) + talk, stop, spoken=spoken))
        try:
            while not any(done and m["type"] == "audio.start" for done, m in seen):
                message = await next_json(ws, 30)
                seen.append((spoken.is_set(), message))
        finally:
            stop.set()
            await sender
    return seen, len(talk) / 32000


async def test_a_caller_talking_past_the_longest_utterance_is_not_talked_over(components: Components) -> None:
    replies = [["Let me look into that order for you."]] * 12
    settings = local_settings(vad={"max_utterance_ms": LONGEST_MS})
    async with scripted_server(components, replies, settings) as (server, _emulator):
        seen, talk_s = await _talk(server.ws_url)

    kinds = [(done, m["type"], m.get("turn")) for done, m in seen]
    assert talk_s > 3 * LONGEST_MS / 1000, talk_s  # long enough to be transcribed in three pieces at least
    assert not [m for done, m in seen if not done and m["type"] == "audio.start"], kinds  # nothing over the caller
    (transcript,) = [m for _, m in seen if m["type"] == "transcript"]  # one turn
    assert not transcript.get("continues"), transcript
    words = transcript["text"].lower()
    assert "reach" in words and "round table" in words and "warehouse" in words, words  # the first, a middle, the last
