"""Reference audio for voice cloning: decode any common upload, normalise it, and check it is usable.

``prepare_reference(data)`` takes the raw bytes of an upload (WAV, FLAC, OGG Vorbis/Opus, MP3, M4A/AAC or
raw ADTS AAC; the format is decided by the magic bytes, never by a file name or a declared type), and
returns a ``ReferenceAudio``: 24 kHz mono PCM16 WAV with leading/trailing silence trimmed and speech
loudness normalised, plus any warnings. It raises ``RejectedAudio`` (an ``AudioFormatError``) whose
``code`` is the wire error code (``too_large``, ``bad_audio``, ``too_short``, ``too_long``, ``silent``,
``clipped``) and whose message says what to do about it.

Why these limits: Qwen3-TTS clones from "a few seconds"; vLLM-Omni bounds uploads to 1–30 s and the model
card advises roughly 3–20 s, so 1–3 s and 20–30 s are accepted with a warning and the rest is refused.

Loudness is normalised on the RMS of the active (non-silent) 10 ms frames to ``TARGET_DBFS`` with a peak
ceiling of ``PEAK_CEILING``: a simple, dependency-free stand-in for LUFS that is close for clean speech.

Allocation is bounded: uploads over ``MAX_UPLOAD_BYTES`` are refused before decoding, and decoding stops
after ``MAX_DECODE_S`` seconds of audio whatever the headers claim. Everything here is blocking CPU work
(tens of milliseconds for a 20 s clip); call it in a worker thread.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import soundfile as sf

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from agent.audio.wav import wav_bytes
from agent.errors import RejectedAudio

FloatArray = npt.NDArray[np.float32]

REFERENCE_RATE = 24000
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MIN_S, IDEAL_MIN_S, IDEAL_MAX_S, MAX_S = 1.0, 3.0, 20.0, 30.0
MAX_DECODE_S = 120.0
MIN_SOURCE_RATE, MAX_SOURCE_RATE = 4000, 384000  # sample rates of uploads we decode
MAX_CHANNELS = 64
TARGET_DBFS = -20.0
PEAK_CEILING = 0.89  # -1 dBFS
SILENT_DBFS = -50.0  # loudest 10 ms frame below this: nothing to clone
TRIM_BELOW_PEAK_DB = 40.0  # frames this far below the loudest frame count as silence when trimming
TRIM_FLOOR_DBFS = -55.0
TRIM_PAD_S = 0.15
CLIP_LEVEL = 0.999
CLIP_REJECT_FRACTION = 0.01
CLIP_WARN_FRACTION = 0.001
_FRAME_S = 0.01

FORMATS = "WAV, FLAC, OGG (Vorbis/Opus), MP3 or M4A/AAC"


@dataclass(frozen=True, slots=True)
class ReferenceAudio:
    """Normalised reference audio. ``pcm`` is PCM16LE mono at 24 kHz; ``wav`` is the same in a WAV file."""

    wav: bytes
    pcm: bytes
    duration_s: float
    source_format: str
    source_rate: int
    source_duration_s: float
    warnings: tuple[str, ...]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.wav).hexdigest()


def sniff_format(data: bytes) -> str | None:
    """The container/codec named by the first bytes: wav, flac, ogg, mp3, mp4 or aac; ``None`` if unknown."""
    head = data[:16]
    if len(head) >= 12 and head[:4] in (b"RIFF", b"RIFX", b"RF64") and head[8:12] == b"WAVE":
        return "wav"
    if head[:4] == b"fLaC":
        return "flac"
    if head[:4] == b"OggS":
        return "ogg"
    if len(head) >= 8 and head[4:8] == b"ftyp":
        return "mp4"
    if head[:3] == b"ID3":
        return "mp3"
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        # MPEG sync word: layer bits 00 are ADTS (AAC), anything else an MPEG audio layer.
        return "aac" if (head[1] >> 1) & 0b11 == 0 else "mp3"
    return None


def decode(data: bytes) -> tuple[FloatArray, int, str]:
    """Decode an upload to ``(float32 mono samples, rate, format)``; at most ``MAX_DECODE_S`` seconds.

    Raises ``RejectedAudio("too_large" | "bad_audio" | "too_long")``.
    """
    if len(data) > MAX_UPLOAD_BYTES:
        raise RejectedAudio(
            "too_large", f"the audio file is {len(data):,} bytes; the limit is {MAX_UPLOAD_BYTES:,} bytes"
        )
    kind = sniff_format(data)
    if kind is None:
        raise RejectedAudio("bad_audio", f"this is not a recognised audio file; send {FORMATS}")
    try:
        if kind in ("wav", "flac", "ogg"):
            samples, rate = _decode_soundfile(data)
        else:
            samples, rate = _decode_av(data)
    except RejectedAudio:
        raise
    except Exception as exc:  # libsndfile and FFmpeg raise many types for damaged files
        raise RejectedAudio("bad_audio", f"cannot decode the {kind.upper()} audio: {_short(exc)}") from exc
    if samples.size == 0 or rate <= 0:
        raise RejectedAudio("bad_audio", f"the {kind.upper()} file holds no audio")
    return samples, rate, kind


def _too_long(rate: int, frames: int) -> RejectedAudio:
    return RejectedAudio(
        "too_long", f"the recording is {frames / rate:.0f} s or longer; the limit is {MAX_S:.0f} s of speech"
    )


def _check_layout(rate: int, channels: int) -> None:
    if not MIN_SOURCE_RATE <= rate <= MAX_SOURCE_RATE or not 0 < channels <= MAX_CHANNELS:
        raise RejectedAudio(
            "bad_audio",
            f"the file declares {channels} channels at {rate} Hz; send {MIN_SOURCE_RATE}–{MAX_SOURCE_RATE} Hz audio "
            f"with at most {MAX_CHANNELS} channels",
        )


def _decode_soundfile(data: bytes) -> tuple[FloatArray, int]:
    with sf.SoundFile(io.BytesIO(data)) as f:
        rate, channels = int(f.samplerate), int(f.channels)
        _check_layout(rate, channels)
        limit = int(MAX_DECODE_S * rate)
        block = f.read(frames=limit + 1, dtype="float32", always_2d=True)
    if block.shape[0] > limit:
        raise _too_long(rate, block.shape[0])
    mono = block[:, 0] if block.shape[1] == 1 else block.mean(axis=1, dtype=np.float32)
    return np.ascontiguousarray(mono, dtype=np.float32), rate


def _decode_av(data: bytes) -> tuple[FloatArray, int]:
    import av

    parts: list[FloatArray] = []
    total = 0
    with av.open(io.BytesIO(data), mode="r") as container:
        if not container.streams.audio:
            raise RejectedAudio("bad_audio", "the file has no audio stream")
        stream = container.streams.audio[0]
        rate = int(stream.codec_context.sample_rate or 0)
        _check_layout(rate, int(stream.codec_context.channels or 1))
        limit = int(MAX_DECODE_S * rate)
        # Planar float keeps every channel; they are averaged below (the same down-mix as for WAV).
        resampler = av.AudioResampler(format="fltp", rate=rate)
        for frame in container.decode(stream):
            for out in resampler.resample(frame):
                arr = out.to_ndarray().astype(np.float32, copy=False)
                parts.append(arr.mean(axis=0, dtype=np.float32) if arr.shape[0] > 1 else arr[0])
                total += arr.shape[1]
            if total > limit:
                raise _too_long(rate, total)
    if not parts:
        return np.zeros(0, dtype=np.float32), rate
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32), rate


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text[:200]


def _frame_dbfs(x: FloatArray, frame: int) -> npt.NDArray[np.float64]:
    count = max(1, math.ceil(x.size / frame))
    padded = np.zeros(count * frame, dtype=np.float64)
    padded[: x.size] = x
    rms = np.sqrt(np.mean(np.square(padded.reshape(count, frame)), axis=1))
    result: npt.NDArray[np.float64] = 20.0 * np.log10(np.maximum(rms, 1e-6))
    return result


def prepare_reference(data: bytes) -> ReferenceAudio:
    """Decode, check and normalise an upload (see the module docstring). Raises ``RejectedAudio``."""
    samples, rate, kind = decode(data)
    samples = np.nan_to_num(samples, nan=0.0, posinf=1.0, neginf=-1.0)
    source_s = samples.size / rate
    warnings: list[str] = []

    clipped = float(np.mean(np.abs(samples) >= CLIP_LEVEL))
    if clipped > CLIP_REJECT_FRACTION:
        raise RejectedAudio(
            "clipped",
            f"the recording is heavily clipped ({clipped:.1%} of samples at full scale); "
            "record again with the input level turned down",
        )
    if clipped > CLIP_WARN_FRACTION:
        warnings.append(f"some of the recording is clipped ({clipped:.2%} of samples at full scale)")

    x = resample(samples, rate, REFERENCE_RATE) if rate != REFERENCE_RATE else samples
    x = (x - np.float32(np.mean(x))).astype(np.float32)  # DC offset would distort levels and trimming
    frame = int(REFERENCE_RATE * _FRAME_S)
    levels = _frame_dbfs(x, frame)
    loudest = float(levels.max())
    if loudest < SILENT_DBFS:
        raise RejectedAudio("silent", f"the recording is silent (loudest part {loudest:.0f} dBFS)")
    threshold = max(loudest - TRIM_BELOW_PEAK_DB, TRIM_FLOOR_DBFS)
    active = np.flatnonzero(levels >= threshold)
    pad = int(TRIM_PAD_S * REFERENCE_RATE)
    start = max(0, int(active[0]) * frame - pad)
    end = min(x.size, (int(active[-1]) + 1) * frame + pad)
    x = x[start:end]
    duration = x.size / REFERENCE_RATE

    if duration < MIN_S:
        raise RejectedAudio(
            "too_short",
            f"only {duration:.1f} s of speech after trimming silence; at least {MIN_S:.0f} s is needed "
            f"({IDEAL_MIN_S:.0f}–{IDEAL_MAX_S:.0f} s works best)",
        )
    if duration > MAX_S:
        raise RejectedAudio(
            "too_long",
            f"{duration:.1f} s of speech after trimming silence; the limit is {MAX_S:.0f} s "
            f"({IDEAL_MIN_S:.0f}–{IDEAL_MAX_S:.0f} s works best)",
        )
    if duration < IDEAL_MIN_S:
        warnings.append(f"the recording is short ({duration:.1f} s); {IDEAL_MIN_S:.0f}–{IDEAL_MAX_S:.0f} s works best")
    elif duration > IDEAL_MAX_S:
        warnings.append(f"the recording is long ({duration:.1f} s); {IDEAL_MIN_S:.0f}–{IDEAL_MAX_S:.0f} s works best")

    speech = levels[active[0] : active[-1] + 1]
    voiced = speech[speech >= threshold]
    speech_dbfs = 10.0 * math.log10(float(np.mean(np.power(10.0, voiced / 10.0))))
    peak = float(np.max(np.abs(x)))
    gain = min(10.0 ** ((TARGET_DBFS - speech_dbfs) / 20.0), PEAK_CEILING / peak)
    pcm = float_to_pcm16(x * np.float32(gain))
    return ReferenceAudio(
        wav=wav_bytes(pcm, REFERENCE_RATE),
        pcm=pcm,
        duration_s=round(duration, 3),
        source_format=kind,
        source_rate=rate,
        source_duration_s=round(source_s, 3),
        warnings=tuple(warnings),
    )
