"""The voice fidelity sampler (agent/runtime/call/fidelity.py): which replies it scores, and the gauge on /metrics.

The scorer here answers on the event loop (no thread): its score is the reply's length in seconds / 10, so each
test knows which reply a score came from. The store holds voices in memory, as a VoiceStore answers.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from agent.errors import AudioFormatError, UnknownVoice
from agent.ports import Voice
from agent.runtime.call.fidelity import FidelitySampler
from agent.runtime.metrics.server import ServerMetrics

RATE = 24000


def reply(seconds: float) -> bytes:
    return bytes(2 * round(seconds * RATE))


class Voices:
    """The part of a VoiceStore the sampler uses: ``get`` (``UnknownVoice`` for a voice not there)."""

    def __init__(self, *names: str) -> None:
        self.wavs = {tuple(n.split("/")): f"wav of {n}".encode() for n in names}
        self.asked: list[tuple[str, str]] = []

    async def get(self, tenant: str, name: str) -> Voice:
        self.asked.append((tenant, name))
        if (tenant, name) not in self.wavs:
            raise UnknownVoice(name)
        return Voice(record=None, wav=self.wavs[(tenant, name)])  # type: ignore[arg-type]


class Scorer:
    def __init__(self) -> None:
        self.calls: list[tuple[bytes, int, int]] = []
        self.gate: asyncio.Event | None = None
        self.error: Exception | None = None

    async def similarity(self, reference_wav: bytes, pcm: bytes, sample_rate: int) -> float:
        self.calls.append((reference_wav, len(pcm), sample_rate))
        if self.gate is not None:
            await self.gate.wait()
        if self.error is not None:
            raise self.error
        return len(pcm) / 2 / sample_rate / 10


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def sampler(scorer: Scorer, voices: Voices, clock: Clock, metrics: ServerMetrics | None = None) -> FidelitySampler:
    publish = metrics.voice_similarity_scored if metrics is not None else None
    return FidelitySampler(scorer, voices, every_s=600, publish=publish, clock=clock)  # type: ignore[arg-type]


async def test_a_scored_reply_is_published_as_the_gauge() -> None:
    metrics, scorer = ServerMetrics(), Scorer()
    fidelity = sampler(scorer, Voices("acme/alice"), Clock(), metrics)
    await fidelity.offer("acme/alice", "de", reply(4.0), RATE)
    await fidelity.wait_idle()
    assert scorer.calls == [(b"wav of acme/alice", 2 * 4 * RATE, RATE)]
    assert fidelity.scores() == {("acme/alice", "de"): pytest.approx(0.4)}
    assert 'voice_agent_voice_similarity{voice="acme/alice",language="de"} 0.4' in metrics.render()
    assert "# TYPE voice_agent_voice_similarity gauge" in metrics.render()


async def test_one_reply_per_voice_and_language_per_interval() -> None:
    clock, scorer = Clock(), Scorer()
    fidelity = sampler(scorer, Voices("default/alice", "default/bob"), clock)
    await fidelity.offer("default/alice", "en", reply(2.0), RATE)
    await fidelity.wait_idle()
    clock.now += 599
    await fidelity.offer("default/alice", "en", reply(3.0), RATE)  # too soon: skipped
    await fidelity.offer("default/alice", "fr", reply(5.0), RATE)  # another language: its own interval
    await fidelity.wait_idle()
    await fidelity.offer("default/bob", "en", reply(6.0), RATE)  # another voice too
    await fidelity.wait_idle()
    clock.now += 1
    await fidelity.offer("default/alice", "en", reply(7.0), RATE)  # the interval is over
    await fidelity.wait_idle()
    assert [n // (2 * RATE) for _, n, _ in scorer.calls] == [2, 5, 6, 7]
    assert fidelity.scores() == {
        ("default/alice", "en"): pytest.approx(0.7),
        ("default/alice", "fr"): pytest.approx(0.5),
        ("default/bob", "en"): pytest.approx(0.6),
    }


async def test_local_voices_short_replies_and_long_replies() -> None:
    scorer, voices = Scorer(), Voices("default/alice")
    fidelity = sampler(scorer, voices, Clock())
    await fidelity.offer("local-preview", "en", reply(5.0), RATE)  # no reference audio: not a cloned voice
    await fidelity.offer("default/alice", "en", reply(0.5), RATE)  # too short to judge
    await fidelity.offer("default/alice", "en", b"", 0)
    assert scorer.calls == [] and voices.asked == []
    await fidelity.offer("default/alice", "en", reply(30.0), RATE)  # still due: the short one did not count
    await fidelity.wait_idle()
    assert scorer.calls[0][1] == 2 * 12 * RATE  # scored on its first 12 s


async def test_one_scoring_at_a_time_and_the_rest_skipped() -> None:
    scorer = Scorer()
    scorer.gate = asyncio.Event()
    fidelity = sampler(scorer, Voices("default/alice", "default/bob"), Clock())
    await fidelity.offer("default/alice", "en", reply(2.0), RATE)
    await asyncio.sleep(0)  # the scoring task reaches the scorer and waits there
    await fidelity.offer("default/bob", "en", reply(3.0), RATE)  # returns at once, and is skipped
    scorer.gate.set()
    await fidelity.wait_idle()
    assert len(scorer.calls) == 1 and list(fidelity.scores()) == [("default/alice", "en")]
    await fidelity.offer("default/bob", "en", reply(3.0), RATE)  # not counted when skipped: scored now
    await fidelity.wait_idle()
    assert ("default/bob", "en") in fidelity.scores()


async def test_failures_are_logged_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "agent.runtime.call.fidelity")
    clock, scorer = Clock(), Scorer()
    fidelity = sampler(scorer, Voices("default/alice"), clock)
    await fidelity.offer("default/gone", "en", reply(2.0), RATE)  # removed voice: UnknownVoice
    await fidelity.wait_idle()
    scorer.error = AudioFormatError("too little speech to compare")
    await fidelity.offer("default/alice", "en", reply(2.0), RATE)
    await fidelity.wait_idle()
    scorer.error = RuntimeError("a bug")
    await fidelity.offer("default/alice", "it", reply(2.0), RATE)
    await fidelity.wait_idle()
    assert fidelity.scores() == {}
    assert "not scored" in caplog.text and "too little speech" in caplog.text and "failed" in caplog.text


async def test_a_failing_publisher_does_not_lose_the_score() -> None:
    def broken(voice: str, language: str, value: float) -> None:
        raise ValueError("labels")

    fidelity = FidelitySampler(Scorer(), Voices("default/alice"), every_s=60, publish=broken, clock=Clock())  # type: ignore[arg-type]
    await fidelity.offer("default/alice", "en", reply(2.0), RATE)
    await fidelity.wait_idle()
    assert fidelity.scores() == {("default/alice", "en"): pytest.approx(0.2)}


async def test_off_and_closed() -> None:
    scorer = Scorer()
    off = FidelitySampler(scorer, Voices("default/alice"), every_s=0, clock=Clock())  # type: ignore[arg-type]
    await off.offer("default/alice", "en", reply(2.0), RATE)
    await off.wait_idle()
    assert scorer.calls == []
    scorer.gate = asyncio.Event()
    fidelity = sampler(scorer, Voices("default/alice"), Clock())
    await fidelity.offer("default/alice", "en", reply(2.0), RATE)
    await asyncio.sleep(0)
    await fidelity.aclose()  # cancels the scoring in progress
    await fidelity.offer("default/alice", "fr", reply(2.0), RATE)
    assert len(scorer.calls) == 1 and fidelity.scores() == {}
