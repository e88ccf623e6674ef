"""Composition: settings → adapters. The only module that imports adapters."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from agent.config import Settings
from agent.errors import ConfigError
from agent.ports import (
    LanguageModel,
    SpeakerScorer,
    SpeechDetector,
    SpeechToText,
    TextCompletion,
    TextToSpeech,
    ToolRunner,
    TurnCompletion,
    VoiceStore,
)
from agent.runtime.call.fidelity import FidelitySampler
from agent.runtime.call.phrases import PhraseBook
from agent.runtime.call.voicing import Fallback
from agent.runtime.components import Components, Scheduled
from agent.security.limiter import Limiter
from agent.traces import Tracing
from agent.voices.enrollment import EnrollmentLimits
from agent.work.resilience import CircuitBreaker
from agent.work.workers import WorkPool, pool_workers

log = logging.getLogger(__name__)


def build_detector_factory(settings: Settings) -> Callable[[], SpeechDetector]:
    vad = settings.vad
    if vad.backend == "silero":
        from agent.adapters.silero_vad import SileroModel

        model = SileroModel.load()
        return model.detector
    from agent.adapters.webrtc_vad import WebRtcSpeechDetector

    return lambda: WebRtcSpeechDetector(mode=vad.webrtc_mode)


def build_confirmer_factory(settings: Settings) -> Callable[[], SpeechDetector] | None:
    """The second detector a pause's voiced frames need (``AGENT_VAD__CONFIRM``): Silero beside webrtcvad; ``None``
    when off, or when Silero is the detector already."""
    vad = settings.vad
    if vad.backend != "webrtc" or vad.confirm == "off":
        return None
    from agent.adapters.silero_vad import SileroModel

    return SileroModel.load().detector


FIRST_GUESS_RATES = {"asr": 0.06, "tts": 0.002, "espeak": 0.0005}
"""Seconds per unit (second of audio to transcribe, character to speak) of tiny.en, the Piper voice and espeak-ng
(the local voice in other languages) on a 2-core machine, until the pool has measured its own."""
FIRST_GUESS_TURN = {"transcript": 2.0 * FIRST_GUESS_RATES["asr"], "first_sentence": 60 * FIRST_GUESS_RATES["tts"]}
"""A turn's first-audio work until measured: a 2 s utterance and a 60-character first sentence."""


def build_work_pool(settings: Settings) -> WorkPool:
    """The one pool of worker threads the local models share, sized so workers x threads <= cores."""
    threads = max(settings.asr.cpu_threads, settings.tts.cpu_threads)
    workers = pool_workers(settings.server.model_workers, threads)
    log.info("local models: %d worker(s) x %d thread(s)", workers, threads)
    return WorkPool(workers, FIRST_GUESS_RATES, turn_parts=FIRST_GUESS_TURN)


def build_stt(settings: Settings, pool: WorkPool | None = None) -> SpeechToText:
    from agent.adapters.faster_whisper_asr import FasterWhisperASR

    asr = FasterWhisperASR.load(settings.asr, pool)
    asr.warm_up()
    return asr


def build_turn_model(settings: Settings, pool: WorkPool | None = None) -> TurnCompletion | None:
    """The acoustic turn-completion model (``AGENT_TURN__ACOUSTIC``), on the shared model workers; ``None`` when
    off. A missing model file is a ``ConfigError`` naming the install step."""
    if settings.turn.acoustic == "off":
        return None
    from agent.adapters.smart_turn import SmartTurn

    path = Path(settings.turn.acoustic_model).expanduser() if settings.turn.acoustic_model else None
    model = SmartTurn.load(path, pool)
    model.warm_up()
    return model


def build_text_model(settings: Settings, pool: WorkPool | None = None) -> TextCompletion | None:
    """The text end-of-turn model (``AGENT_TURN__TEXT_MODEL``), on the shared model workers; ``None`` when off. A
    missing model is a ``ConfigError`` naming the install step."""
    if settings.turn.text_model == "off":
        return None
    from agent.adapters.smollm2_text_turn import SmolLM2TextTurn

    path = Path(settings.turn.text_model_dir).expanduser() if settings.turn.text_model_dir else None
    model = SmolLM2TextTurn.load(path, pool)
    model.warm_up()
    return model


