"""The adapters a running server uses, built once at start-up by ``agent.wiring``."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass

from agent.ports import LanguageModel, SpeechDetector, SpeechToText, TextToSpeech, VoiceStore
from agent.runtime.speech import Fallback


@dataclass(frozen=True, slots=True)
class Components:
    """Shared, loaded models and services. ``new_detector`` makes one stateful detector per connection."""

    stt: SpeechToText
    llm: LanguageModel
    tts: TextToSpeech
    new_detector: Callable[[], SpeechDetector]
    fallback: Fallback | None = None
    """Speaks a short apology when ``tts`` fails (the local voice when ``tts`` is a remote one)."""
    voices: VoiceStore | None = None
    """Enrolled voices (enrollment over /ws, ``voices.list``); ``None`` = enrollment is not offered."""

    async def aclose(self) -> None:
        """Release what the adapters hold (HTTP pools, thread pools) at shutdown; errors are logged."""
        parts: list[object] = [self.llm, self.tts, self.stt, self.voices]
        if self.fallback is not None:
            parts.append(self.fallback.tts)
        for part in parts:
            close = getattr(part, "aclose", None) or getattr(part, "close", None)
            if close is None:
                continue
            with contextlib.suppress(Exception):
                result = close()
                if inspect.isawaitable(result):
                    await result
