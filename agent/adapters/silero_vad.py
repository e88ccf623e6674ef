"""Speech detection with the Silero v6 ONNX model that ships inside the faster-whisper wheel.

That file is a custom export, not upstream Silero's ``state``/``sr`` API: input ``input[N, 576]`` (64 samples
of context from the previous chunk, then 512 new samples at 16 kHz), LSTM state ``h[1,1,128]`` and
``c[1,1,128]``; outputs ``speech_probs[N]``, ``hn``, ``cn``. Streaming one chunk at a time with the carried
context and state gives exactly the numbers of faster-whisper's batch ``get_vad_model()(audio)``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

from agent.audio.pcm import pcm16_to_float
from agent.errors import AudioFormatError, ConfigError, ProviderError

FRAME_SAMPLES = 512  # 32 ms at 16 kHz
CONTEXT_SAMPLES = 64
_STATE_SHAPE = (1, 1, 128)


def bundled_model_path() -> Path:
    """Path of ``silero_vad_v6.onnx`` in the installed faster-whisper package (without importing it)."""
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or spec.origin is None:
        raise ConfigError("faster-whisper is not installed, so the bundled Silero VAD model is missing")
    return Path(spec.origin).parent / "assets" / "silero_vad_v6.onnx"


class SileroModel:
    """The loaded ONNX session, shared by every connection (``InferenceSession.run`` is thread-safe).

    Build with ``SileroModel.load()``; get one ``detector()`` per connection.
    """

    def __init__(self, session: ort.InferenceSession) -> None:
        self._session = session

    @classmethod
    def load(cls, path: str | Path | None = None) -> SileroModel:
        """Load the model (default: the one bundled with faster-whisper) on one CPU thread.

        Raises ``ConfigError`` if the file is missing or is not a loadable ONNX model.
        """
        model = Path(path) if path is not None else bundled_model_path()
        if not model.is_file():
            raise ConfigError(f"Silero VAD model not found at {model}")
        options = ort.SessionOptions()
        # About 0.1 ms per chunk: more threads only add synchronisation cost.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ConfigError(f"cannot load Silero VAD model {model}: {exc}") from exc
        return cls(session)

    def detector(self) -> SileroSpeechDetector:
        """A fresh detector with its own context and LSTM state (one per connection)."""
        return SileroSpeechDetector(self._session)


class SileroSpeechDetector:
    """``SpeechDetector`` over Silero: 32 ms frames (512 samples) of PCM16LE at 16 kHz, probability 0–1.

    Stateful: each frame is scored with the previous frame's last 64 samples and the carried LSTM state.
    Raises ``AudioFormatError`` for a frame that is not 1024 bytes, ``ProviderError("silero")`` if the model
    fails.
    """

    def __init__(self, session: ort.InferenceSession) -> None:
        self._session = session
        self._context: npt.NDArray[np.float32] = np.zeros(CONTEXT_SAMPLES, dtype=np.float32)
        self._h: npt.NDArray[np.float32] = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._c: npt.NDArray[np.float32] = np.zeros(_STATE_SHAPE, dtype=np.float32)

    @property
    def frame_samples(self) -> int:
        """Samples per frame accepted by ``speech_probability`` (512)."""
        return FRAME_SAMPLES

    def speech_probability(self, frame: bytes) -> float:
        """Probability that this 32 ms frame is speech, given the frames before it."""
        if len(frame) != 2 * FRAME_SAMPLES:
            raise AudioFormatError(
                f"Silero VAD takes {2 * FRAME_SAMPLES}-byte frames (32 ms at 16 kHz), got {len(frame)} bytes"
            )
        samples = pcm16_to_float(frame)
        return self.probability(samples)

    def probability(self, samples: npt.NDArray[np.float32]) -> float:
        """Like ``speech_probability`` for 512 float32 samples in [-1, 1)."""
        if samples.shape != (FRAME_SAMPLES,):
            raise AudioFormatError(f"Silero VAD takes {FRAME_SAMPLES} samples, got shape {samples.shape}")
        window = np.concatenate((self._context, samples))[None, :]
        try:
            probs, self._h, self._c = self._session.run(None, {"input": window, "h": self._h, "c": self._c})
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ProviderError("silero", str(exc)) from exc
        self._context = samples[-CONTEXT_SAMPLES:].copy()
        return float(np.asarray(probs).reshape(-1)[0])

    def reset(self) -> None:
        """Start over: zero context and LSTM state."""
        self._context = np.zeros(CONTEXT_SAMPLES, dtype=np.float32)
        self._h = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._c = np.zeros(_STATE_SHAPE, dtype=np.float32)
