"""Reference audio for voice cloning: decode any common upload, normalise it, and check it is usable.

``prepare_reference(data)`` takes the raw bytes of an upload (WAV, FLAC, OGG Vorbis/Opus, MP3, M4A/AAC or
raw ADTS AAC; the format is decided by the magic bytes, never by a file name or a declared type), and
returns a ``ReferenceAudio``: 24 kHz mono PCM16 WAV with leading/trailing silence trimmed and speech
loudness normalised, plus any warnings. It raises ``RejectedAudio`` (an ``AudioFormatError``) whose
``code`` is the wire error code (``too_large``, ``bad_audio``, ``too_short``, ``too_long``, ``silent``,
``clipped``) and whose message says what to do about it (never a decoder's object reprs or addresses).

Why these limits: Qwen3-TTS clones from "a few seconds"; vLLM-Omni bounds uploads to 1–30 s and the model
card advises roughly 3–20 s, so 1–3 s and 20–30 s are accepted with a warning and the rest is refused.

Loudness is normalised on the RMS of the active (non-silent) 10 ms frames to ``TARGET_DBFS`` with a peak
ceiling of ``PEAK_CEILING``: a simple, dependency-free stand-in for LUFS that is close for clean speech.

Memory is bounded by the *decoded* size, not the upload's: 390 KB of FLAC silence can declare 8 channels at
384 kHz for two minutes, 1.5 GB as float32. So:

- the upload is at most ``MAX_UPLOAD_BYTES``;
- the header's channels, rate and length are checked before anything is decoded: at most ``MAX_CHANNELS``
  (8: 7.1 surround, the most any recorder or phone writes; a voice needs one), ``MIN_SOURCE_RATE`` to
  ``MAX_SOURCE_RATE`` (4–192 kHz: 192 kHz is the top rate of studio interfaces and field recorders, and the
  clone is made at 24 kHz), at most ``MAX_DECODE_S`` of audio (60 s: twice the longest speech accepted,
  leaving room for silence around it). M4A must hold AAC (or another codec whose frames are small);
- decoding is streamed: WAV, FLAC and OGG in blocks of at most ``BLOCK_SAMPLES`` samples (frames ×
  channels), MP3 and M4A/AAC a codec frame at a time (at most 65,535 samples a channel for the codecs
  allowed); each block is down-mixed to mono, its clipped samples counted, and resampled to 24 kHz at once,
  so what is kept is 96 KB per second of audio whatever the source;
- decoding stops with ``too_long`` as soon as the decoded audio passes ``MAX_DECODE_S``, whatever the header
  claimed (a streamed FLAC does not know its length; a header can lie).

Any upload, accepted or refused, costs at most about 10 MB above the process's baseline (tests/integration/
test_enrollment_bombs.py measures the server's). Everything here is blocking CPU work (tens of milliseconds
for a 20 s clip, about a second for the largest upload accepted); call it in a worker thread.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
import soundfile as sf

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import StreamResampler
from agent.audio.wav import wav_bytes
from agent.errors import RejectedAudio

FloatArray = npt.NDArray[np.float32]

REFERENCE_RATE = 24000
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MIN_S, IDEAL_MIN_S, IDEAL_MAX_S, MAX_S = 1.0, 3.0, 20.0, 30.0
MAX_DECODE_S = 60.0
MIN_SOURCE_RATE, MAX_SOURCE_RATE = 4000, 192000  # sample rates of uploads we decode
MAX_CHANNELS = 8
BLOCK_SAMPLES = 1 << 16  # samples (frames × channels) decoded at a time: 256 KB as float32
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
# Decoders (FFmpeg names) allowed behind MP3, M4A and AAC: each decodes a packet to at most 65,535 samples
# per channel. Others are refused: ALAC, for one, may declare 16 million samples per frame.
_AV_CODECS = frozenset(
    {"aac", "aac_fixed", "aac_latm", "mp1", "mp1float", "mp2", "mp2float", "mp3", "mp3float", "mp3adu",
     "mp3adufloat", "opus", "libopus", "vorbis", "libvorbis", "flac"}
)  # fmt: skip
_UNKNOWN_FRAMES = 2**62  # libsndfile's length when the header does not say (SF_COUNT_MAX)
_MAX_RATIO_TERMS = 50_000  # numerator × denominator of the resampling ratio: 47,040 for 11,025 Hz


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


@dataclass(frozen=True, slots=True)
class Decoded:
    """An upload decoded to mono at ``REFERENCE_RATE``, with what was measured at the source rate on the way."""

    samples: FloatArray
    source_format: str
    source_rate: int
    source_frames: int
    clipped: int
    """Source samples (after the down-mix) at or beyond ``CLIP_LEVEL``."""


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


def decode(data: bytes) -> Decoded:
    """Decode an upload to mono at ``REFERENCE_RATE``, streamed; at most ``MAX_DECODE_S`` seconds of it.

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
        sink = _decode_soundfile(data) if kind in ("wav", "flac", "ogg") else _decode_av(data, kind)
        samples = sink.finish()
    except RejectedAudio:
        raise
    except Exception as exc:  # libsndfile and FFmpeg raise many types for damaged files
        raise RejectedAudio("bad_audio", f"cannot decode the {kind.upper()} audio: {safe_reason(exc)}") from exc
    if sink.frames == 0:
        raise RejectedAudio("bad_audio", f"the {kind.upper()} file holds no audio")
    return Decoded(samples, kind, sink.rate, sink.frames, sink.clipped)


