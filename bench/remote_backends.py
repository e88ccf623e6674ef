"""Remote-like backends for ``bench/latency.py --mode remote``: the project's emulators on loopback.

``remote_backends(latency)`` starts, for the length of one run:

- the OpenAI-compatible emulator (``testing.emulators.openai``): its reply echoes the caller's last words in
  three short sentences, one chunk per word or punctuation mark, the first after ``llm_first_token_ms`` and
  then ``llm_tokens_per_s``;
- the SageMaker runtime emulator (``testing.emulators.sagemaker``): streamed audio, the first after
  ``tts_first_audio_ms``, then made at real-time factor ``tts_rtf``, in a synthetic voice (``BuzzVoice``) that
  costs no model time here (a remote model's work is not done on the server's cores);
- a temporary file voice store holding one enrolled voice (``VOICE``), made with the emulator's helper.

It yields the settings that point the production wiring (``agent.wiring.build_components``: the
``openai_compat_llm`` and ``sagemaker_tts`` adapters) at them: ``Settings(**overrides)``. Dummy AWS credentials
are set in the environment meanwhile (the emulator ignores signatures), and restored afterwards.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.adapters.file_voice_store import FileVoiceStore
from agent.audio.pcm import float_to_pcm16
from agent.ports import Retries
from testing.emulators.openai import OpenAIEmulator
from testing.emulators.sagemaker import SageMakerEmulator, make_voice

VOICE = "bench"
REFERENCE_TEXT = "The quick brown fox jumps over the lazy dog."
LLM_MODEL = "emulated-llm"
ECHO_WORDS = 8
"""At most this many of the caller's words are echoed in the reply's first sentence."""


@dataclass(frozen=True, slots=True)
class RemoteLatency:
    """How slow the emulated services are (defaults: a hosted LLM and a GPU TTS endpoint in the same region)."""

    llm_first_token_ms: float = 350.0
    llm_tokens_per_s: float = 40.0
    tts_first_audio_ms: float = 250.0
    tts_rtf: float = 0.3

    def describe(self) -> str:
        return (
            f"LLM first token {self.llm_first_token_ms:.0f} ms then {self.llm_tokens_per_s:g} tokens/s; "
            f"TTS first audio {self.tts_first_audio_ms:.0f} ms then real-time factor {self.tts_rtf:g}"
        )


# --- the language model's replies ----------------------------------------------------------------------


def reply_text(heard: str) -> str:
    """A plausible three-sentence answer that repeats the first words of what was heard."""
    words = re.findall(r"[\w']+", heard.lower())[:ECHO_WORDS]
    echo = " ".join(words) if words else "nothing at all"
    return f"I heard: {echo}. Let me check that for you right away. It should only take a moment."


def tokens(text: str) -> list[str]:
    """``text`` cut like a model's stream: each word with its leading space, punctuation on its own."""
    return re.findall(r"\s*[\w']+|\s*[^\w\s]+", text)


def reply_tokens(body: dict[str, Any]) -> Sequence[str]:
    """The emulator's reply to a chat-completions body: answers its last user message."""
    users = [m["content"] for m in body["messages"] if m.get("role") == "user"]
    return tokens(reply_text(users[-1] if users else ""))


# --- the endpoint's voice ------------------------------------------------------------------------------


class BuzzVoice:
    """A ``TextToSpeech`` for the emulator: per word a voiced buzz as long as speech would be, then a gap.

    About 15 characters a second, like normal speech, so replies last as long as spoken ones would. Made in
    microseconds: the emulator's pacing alone decides when audio arrives.
    """

    RATE = 24000
    CHAR_S = 0.065

    @property
    def sample_rate(self) -> int:
        return self.RATE

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        return name or "buzz"

    async def synthesize(
        self, text: str, voice: str, budget: Retries | None = None, job: object = None, language: str | None = None
    ) -> AsyncIterator[bytes]:
        yield self.pcm(text)

    def pcm(self, text: str) -> bytes:
        gap = np.zeros(int(self.RATE * self.CHAR_S), dtype=np.float32)
        pieces: list[np.ndarray] = []
        for i, word in enumerate(text.split()):
            n = int(self.RATE * self.CHAR_S * len(word))
            t = np.arange(n, dtype=np.float32) / self.RATE
            f0 = 110.0 + 15.0 * (i % 3)
            buzz = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 5))
            envelope = np.sin(np.pi * np.arange(n, dtype=np.float32) / max(n, 1))
            pieces += [(0.3 * buzz * envelope).astype(np.float32), gap]
        return float_to_pcm16(np.concatenate(pieces)) if pieces else b""


# --- starting it all -----------------------------------------------------------------------------------

DUMMY_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}


@contextlib.contextmanager
def dummy_aws_env() -> Iterator[None]:
    """Dummy credentials and no AWS config files or instance metadata, as the SageMaker tests use."""
    saved = {name: os.environ.get(name) for name in [*DUMMY_AWS_ENV, "AWS_PROFILE"]}
    os.environ.update(DUMMY_AWS_ENV)
    os.environ.pop("AWS_PROFILE", None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.asynccontextmanager
async def remote_backends(latency: RemoteLatency) -> AsyncIterator[dict[str, Any]]:
    """Run both emulators and a voice store with one enrolled voice; yield the settings that use them."""
    with tempfile.TemporaryDirectory(prefix="bench-voices-") as tmp, dummy_aws_env():
        async with (
            OpenAIEmulator(
                reply=reply_tokens,
                first_token_delay_s=latency.llm_first_token_ms / 1000,
                token_delay_s=1 / latency.llm_tokens_per_s,
            ) as llm,
            SageMakerEmulator(BuzzVoice(), ttfa_ms=latency.tts_first_audio_ms, rtf=latency.tts_rtf) as tts,
        ):
            store = Path(tmp) / "voices"
            await FileVoiceStore(store).add(await make_voice(tts, VOICE, REFERENCE_TEXT))
            yield {
                "llm": {"backend": "openai", "model": LLM_MODEL, "base_url": llm.base_url},
                "tts": {"backend": "sagemaker", "endpoint_url": tts.url, "default_voice": VOICE},
                "voices": {"backend": "file", "dir": store},
            }