def build_llm(settings: Settings) -> LanguageModel:
    if settings.llm.backend == "local":
        from agent.adapters.local_responder import LocalResponder

        return LocalResponder()
    if settings.llm.backend == "bedrock":
        from agent.adapters.bedrock_llm import BedrockLLM

        return BedrockLLM(settings.llm)
    if settings.llm.backend == "openai":
        from agent.adapters.openai_compat_llm import OpenAICompatLLM

        return OpenAICompatLLM(settings.llm)
    raise ConfigError(f"unknown llm backend {settings.llm.backend!r}")


def build_tts(settings: Settings, voices: VoiceStore | None = None, pool: WorkPool | None = None) -> TextToSpeech:
    """The voice backend. Cloned-voice backends read voices from ``voices`` (default: ``build_voice_store``);
    Piper runs on ``pool`` (default: a private one)."""
    if settings.tts.backend == "piper":
        from agent.adapters.piper_tts import PiperTTS

        tts = PiperTTS.load(settings.tts, pool)
        tts.warm_up()
        return tts
    if settings.tts.backend == "sagemaker":
        from agent.adapters.sagemaker_tts import SageMakerTTS

        return SageMakerTTS(settings.tts, voices if voices is not None else build_voice_store(settings))
    if settings.tts.backend == "vllm-omni":
        from agent.adapters.vllm_omni_tts import VllmOmniTTS

        return VllmOmniTTS(settings.tts, voices if voices is not None else build_voice_store(settings))
    raise ConfigError(f"unknown tts backend {settings.tts.backend!r}")


def build_fallback(settings: Settings, pool: WorkPool | None = None) -> Fallback | None:
    """The local Piper voice to apologise in when a remote voice fails; ``None`` when Piper is the voice."""
    if settings.tts.backend == "piper":
        return None
    from agent.adapters.piper_tts import LOCAL_VOICE, PiperTTS

    local = PiperTTS.load(settings.tts.model_copy(update={"max_concurrency": 1}), pool)
    local.warm_up()
    return Fallback(local, LOCAL_VOICE)


def speech_queues(tts: TextToSpeech) -> tuple[Scheduled, ...]:
    """The slots of a voice backend's remote endpoint, scheduled by deadline (none for the local voice)."""
    from agent.adapters.clone_tts import CloneTTS

    return (tts.slots,) if isinstance(tts, CloneTTS) else ()


def speech_breakers(tts: TextToSpeech) -> tuple[CircuitBreaker, ...]:
    """The circuit breakers of a voice backend's remote endpoints (none for the local voice)."""
    from agent.adapters.clone_tts import CloneTTS

    return (tts.breaker,) if isinstance(tts, CloneTTS) else ()


def build_voice_store(settings: Settings) -> VoiceStore:
    """The store of enrolled voices named by ``settings.voices`` (touches no disk or network yet)."""
    voices = settings.voices
    if voices.backend == "file":
        from agent.adapters.file_voice_store import FileVoiceStore

        return FileVoiceStore(voices.dir)
    if voices.backend == "s3":
        from agent.adapters.s3_voice_store import S3VoiceStore

        if not voices.s3_bucket:
            raise ConfigError("voices.s3_bucket is required for the s3 voice store")
        return S3VoiceStore(voices.s3_bucket, voices.s3_prefix, voices.s3_region, voices.s3_endpoint_url)
    raise ConfigError(f"unknown voice store backend {voices.backend!r}")


