"""Acoustic turn completion: Smart Turn v3.2 (Daily, BSD-2-Clause) on ONNX Runtime, offline.

"Is the caller done?" from the sound of the utterance so far (pitch, rhythm, a drawn-out "um"), not from its
words: a small Whisper-encoder classifier (``smart-turn-v3.2-cpu.onnx``, 8.7 MB, int8) that takes the last
8 s of 16 kHz audio as 80 Whisper log-mel bins x 800 frames and gives the probability that the turn is
complete.

**Where the model comes from.** It ships inside the ``pipecat-ai`` wheel on PyPI
(``pipecat/audio/turn/smart_turn/data/``). The install step (``make``; ``requirements/smart-turn.txt`` pins
the wheel by hash) downloads that wheel with pip, without its dependencies, and ``python -m
agent.adapters.smart_turn install WHEEL`` copies the model and its licence out of it into
``<venv>/share/voice-agent/smart-turn/`` (``default_model_path``). Nothing of pipecat is installed or
imported; nothing is downloaded at run time. The file is checked against ``MODEL_SHA256`` at install and again
each time it is loaded (a file altered since, or another one named by ``AGENT_TURN__ACOUSTIC_MODEL``, is refused).

**Input preparation** follows pipecat's ``LocalSmartTurnAnalyzerV3`` (``local_smart_turn_v3.py`` and its
numpy copy of ``transformers.WhisperFeatureExtractor``): the last 8 s, zero-padded *at the front* when
shorter; the waveform normalised to zero mean and unit variance over the padded 8 s; a centred STFT (n_fft
400, hop 160, periodic Hann, reflect padding), power, 80 Slaney mel bins (the same filterbank as Whisper's,
taken from faster-whisper), log10 with a floor of 1e-10, the last frame dropped, clamped to 8 (log10 units)
below the maximum, then ``(x + 4) / 4``. Input ``input_features`` (1, 80, 800) float32; output ``logits``
(1, 1), already a sigmoid probability. pipecat calls it complete above 0.5. The audio it is given is the
utterance from shortly before its onset up to now, trailing silence included.

Cost: 40-120 ms per call on one thread of a shared, loaded 2-core machine (docs/benchmarks.md, "End of turn:
acoustic turn completion (Smart Turn)"), 17-31 ms of it the features; ``python -m agent.adapters.smart_turn time``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.adapters.onnx_cpu import cpu_session
from agent.audio.pcm import pcm16_to_float
from agent.errors import ConfigError, ProviderError
from agent.model_files import check_file, install_from_wheel
from agent.ports import JobInfo, Work
from agent.work.pooled import PooledCalls
from agent.work.workers import WorkPool

SAMPLE_RATE = 16000
WINDOW_S = 8
WINDOW = WINDOW_S * SAMPLE_RATE
N_FFT = 400
HOP = 160
N_MELS = 80
MODEL_FILE = "smart-turn-v3.2-cpu.onnx"
MODEL_SHA256 = "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f"
"""The model file of pipecat-ai 1.14.0 (the wheel itself is hash-locked in requirements/smart-turn.txt)."""
WHEEL_MEMBER = f"pipecat/audio/turn/smart_turn/data/{MODEL_FILE}"
LICENSE_MEMBER_SUFFIX = ".dist-info/licenses/LICENSE"

FloatArray = npt.NDArray[np.float32]


def default_model_path() -> Path:
    """Where the install step puts the model: ``<sys.prefix>/share/voice-agent/smart-turn/``."""
    return Path(sys.prefix) / "share" / "voice-agent" / "smart-turn" / MODEL_FILE


# --- features -------------------------------------------------------------------------------------------


@cache
def _mel_filters() -> npt.NDArray[np.float64]:
    """(80, 201) Slaney mel filterbank (Whisper's, as faster-whisper builds it)."""
    from faster_whisper.feature_extractor import FeatureExtractor

    filters: npt.NDArray[np.float64] = np.asarray(
        FeatureExtractor.get_mel_filters(SAMPLE_RATE, N_FFT, n_mels=N_MELS), dtype=np.float64
    )
    return filters


@cache
def _window() -> npt.NDArray[np.float64]:
    return np.hanning(N_FFT + 1)[:-1]  # periodic Hann (torch.hann_window)


def fit_window(audio: FloatArray) -> FloatArray:
    """The last ``WINDOW_S`` seconds of ``audio``, zero-padded at the front to exactly that length."""
    if audio.size >= WINDOW:
        return np.ascontiguousarray(audio[-WINDOW:], dtype=np.float32)
    return np.concatenate([np.zeros(WINDOW - audio.size, np.float32), audio.astype(np.float32, copy=False)])


def log_mel(audio: FloatArray) -> FloatArray:
    """Whisper log-mel features (80 x 800) of exactly ``WINDOW`` samples, normalised as the model expects."""
    if audio.shape != (WINDOW,):
        raise ValueError(f"expected {WINDOW} samples, got shape {audio.shape}")
    x = audio.astype(np.float32)
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    padded = np.pad(x.astype(np.float64), (N_FFT // 2, N_FFT // 2), mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * _window(), axis=-1)) ** 2  # (801, 201)
    mel = np.log10(np.maximum(_mel_filters() @ power.T, 1e-10))[:, :-1]  # (80, 800)
    mel = np.maximum(mel, mel.max() - 8.0)
    features: FloatArray = ((mel + 4.0) / 4.0).astype(np.float32)
    return features


# --- the model ------------------------------------------------------------------------------------------


class SmartTurnModel:
    """The ONNX model, blocking: ``probability(audio)`` for float32 audio at 16 kHz (any length). Loading it
    raises ``ConfigError`` when the file is missing, is not the checked one (its sha256, ``MODEL_SHA256``: ~10 ms
    to hash) or does not load."""

    def __init__(self, path: Path | None = None, threads: int = 1) -> None:
        self.path = path if path is not None else default_model_path()
        if not self.path.is_file():
            raise ConfigError(
                f"Smart Turn model {str(self.path)!r} is missing; the install step (make) extracts it from the "
                "pipecat-ai wheel: python -m agent.adapters.smart_turn install WHEEL"
            )
        check_file("Smart Turn model", self.path, MODEL_SHA256, "make smart-turn-model")
        try:
            self._session: Any = cpu_session(self.path, threads)
        except Exception as exc:  # onnxruntime raises its own types for a bad file
            raise ConfigError(f"cannot load Smart Turn model {str(self.path)!r}: {exc}") from exc

    def probability(self, audio: FloatArray) -> float:
        """Probability (0..1) that the turn is complete, given the utterance so far."""
        features = log_mel(fit_window(audio))[None]
        outputs = self._session.run(None, {"input_features": features})
        return float(np.asarray(outputs[0]).reshape(-1)[0])

    def probability_pcm16(self, pcm16k: bytes) -> float:
        return self.probability(pcm16_to_float(pcm16k))


class SmartTurn:
    """Turn completion for the server: ``await complete_probability(pcm16k)`` runs the model on a
    ``WorkPool`` (normally the server's one pool, shared with faster-whisper and Piper), as a droppable
    end-of-turn job (``Work.TURN_SCORE``): under load it is refused (``WorkDropped``) and the words decide.
    Raises ``ProviderError("smart-turn")`` if the model fails, ``ProviderUnavailable`` after ``close()``."""

    MODEL = "smart_turn"

    def __init__(self, model: SmartTurnModel, pool: WorkPool | None = None) -> None:
        self._model = model
        self._calls = PooledCalls("smart-turn", self.MODEL, pool)

    @classmethod
    def load(cls, path: Path | None = None, pool: WorkPool | None = None, threads: int = 1) -> SmartTurn:
        return cls(SmartTurnModel(path, threads), pool)

    def warm_up(self) -> None:
        """One blocking call, so the first real pause does not pay for ONNX Runtime's lazy set-up."""
        self._model.probability(np.zeros(SAMPLE_RATE, np.float32))

    async def complete_probability(self, pcm16k: bytes, job: JobInfo | None = None) -> float:
        audio = pcm16_to_float(pcm16k)
        info = job if job is not None else JobInfo(Work.TURN_SCORE)
        return await self._calls.run(info, WINDOW_S, lambda: self._run(audio))

    def close(self) -> None:
        self._calls.close()

    def _run(self, audio: FloatArray) -> float:
        try:
            return self._model.probability(audio)
        except Exception as exc:
            raise ProviderError("smart-turn", str(exc)) from exc


# --- install step ---------------------------------------------------------------------------------------


def install(wheel: Path, destination: Path | None = None) -> Path:
    """Copy the model (and pipecat's licence, next to it) out of a ``pipecat-ai`` wheel; returns the path."""
    target = destination if destination is not None else default_model_path()
    return install_from_wheel(wheel, WHEEL_MEMBER, MODEL_SHA256, target, LICENSE_MEMBER_SUFFIX, "LICENSE.pipecat")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent.adapters.smart_turn")
    commands = parser.add_subparsers(dest="command", required=True)
    put = commands.add_parser("install", help="extract the model from a pipecat-ai wheel")
    put.add_argument("wheel", type=Path)
    put.add_argument("--to", type=Path, default=None, help=f"model file (default: {default_model_path()})")
    timing = commands.add_parser("time", help="time the model on N calls of 8 s of noise")
    timing.add_argument("-n", type=int, default=50)
    timing.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "install":
        path = install(args.wheel, args.to)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(f"{path} ({path.stat().st_size} bytes, sha256 {digest})")
        return 0
    model = SmartTurnModel(threads=args.threads)
    audio = (0.05 * np.random.default_rng(0).standard_normal(WINDOW)).astype(np.float32)
    model.probability(audio)
    features, total = [], []
    for _ in range(args.n):
        started = time.perf_counter()
        log_mel(fit_window(audio))
        middle = time.perf_counter()
        model.probability(audio)
        features.append(middle - started)
        total.append(time.perf_counter() - middle)
    print(
        f"{args.n} calls, {args.threads} thread(s): per call p50 {1000 * np.percentile(total, 50):.1f} ms, "
        f"p95 {1000 * np.percentile(total, 95):.1f} ms; features alone p50 {1000 * np.percentile(features, 50):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
