"""Reference-audio files in every accepted format, made at test time (nothing large is committed).

Not a test module. ``encode(pcm, rate, fmt)`` wraps PCM16LE mono in a WAV, FLAC or OGG file (soundfile) or
an MP3, M4A (AAC in MP4) or raw ADTS AAC file (PyAV: libmp3lame and FFmpeg's native aac encoder).
"""

from __future__ import annotations

import io
from typing import cast

import numpy as np
import soundfile as sf

FORMATS = ("wav", "flac", "ogg", "mp3", "m4a", "aac")


def encode(pcm: bytes, rate: int, fmt: str, channels: int = 1) -> bytes:
    """``pcm`` (PCM16LE mono) encoded as ``fmt``; ``channels=2`` duplicates it into stereo."""
    x = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        x = np.repeat(x[:, None], channels, axis=1)
    if fmt in ("wav", "flac", "ogg"):
        out = io.BytesIO()
        subtype = {"wav": "PCM_16", "flac": "PCM_16", "ogg": "VORBIS"}[fmt]
        sf.write(out, x, rate, format=fmt.upper(), subtype=subtype)
        return out.getvalue()
    return _encode_av(x, rate, fmt, channels)


def _encode_av(x: np.ndarray, rate: int, fmt: str, channels: int) -> bytes:
    import av

    container_format, codec = {"mp3": ("mp3", "libmp3lame"), "m4a": ("ipod", "aac"), "aac": ("adts", "aac")}[fmt]
    layout = "mono" if channels == 1 else "stereo"
    out = io.BytesIO()
    with av.open(out, mode="w", format=container_format) as container:
        stream = cast(av.AudioStream, container.add_stream(codec, rate=rate, layout=layout))
        planar = np.ascontiguousarray(x.reshape(len(x), -1).T, dtype=np.float32)
        frame = av.AudioFrame.from_ndarray(planar, format="fltp", layout=layout)
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()