def build_limiter(settings: Settings) -> Limiter:
    """Where the per-tenant and per-address limits are counted: in this process, or in the Redis every replica
    shares (``AGENT_LIMITS__REDIS_URL``). Enter it (``async with``) for the server's life: leaving closes Redis."""
    limits = settings.limits
    if limits.redis_url is None:
        return Limiter(prefix=limits.key_prefix)
    from agent.adapters.redis_limits import RedisLimits

    redis = RedisLimits(limits.redis_url.get_secret_value(), limits.check_timeout_ms / 1000)
    return Limiter(redis, prefix=limits.key_prefix, shared=True, close=redis.close, warm=redis.warm)


def build_enrollment_limits(settings: Settings, limiter: Limiter | None = None) -> EnrollmentLimits:
    """The per-tenant voice quota and enrollment rate, shared by every connection of the server (and, with
    ``limiter`` shared, by every replica)."""
    voices = settings.voices
    return EnrollmentLimits(voices.max_voices_per_tenant, voices.enroll_burst, voices.enroll_per_hour, limiter)


def build_speaker_scorer(settings: Settings) -> SpeakerScorer:
    """The speaker-similarity model (resemblyzer's weights in numpy); ``ConfigError`` when not installed."""
    from agent.adapters.resemblyzer_similarity import ResemblyzerSimilarity

    model = settings.fidelity.model
    return ResemblyzerSimilarity.load(Path(model).expanduser() if model else None)


def build_fidelity(settings: Settings, voices: VoiceStore) -> FidelitySampler | None:
    """The voice fidelity sampler (``AGENT_FIDELITY__*``); ``None`` when off, or the speaker model is not
    installed (logged: the server runs without the gauge)."""
    fidelity = settings.fidelity
    if fidelity.sample_every_min <= 0:
        return None
    from agent.adapters.resemblyzer_similarity import default_model_path

    path = Path(fidelity.model).expanduser() if fidelity.model else default_model_path()
    if not path.is_file():
        log.info("voice fidelity off: no speaker model at %s (make speaker-model)", path)
        return None
    return FidelitySampler(build_speaker_scorer(settings), voices, every_s=60 * fidelity.sample_every_min)


def build_tools(settings: Settings) -> ToolRunner | None:
    """The server's own tools (``AGENT_TOOLS__*``: the built-in clock, a tools file's HTTP and MCP tools per
    tenant); ``None`` when there are none. Raises ``ConfigError`` for a bad tools file."""
    from agent.adapters.tool_box import build_tool_runner

    tools = settings.tools
    if not tools.clock and not tools.file:
        return None
    return build_tool_runner(tools)


def build_tracing(settings: Settings) -> Tracing | None:
    """The OpenTelemetry exporter of call traces, or ``None`` (off: nothing of the SDK is loaded) unless the
    standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set and ``OTEL_SDK_DISABLED`` is not true (``agent.config.tracing``)."""
    if settings.tracing.disabled or not settings.tracing.configured:
        return None
    from agent.adapters.otel_traces import OtelTracing

    return OtelTracing(settings.tracing)


def build_components(settings: Settings, limiter: Limiter | None = None) -> Components:
    """Load every model once (blocking; call it in a thread). Raises ``ConfigError`` for bad settings. ``limiter``:
    the server's (``build_limiter``); ``None`` counts enrollments in this process."""
    started = time.perf_counter()
    voices = build_voice_store(settings)
    pool = build_work_pool(settings)
    tts = build_tts(settings, voices, pool)
    components = Components(
        stt=build_stt(settings, pool),
        llm=build_llm(settings),
        tts=tts,
        new_detector=build_detector_factory(settings),
        new_confirmer=build_confirmer_factory(settings),
        voices=voices,
        enrollment_limits=build_enrollment_limits(settings, limiter),
        fallback=build_fallback(settings, pool),
        breakers=speech_breakers(tts),
        phrases=PhraseBook(voices),
        work=pool,
        queues=speech_queues(tts),
        turn_model=build_turn_model(settings, pool),
        text_model=build_text_model(settings, pool),
        fidelity=build_fidelity(settings, voices),
        tools=build_tools(settings),
        tracing=build_tracing(settings),
    )
    log.info("components loaded in %.2f s", time.perf_counter() - started)
    return components
