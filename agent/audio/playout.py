"""What the caller's device is playing, on the server's clock: the echo gate's reference (pure; time injected).

The runtime tells ``Playout`` each reply frame as it goes to the socket (``sent``) and each time the caller's
buffer is emptied (``clear``: ``playback.clear``, ``playback.pause``, Twilio's ``clear``). A frame is taken to
play from ``max(sent, end of the frame before)``: Twilio's frames, paced in real time, play as they are sent, and
a browser's burst queues up the way its buffer plays it. The network, the device's buffers and the room add a
delay that is not known here; the echo gate's delay search finds it.

``take(samples, now)`` returns the reference in step with the caller's audio: for each chunk of caller audio
(already at 16 kHz) the same number of samples of what was playing while it was captured. The capture time of
the caller's stream is its sample count since the first chunk, placed on the clock at the least delay any chunk
has shown so far (a late chunk was delayed on the way, an early one shows the true pace), crept up by 2 ms a
second so a caller whose clock runs slow is followed.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from agent.audio.pcm import FloatArray, pcm16_to_float
from agent.audio.resample import StreamResampler

RATE = 16000
_CREEP = 0.002  # seconds per second of caller audio
_KEEP_S = 2.0  # reference kept behind the caller's audio


class Playout:
    def __init__(self) -> None:
        self._origin: float | None = None  # clock time of reference sample 0
        self._segments: deque[tuple[int, FloatArray]] = deque()  # (first sample, samples), in play order
        self._end = 0  # sample where the audio queued so far ends
        self._resamplers: dict[int, StreamResampler] = {}
        self._taken = 0  # caller samples taken so far
        self._lag: float | None = None  # least (arrival - capture) seen, crept up

    def sent(self, pcm: bytes, sample_rate: int, now: float) -> None:
        """A reply frame (PCM16 at ``sample_rate``) was handed to the socket at ``now``."""
        samples = pcm16_to_float(pcm)
        if sample_rate != RATE:
            resampler = self._resamplers.get(sample_rate)
            if resampler is None:
                resampler = self._resamplers[sample_rate] = StreamResampler(sample_rate, RATE)
            samples = resampler.process(samples)
        start = max(self._sample(now), self._end)
        if samples.size:
            self._segments.append((start, samples))
        self._end = start + samples.size
        self._forget(self._sample(now) - int(_KEEP_S * RATE))

    def clear(self, now: float) -> None:
        """The caller's buffer was emptied at ``now``: what was queued after it never plays."""
        cut = self._sample(now)
        kept: deque[tuple[int, FloatArray]] = deque()
        for start, samples in self._segments:
            if start < cut:
                kept.append((start, samples[: cut - start]))
        self._segments = kept
        self._end = min(self._end, cut)
        for resampler in self._resamplers.values():
            resampler.reset()

    def take(self, samples: int, now: float) -> bytes:
        """The reference (PCM16 at 16 kHz, ``samples`` long) for the next ``samples`` of caller audio, which
        arrived at ``now``."""
        self._taken += samples
        lag = now - self._taken / RATE
        if self._lag is None or lag < self._lag:
            self._lag = lag
        else:
            self._lag += _CREEP * samples / RATE
        end = self._sample(self._lag) + self._taken
        start = end - samples
        out = np.zeros(samples, dtype=np.float32)
        for first, chunk in reversed(self._segments):  # in play order: stop at the first that ended before
            if first + chunk.size <= start:
                break
            lo, hi = max(start, first), min(end, first + chunk.size)
            if lo < hi:
                out[lo - start : hi - start] = chunk[lo - first : hi - first]
        self._forget(start - int(_KEEP_S * RATE))
        pcm: bytes = np.clip(np.rint(out * 32768.0), -32768, 32767).astype("<i2").tobytes()  # made here: no NaN
        return pcm

    def _sample(self, t: float) -> int:
        if self._origin is None:
            self._origin = t
        return round((t - self._origin) * RATE)

    def _forget(self, before: int) -> None:
        while self._segments and self._segments[0][0] + self._segments[0][1].size < before:
            self._segments.popleft()
