"""Model work by deadline over real sockets: caller A's long reply does not hold up caller B's first sentence.

The voice is a stand-in whose synthesis runs on the server's real ``WorkPool`` (one worker, the real scheduling
policy) and records the order its jobs start; a gate holds the worker busy so work queues up. Nothing is timed:
the test waits for the queue to hold what it expects, opens the gate, and checks the order the jobs ran in.
"""

from __future__ import annotations

import json

from websockets.asyncio.client import ClientConnection, connect

from agent.front_door.listener import running_server
from agent.runtime.components import Components
from agent.work.workers import WorkPool
from testing.sockets import read_until
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.standins import (
    LoudnessDetector,
    PooledToneSpeech,
    ScriptedReplies,
    ScriptedSpeechToText,
    utterance,
)

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})
FILLER = " and then it went on for a long while over the hills" * 4  # < 250 characters: one sentence
A_SENTENCES = [f"Alpha {n} began{FILLER}." for n in range(6)]
B_SENTENCE = "Bravo here."


async def say(ws: ClientConnection, pcm: bytes) -> None:
    for i in range(0, len(pcm), 3200):
        await ws.send(pcm[i : i + 3200])


async def queued(pool: WorkPool, jobs: int) -> None:
    """Wait until ``jobs`` synthesis jobs wait for the busy worker."""

    def waiting() -> bool:
        stats = pool.stats().models.get("tts")
        return stats is not None and stats.queued == jobs

    await until(waiting, what=lambda: f"{jobs} synthesis jobs queued: {pool.stats().models.get('tts')}")


async def test_a_long_reply_does_not_delay_another_callers_first_sentence() -> None:
    pool = WorkPool(1)
    tts = PooledToneSpeech(pool, seconds=0.1)
    components = Components(
        stt=ScriptedSpeechToText(),
        llm=ScriptedReplies([" ".join(A_SENTENCES), B_SENTENCE]),
        tts=tts,
        new_detector=LoudnessDetector,
        work=pool,
    )
    settings = local_settings(turn={"hold_after_ms": 0}, tts={"pipeline_depth": 4, "warm_phrases": False})
    tts.gate.clear()
    try:
        async with running_server(settings, lambda: components) as server:
            await server.wait_ready()
            async with connect(server.ws_url) as a, connect(server.ws_url) as b:
                for ws in (a, b):
                    await ws.send(START)
                    await read_until(ws, "session.started")
                await say(a, utterance())
                await read_until(a, "reply.done")
                await queued(pool, 3)  # A's first sentence holds the worker; three later ones wait
                await say(b, utterance())
                await read_until(b, "speech.stopped")  # B's end of turn
                await queued(pool, 4)  # B's first sentence waits too
                tts.gate.set()
                await read_until(a, "turn.metrics")
                await read_until(b, "turn.metrics")
    finally:
        tts.gate.set()
        pool.close()
    # B's first sentence ran as soon as the worker was free: no later sentence of A's went before it
    # (first come, first served would have run A's three queued sentences first).
    assert tts.started == [A_SENTENCES[0], B_SENTENCE, *A_SENTENCES[1:]]
