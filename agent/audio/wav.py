"""Reading audio files of any common format and writing mono PCM16 WAV.

``read_audio`` accepts whatever libsndfile decodes (WAV PCM 8/16/24/32-bit or float, FLAC, OGG Vorbis/Opus,
AIFF...) from a path or from bytes, and always returns float32 mono. Everything here is blocking file or CPU
work on whole clips; call it from a thread when the clip is large.
"""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile as sf

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from agent.errors import AudioFormatError

FloatArray = npt.NDArray[np.float32]


def read_audio(source: str | Path | bytes) -> tuple[FloatArray, int]:
    """Decode a file path or in-memory file to ``(samples, sample_rate)``, float32 mono in [-1, 1].

    Multi-channel audio is down-mixed by averaging the channels. Raises ``AudioFormatError`` when the data
    cannot be decoded, the file does not exist, or it holds no samples.
    """
    what = f"{len(source)} bytes of audio" if isinstance(source, bytes) else f"audio file {str(source)!r}"
    if isinstance(source, bytes):
        if not source:
            raise AudioFormatError("cannot decode audio: the data is empty")
        handle: io.BytesIO | str = io.BytesIO(source)
    else:
        path = Path(source)
        if not path.is_file():
            raise AudioFormatError(f"cannot read {what}: no such file")
        handle = str(path)
    try:
        data, rate = sf.read(handle, dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
        raise AudioFormatError(f"cannot decode {what}: {exc}") from exc
    if data.shape[0] == 0:
        raise AudioFormatError(f"{what} holds no samples")
    mono = data[:, 0] if data.shape[1] == 1 else data.mean(axis=1, dtype=np.float32)
    return np.ascontiguousarray(mono, dtype=np.float32), int(rate)


def load_pcm16(source: str | Path | bytes, rate: int) -> bytes:
    """Read any supported audio (see ``read_audio``), down-mix, resample to ``rate`` and return PCM16LE.

    Raises ``AudioFormatError`` like ``read_audio``, and for a non-positive ``rate``.
    """
    samples, source_rate = read_audio(source)
    return float_to_pcm16(resample(samples, source_rate, rate))


def wav_bytes(pcm16: bytes, rate: int) -> bytes:
    """Wrap mono PCM16LE samples in a WAV (RIFF) container.

    Raises ``AudioFormatError`` for an odd byte count or a non-positive rate.
    """
    if len(pcm16) % 2:
        raise AudioFormatError(f"PCM16 data must have an even number of bytes, got {len(pcm16)}")
    if rate <= 0:
        raise AudioFormatError(f"sample rate must be positive, got {rate}")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm16)
    return out.getvalue()


def write_wav(path: str | Path, pcm16: bytes, rate: int) -> None:
    """Write mono PCM16LE samples to a WAV file at ``path`` (replacing it). Raises like ``wav_bytes``."""
    Path(path).write_bytes(wav_bytes(pcm16, rate))
