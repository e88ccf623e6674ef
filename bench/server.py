"""The in-process server the benches talk to, and its instant stand-ins: changes only with how a bench starts a server
or fakes its models.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import numpy as np

from agent.audio.pcm import float_to_pcm16
from agent.config import Settings
from agent.errors import UnknownVoice
from agent.front_door.listener import RunningServer, running_server
from agent.languages import LANGUAGES
from agent.ports import Retries, Transcript
from agent.runtime.components import Components

if TYPE_CHECKING:
    from agent.adapters.openai_compat_llm import OpenAICompatLLM

    pass


INSTANT_TRANSCRIPT = "What time do you open tomorrow morning?"

# --- instant stand-ins ----------------------------------------------------------------------------------


class InstantSpeechToText:
    """Answers every utterance at once with the same known transcript."""

    languages = LANGUAGES

    def __init__(self, text: str = INSTANT_TRANSCRIPT) -> None:
        self._text = text

    async def transcribe(self, pcm16k: bytes, job: object = None, hint: object = None) -> Transcript:
        return Transcript(text=self._text, language="en")


class ToneSpeech:
    """Speaks any text as one 100 ms, 440 Hz tone, at once."""

    VOICE = "tone"

    def __init__(self, sample_rate: int = 24000) -> None:
        self._rate = sample_rate
        t = np.arange(sample_rate // 10) / sample_rate
        self._chunk = float_to_pcm16(0.3 * np.sin(2 * np.pi * 440.0 * t))

    @property
    def sample_rate(self) -> int:
        return self._rate

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        if name not in (None, self.VOICE):
            raise UnknownVoice(str(name))
        return self.VOICE

    async def synthesize(
        self, text: str, voice: str, budget: Retries | None = None, job: object = None, language: str | None = None
    ) -> AsyncIterator[bytes]:
        yield self._chunk


def instant_components() -> Components:
    from agent.adapters.local_responder import LocalResponder
    from agent.adapters.webrtc_vad import WebRtcSpeechDetector

    return Components(
        stt=InstantSpeechToText(),
        llm=LocalResponder(),
        tts=ToneSpeech(),
        new_detector=lambda: WebRtcSpeechDetector(mode=3),
    )


def real_loader(settings: Settings) -> Callable[[], Components]:
    from agent.wiring import build_components

    return lambda: build_components(settings)


# --- the server -----------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def serving(settings: Settings, load: Callable[[], Components]) -> AsyncIterator[RunningServer]:
    """``running_server`` on ``settings`` (port 0: any free one), with its components from ``load``, once it is
    ready to take calls."""
    async with running_server(settings, load=load) as server:
        await server.wait_ready()
        yield server


def emulated_llm(base_url: str) -> OpenAICompatLLM:
    """The reply text from the OpenAI-compatible emulator at ``base_url``, through the production adapter (the
    caller closes it: ``await llm.aclose()``)."""
    from agent.adapters.openai_compat_llm import OpenAICompatLLM
    from agent.config import LlmSettings

    return OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=base_url))
