"""The adapters a running server uses, built once at start-up by ``agent.wiring``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent.ports import LanguageModel, SpeechDetector, SpeechToText, TextToSpeech


@dataclass(frozen=True, slots=True)
class Components:
    """Shared, loaded models and services. ``new_detector`` makes one stateful detector per connection."""

    stt: SpeechToText
    llm: LanguageModel
    tts: TextToSpeech
    new_detector: Callable[[], SpeechDetector]
