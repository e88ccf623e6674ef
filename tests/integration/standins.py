"""Instant stand-ins for the models behind the ports, for connection tests that must not wait for real models.

They are test doubles of *components* (what ``agent.wiring`` would build), never of our own code: the server,
the connection, the core and the synthesis pipeline under test are the real ones. Each can be told to fail
the way a broken provider or a bug would (``fail``), and the speech detector calls any loud frame speech,
so a test can speak with a tone. ``hang``: never answer (a provider that hangs).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence

import numpy as np

from agent.errors import UnknownVoice
from agent.languages import LANGUAGES
from agent.ports import URGENT, ChatMessage, JobInfo, ToolCall, ToolSpec, Transcript
from agent.runtime.components import Components
from agent.work.workers import WorkPool

RATE = 16000
VOICE = "tone"


class LoudnessDetector:
    """Speech = a 20 ms frame louder than -30 dBFS."""

    frame_samples = 320

    def speech_probability(self, frame: bytes) -> float:
        samples = np.frombuffer(frame, dtype="<i2").astype(np.float32)
        return 1.0 if samples.size and float(np.sqrt(np.mean(samples**2))) > 1000 else 0.0

    def reset(self) -> None:
        pass


class ScriptedSpeechToText:
    """Answers every utterance with ``text`` at once; ``fail``: raise ``RuntimeError`` (a bug, not a provider error)."""

    languages = LANGUAGES

    def __init__(self, text: str = "Hello there.") -> None:
        self.text = text
        self.fail = False
        self.hang = False
        self.calls = 0
        self.cancelled = 0
        self.gate: asyncio.Event | None = None
        """When set: every transcription waits for the event (a busy recogniser)."""

    async def transcribe(self, pcm16k: bytes, job: object = None, hint: object = None) -> Transcript:
        self.calls += 1
        try:
            if self.hang:
                await asyncio.Event().wait()  # a provider that never answers
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        if self.fail:
            raise RuntimeError("stand-in ASR exploded")
        return Transcript(self.text, "en")


class EchoLanguageModel:
    """Replies "You said: <last user text>"; ``fail``: raise ``RuntimeError`` before any text."""

    def __init__(self) -> None:
        self.fail = False
        self.hang = False

    async def stream_reply(
        self,
        history: Sequence[ChatMessage],
        *,
        language: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: str = "auto",
    ) -> AsyncIterator[str | ToolCall]:
        if self.hang:
            await asyncio.Event().wait()
        if self.fail:
            raise RuntimeError("stand-in LLM exploded")
        said = next((m.text for m in reversed(history) if m.role == "user"), "")
        yield f"You said: {said}"


class ToneSpeech:
    """Speaks any text as ``seconds`` of a quiet 440 Hz tone, in 100 ms chunks, at once; ``fail``: raise
    ``RuntimeError``."""

    def __init__(self, seconds: float = 0.3, sample_rate: int = 24000) -> None:
        self.seconds = seconds
        self.fail = False
        self.hang = False
        self._rate = sample_rate
        t = np.arange(sample_rate // 10) / sample_rate
        self._chunk = (0.1 * 32767 * np.sin(2 * np.pi * 440.0 * t)).astype("<i2").tobytes()

    @property
    def sample_rate(self) -> int:
        return self._rate

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        if name not in (None, VOICE):
            raise UnknownVoice(str(name))
        return f"{tenant}/{VOICE}"

    async def synthesize(
        self, text: str, voice: str, budget: object = None, job: JobInfo | None = None, language: str | None = None
    ) -> AsyncIterator[bytes]:
        if self.hang:
            await asyncio.Event().wait()
        if self.fail:
            raise RuntimeError("stand-in TTS exploded")
        for _ in range(max(1, round(self.seconds * 10))):
            yield self._chunk


class ScriptedReplies:
    """Gives ``replies`` in order, one per reply asked for (a long one for one caller, a short one for the next)."""

    def __init__(self, replies: Sequence[str]) -> None:
        self._replies = list(replies)

    async def stream_reply(
        self,
        history: Sequence[ChatMessage],
        *,
        language: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: str = "auto",
    ) -> AsyncIterator[str | ToolCall]:
        yield self._replies.pop(0) if self._replies else "Nothing more."


class PooledToneSpeech(ToneSpeech):
    """``ToneSpeech`` whose every synthesis first runs as a job on ``pool`` (the server's real worker pool and
    scheduling policy), standing in for Piper's blocking work. ``started`` records the texts in the order their
    jobs started; while ``gate`` is clear every job holds its worker (a busy model), so work queues up."""

    def __init__(self, pool: WorkPool, seconds: float = 0.1) -> None:
        super().__init__(seconds)
        self.pool = pool
        self.started: list[str] = []
        self.gate = threading.Event()
        self.gate.set()

    async def synthesize(
        self, text: str, voice: str, budget: object = None, job: JobInfo | None = None, language: str | None = None
    ) -> AsyncIterator[bytes]:
        def work() -> None:
            self.started.append(text)
            self.gate.wait(60)  # only against a hang

        await asyncio.wrap_future(self.pool.submit("tts", job or URGENT, len(text), work))
        async for chunk in super().synthesize(text, voice, budget, job):
            yield chunk


def standin_components(tts_seconds: float = 0.3) -> Components:
    return Components(
        stt=ScriptedSpeechToText(),
        llm=EchoLanguageModel(),
        tts=ToneSpeech(tts_seconds),
        new_detector=LoudnessDetector,
    )


def tone(ms: int, rate: int = RATE, level: float = 0.5) -> bytes:
    """A loud tone the stand-in detector calls speech."""
    t = np.arange(rate * ms // 1000) / rate
    return (level * 32767 * np.sin(2 * np.pi * 220.0 * t)).astype("<i2").tobytes()


def quiet(ms: int, rate: int = RATE) -> bytes:
    return bytes(rate * ms // 1000 * 2)


def utterance(rate: int = RATE) -> bytes:
    """Half a second of "speech" then enough silence to end the turn."""
    return quiet(200, rate) + tone(500, rate) + quiet(1500, rate)
