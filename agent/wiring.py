"""Composition: settings → adapters. The only module that imports adapters."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from agent.config import Settings
from agent.errors import ConfigError
from agent.ports import LanguageModel, SpeechDetector, SpeechToText, TextToSpeech
from agent.runtime.components import Components

log = logging.getLogger(__name__)


def build_detector_factory(settings: Settings) -> Callable[[], SpeechDetector]:
    vad = settings.vad
    if vad.backend == "silero":
        from agent.adapters.silero_vad import SileroModel

        model = SileroModel.load()
        return model.detector
    from agent.adapters.webrtc_vad import WebRtcSpeechDetector

    return lambda: WebRtcSpeechDetector(mode=vad.webrtc_mode)


def build_stt(settings: Settings) -> SpeechToText:
    from agent.adapters.faster_whisper_asr import FasterWhisperASR

    asr = FasterWhisperASR.load(settings.asr)
    asr.warm_up()
    return asr


def build_llm(settings: Settings) -> LanguageModel:
    if settings.llm.backend == "local":
        from agent.adapters.local_responder import LocalResponder

        return LocalResponder()
    raise ConfigError(f"unknown llm backend {settings.llm.backend!r}")


def build_tts(settings: Settings) -> TextToSpeech:
    if settings.tts.backend == "piper":
        from agent.adapters.piper_tts import PiperTTS

        tts = PiperTTS.load(settings.tts)
        tts.warm_up()
        return tts
    raise ConfigError(f"unknown tts backend {settings.tts.backend!r}")


def build_components(settings: Settings) -> Components:
    """Load every model once (blocking; call it in a thread). Raises ``ConfigError`` for bad settings."""
    started = time.perf_counter()
    components = Components(
        stt=build_stt(settings),
        llm=build_llm(settings),
        tts=build_tts(settings),
        new_detector=build_detector_factory(settings),
    )
    log.info("components loaded in %.2f s", time.perf_counter() - started)
    return components
