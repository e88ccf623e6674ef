"""A pause is never judged blind, over a real socket with real tiny.en, Smart Turn, Piper and default waits.

On a busy 2-core server the speculative transcript of a pause can come back after the default hangover (420 ms):
a recogniser whose worker sleeps ``DELAY_S`` before each transcription (the real tiny.en after it) makes that
happen every time. A caller who stops to think after "for, um," must still get one turn of the whole sentence,
and hear nothing of a reply during the pause: the turn waits for the words on their way, and they trail off.
The audio is streamed at real-time pace; every wait fails loudly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import pytest

from agent.ports import JobInfo, LanguageHint, SpeechToText, Transcript
from agent.runtime.components import Components
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings
from tests.integration.scripted import scripted_server
from tests.integration.test_end_of_turn import LEAD_MS, _call, _one

pytestmark = pytest.mark.models

DELAY_S = 0.7
"""Longer than the slack of the speculative transcript (420 - 120 ms) on any machine, however fast."""


class SleepingRecogniser:
    """The real recogniser behind a worker thread that sleeps ``delay_s`` first: a slow model, not a stand-in."""

    def __init__(self, inner: SpeechToText, delay_s: float) -> None:
        self._inner = inner
        self._delay_s = delay_s

    @property
    def languages(self) -> tuple[str, ...]:
        return self._inner.languages

    async def transcribe(
        self, pcm16k: bytes, job: JobInfo | None = None, hint: LanguageHint | None = None
    ) -> Transcript:
        await asyncio.to_thread(time.sleep, self._delay_s)
        return await self._inner.transcribe(pcm16k, job, hint)


async def test_a_thinking_pause_is_not_cut_off_when_its_transcript_is_late(components: Components) -> None:
    first, second = "I would like to book a table for, um,", "four people tomorrow night."
    said = silence(LEAD_MS) + speech_pcm16(first) + silence(1000) + speech_pcm16(second)
    slow = dataclasses.replace(components, stt=SleepingRecogniser(components.stt, DELAY_S))
    replies = [["A table for four, tomorrow night."]] * 3  # prepared replies to a guess are discarded unheard
    served = local_settings(turn={"acoustic": "smart-turn"})  # the default waits: 420 ms, 1.5 s at most
    async with scripted_server(slow, replies, served) as (server, emulator):
        call = await _call(server.ws_url, said)
    transcript = _one(call, "transcript")["text"].lower()
    assert "table" in transcript and "people" in transcript, transcript  # one turn, both halves
    assert _one(call, "speech.stopped")["audio_ms"] >= len(said) // 32  # ended after the caller finished
    assert call.audio_before_done == 0  # nothing of the reply was sent during the pause
    assert "people" in json.dumps(emulator.requests[-1].body)  # the reply heard answers the whole sentence
    metrics = _one(call, "turn.metrics")
    assert metrics["endpoint_ms"] is not None and metrics["endpoint_ms"] >= DELAY_S * 1000  # it waited for words