class _MonoSink:
    """Takes decoded blocks and keeps only their mono down-mix at ``REFERENCE_RATE``; counts frames and clipping.

    ``add`` raises ``RejectedAudio("too_long")`` once more than ``MAX_DECODE_S`` seconds have come.
    """

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.frames = 0
        self.clipped = 0
        self._limit = int(MAX_DECODE_S * rate)
        self._resampler = _resampler(rate)
        # Room for the longest audio accepted (with slack for a resampling ratio that is approximated); its
        # pages are only touched, so only resident, as audio comes.
        self._kept: FloatArray = np.empty(int(MAX_DECODE_S * REFERENCE_RATE * 1.01) + 4096, dtype=np.float32)
        self._size = 0

    def add(self, block: FloatArray, channel_axis: int) -> None:
        """One block of ``[frames, channels]`` (``channel_axis=1``) or planar ``[channels, frames]`` (0)."""
        self.frames += block.shape[1 - channel_axis]
        if self.frames > self._limit:
            raise _too_long(self.frames / self.rate, "")
        channels = block.shape[channel_axis]
        mono = block.reshape(-1) if channels == 1 else block.mean(axis=channel_axis, dtype=np.float32)
        mono = np.nan_to_num(mono, nan=0.0, posinf=1.0, neginf=-1.0)  # a copy: ``block`` may be reused
        self.clipped += int(np.count_nonzero(np.abs(mono) >= CLIP_LEVEL))
        self._keep(self._resampler.process(mono))

    def finish(self) -> FloatArray:
        """All the mono audio at ``REFERENCE_RATE`` (``ceil(frames * 24000 / rate)`` samples)."""
        self._keep(self._resampler.flush())
        return self._kept[: self._size]

    def _keep(self, out: FloatArray) -> None:
        end = self._size + out.size
        self._kept[self._size : end] = out  # never past the end: ``add`` stops at ``MAX_DECODE_S``
        self._size = end


def _resampler(rate: int) -> StreamResampler:
    """A resampler from ``rate`` to ``REFERENCE_RATE`` whose filter is small (under 1 MB) for any ``rate``.

    An odd rate (44,101 Hz: 24000/44101) is resampled at the nearest ratio whose terms multiply to at most
    ``_MAX_RATIO_TERMS``: at most 0.25 % off in time and pitch (4 cents, below what ears tell apart; only rates
    just off a simple ratio come near that), and every common rate is exact. Otherwise ``agent.audio.resample``
    would build, and keep in its cache, a filter of several MB for each odd rate uploaded (32 held 90 MB).
    """
    exact = ratio = Fraction(REFERENCE_RATE, rate)
    limit = math.isqrt(int(_MAX_RATIO_TERMS / exact))
    while ratio.numerator * ratio.denominator > _MAX_RATIO_TERMS:
        ratio = exact.limit_denominator(max(1, limit))
        limit //= 2
    return StreamResampler(ratio.denominator, ratio.numerator)


def _too_long(seconds: float, source: str) -> RejectedAudio:
    return RejectedAudio(
        "too_long",
        f"the recording is {seconds:.0f} s or longer{source}; at most {MAX_DECODE_S:.0f} s of audio is read "
        f"and {MAX_S:.0f} s of speech accepted",
    )


def _check_layout(rate: int, channels: int) -> None:
    if not MIN_SOURCE_RATE <= rate <= MAX_SOURCE_RATE or not 0 < channels <= MAX_CHANNELS:
        raise RejectedAudio(
            "bad_audio",
            f"the file declares {channels} channels at {rate} Hz; send {MIN_SOURCE_RATE // 1000}–"
            f"{MAX_SOURCE_RATE // 1000} kHz audio with at most {MAX_CHANNELS} channels (a voice needs one)",
        )


def _check_length(rate: int, frames: int) -> None:
    """Refuse a header that declares more than ``MAX_DECODE_S`` (a length it does not know is not checked)."""
    if MAX_DECODE_S * rate < frames < _UNKNOWN_FRAMES:
        raise _too_long(frames / rate, " (from its header)")


def _decode_soundfile(data: bytes) -> _MonoSink:
    with sf.SoundFile(io.BytesIO(data)) as f:
        rate, channels = int(f.samplerate), int(f.channels)
        _check_layout(rate, channels)
        _check_length(rate, int(f.frames))
        sink = _MonoSink(rate)
        block = np.empty((max(1, BLOCK_SAMPLES // channels), channels), dtype=np.float32)
        while count := _read_into(f, block):
            sink.add(block[:count], channel_axis=1)
    return sink


def _read_into(f: Any, block: FloatArray) -> int:
    """Decode up to ``len(block)`` frames into ``block``; 0 at the end of the audio.

    libsndfile's own read, not ``SoundFile.read``: that one seeks back to where it counts it is after every
    read, which fails for a file whose header does not give its length (a streamed FLAC), exactly the files
    whose decoded length must be counted here. (soundfile is pinned; ``test_reference_limits`` covers this.)
    """
    pointer = sf._ffi.cast("float *", sf._ffi.from_buffer(block))
    count = int(sf._snd.sf_readf_float(f._file, pointer, len(block)))
    error = int(sf._snd.sf_error(f._file))
    if error:
        raise sf.LibsndfileError(error)
    return count


def _decode_av(data: bytes, kind: str) -> _MonoSink:
    import av

    with av.open(io.BytesIO(data), mode="r") as container:
        if not container.streams.audio:
            raise RejectedAudio("bad_audio", "the file has no audio stream")
        stream = container.streams.audio[0]
        codec = stream.codec_context
        if codec.name not in _AV_CODECS:
            raise RejectedAudio("bad_audio", f"the file holds {str(codec.name)[:20]} audio; send {FORMATS}")
        rate = int(codec.sample_rate or 0)
        _check_layout(rate, int(codec.channels or 1))
        if kind == "mp4" and stream.duration and stream.time_base:  # exact in an MP4; MP3 lengths are guesses
            _check_length(rate, int(stream.duration * stream.time_base * rate))
        sink = _MonoSink(rate)
        # Planar float keeps every channel; they are averaged by the sink (the same down-mix as for WAV).
        # The resampler also brings a frame whose rate differs from the header's (HE-AAC) to ``rate``.
        resampler = av.AudioResampler(format="fltp", rate=rate)
        for frame in container.decode(stream):
            # Checked on every frame: ADTS and MP3 carry their layout in each frame, not once in a header.
            _check_layout(int(frame.sample_rate), int(frame.layout.nb_channels))
            for out in resampler.resample(frame):
                sink.add(out.to_ndarray().astype(np.float32, copy=False), channel_axis=0)
        for out in resampler.resample(None):
            sink.add(out.to_ndarray().astype(np.float32, copy=False), channel_axis=0)
    return sink


_REPR = re.compile(r"<[^<>]{0,200}>|\b0x[0-9a-fA-F]+\b|\[Errno -?\d+\]")


def safe_reason(exc: BaseException) -> str:
    """A decoder exception's text fit to send to a client: one short line, without object reprs (``<_io.BytesIO
    object at 0x…>``, PyAV's ``'<none>'``), addresses or error numbers; the exception's type if nothing is left."""
    text = _REPR.sub("", str(exc))
    text = re.sub(r"^\s*Error opening\W*", "", text)  # libsndfile names the (in-memory) file it opened
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    text = re.sub(r"\s*:\s*(''|\"\")\s*$", "", text).strip(" :;,")
    return text[:120] or type(exc).__name__


def _frame_dbfs(x: FloatArray, frame: int) -> npt.NDArray[np.float64]:
    """Level of each ``frame`` samples (the last one padded with silence), computed a slice at a time."""
    power = np.zeros(max(1, math.ceil(x.size / frame)), dtype=np.float64)
    step = frame * 1024  # bounds the float64 temporaries to a few MB
    for start in range(0, x.size, step):
        squares = np.square(x[start : start + step], dtype=np.float64)
        sums = np.add.reduceat(squares, np.arange(0, squares.size, frame))
        power[start // frame : start // frame + sums.size] = sums
    result: npt.NDArray[np.float64] = 10.0 * np.log10(np.maximum(power / frame, 1e-12))
    return result


def prepare_reference(data: bytes) -> ReferenceAudio:
    """Decode, check and normalise an upload (see the module docstring). Raises ``RejectedAudio``."""
    decoded = decode(data)
    warnings: list[str] = []

    clipped = decoded.clipped / decoded.source_frames
    if clipped > CLIP_REJECT_FRACTION:
        raise RejectedAudio(
            "clipped",
            f"the recording is heavily clipped ({clipped:.1%} of samples at full scale); "
            "record again with the input level turned down",
        )
    if clipped > CLIP_WARN_FRACTION:
        warnings.append(f"some of the recording is clipped ({clipped:.2%} of samples at full scale)")

    x = decoded.samples
    x -= np.float32(np.mean(x))  # DC offset would distort levels and trimming (in place: the audio is ours)
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
        source_format=decoded.source_format,
        source_rate=decoded.source_rate,
        source_duration_s=round(decoded.source_frames / decoded.source_rate, 3),
        warnings=tuple(warnings),
    )
