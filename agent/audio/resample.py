"""Streaming rational-ratio resampling in pure numpy (polyphase Kaiser-windowed sinc).

Why not soxr: ``soxr.ResampleStream`` answers 20 ms chunks in bursts (nothing, nothing, then ~100 ms), which
adds buffering latency to telephony-sized frames. This resampler returns output in proportion to every input
chunk, holding back only half the filter (``latency_s``, 1.7–2.5 ms for the rates the server uses).

Filter: passband flat (within 0.01 dB) up to 0.9 × the lower Nyquist frequency and at least 60 dB of
attenuation from the lower Nyquist frequency up. It is zero-phase: output sample ``n`` lines up with input
time ``n / out_rate``, so a one-shot ``resample`` is not shifted.

How it is fast: the polyphase filter bank is laid out once as a block matrix ``W`` that maps ``Q + taps - 1``
consecutive inputs to ``P`` consecutive outputs (``P / Q`` = the reduced ratio, scaled up so a block spans
a quarter of the filter length). A call then gathers its input blocks (overlapping, stride ``Q``) and does one
BLAS matrix product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from agent.errors import AudioFormatError

FloatArray = npt.NDArray[np.float32]

_PASS_EDGE = 0.90  # passband edge, fraction of the lower Nyquist frequency
_STOP_EDGE = 1.00  # stopband edge
_ATTENUATION_DB = 65.0
_MAX_BLOCK_OUTPUTS = 256
# The filter bank and block matrix grow with ``up * down`` of the reduced ratio. A file at an odd rate
# (44101 Hz: 24000/44101) would need gigabytes, so such ratios are approximated by the nearest one whose
# ``up * down`` is at most this (a time/pitch error well under 0.1 %); every rate the server uses is exact.
_MAX_RATIO_TERMS = 1_000_000
_MAX_RATIO = 64  # out_rate / in_rate (or its inverse) beyond this is refused: the filter would be huge


@dataclass(frozen=True, slots=True)
class _Plan:
    taps: int  # filter length in input samples (even)
    block_out: int  # P: outputs per block
    block_in: int  # Q: inputs the block advances by
    weights_t: FloatArray  # [Q + taps - 1, P]: inputs of one block -> its outputs


def _bank(up: int, down: int) -> tuple[npt.NDArray[np.float64], int]:
    """Polyphase bank ``[up, taps]`` for the reduced ratio ``up / down``.

    Row ``p`` filters an output that falls ``p / up`` of an input sample after its base input ``i``;
    column ``j`` multiplies input ``i - taps/2 + 1 + j``.
    """
    scale = min(1.0, up / down)  # lower Nyquist as a fraction of the input Nyquist
    cutoff = 0.5 * scale * (_PASS_EDGE + _STOP_EDGE) / 2  # cycles per input sample
    transition = 0.5 * scale * (_STOP_EDGE - _PASS_EDGE)
    # Kaiser's design formulas (Oppenheim & Schafer, 7.6).
    beta = 0.1102 * (_ATTENUATION_DB - 8.7)
    taps = 2 * math.ceil((_ATTENUATION_DB - 7.95) / (14.36 * transition) / 2)
    half = taps // 2
    phase = np.arange(up, dtype=np.float64)[:, None] / up
    t = phase + (half - 1) - np.arange(taps, dtype=np.float64)[None, :]  # output time minus input time
    window = np.i0(beta * np.sqrt(np.clip(1.0 - (t / half) ** 2, 0.0, None))) / np.i0(beta)
    bank = 2.0 * cutoff * np.sinc(2.0 * cutoff * t) * window
    bank /= bank.sum(axis=1, keepdims=True)  # exact unit DC gain on every branch
    return bank, taps


def _ratio(in_rate: int, out_rate: int) -> tuple[int, int]:
    """``(up, down)``: the reduced ratio ``out_rate / in_rate``, approximated when it is too costly."""
    exact = Fraction(out_rate, in_rate)
    ratio, limit = exact, math.isqrt(int(_MAX_RATIO_TERMS / exact))
    while ratio.numerator * ratio.denominator > _MAX_RATIO_TERMS:
        ratio = exact.limit_denominator(max(1, limit))
        limit //= 2
    return ratio.numerator, ratio.denominator


@lru_cache(maxsize=32)
def _plan(up: int, down: int) -> _Plan:
    bank, taps = _bank(up, down)
    # A block that advances a quarter filter keeps the zero padding of ``W`` (wasted multiplies) small
    # while leaving enough rows for BLAS.
    k = max(1, min(round(taps / 4 / down), _MAX_BLOCK_OUTPUTS // up))
    p_out, q_in = k * up, k * down
    weights = np.zeros((p_out, q_in + taps - 1), dtype=np.float64)
    for r in range(p_out):
        first = r * down // up
        weights[r, first : first + taps] = bank[r * down % up]
    return _Plan(taps, p_out, q_in, np.ascontiguousarray(weights.T, dtype=np.float32))


class StreamResampler:
    """Stateful resampler from ``in_rate`` to ``out_rate`` for one audio stream.

    Call ``process`` with consecutive float32 mono chunks; each call returns the output that the input so far
    determines, so 20 ms in gives 20 ms out (±1 sample) from the second call on; the first call's output is
    shorter by the filter look-ahead ``latency_s``. Call ``flush`` at the end of the stream for the tail;
    the resampler is then reset for a new stream. Equal rates pass samples through unchanged. Not
    thread-safe: one instance per stream. Raises ``AudioFormatError`` for non-positive rates.
    """

    def __init__(self, in_rate: int, out_rate: int) -> None:
        if in_rate <= 0 or out_rate <= 0:
            raise AudioFormatError(f"sample rates must be positive, got {in_rate} -> {out_rate}")
        if max(in_rate, out_rate) > _MAX_RATIO * min(in_rate, out_rate):
            raise AudioFormatError(f"cannot resample {in_rate} Hz to {out_rate} Hz: more than {_MAX_RATIO}x apart")
        self.in_rate = in_rate
        self.out_rate = out_rate
        self._up, self._down = _ratio(in_rate, out_rate)
        self._plan: _Plan | None = None if in_rate == out_rate else _plan(self._up, self._down)
        self.reset()

    @property
    def latency_s(self) -> float:
        """Input held back by ``process`` until more input (or ``flush``) arrives, in seconds."""
        return 0.0 if self._plan is None else (self._plan.taps // 2) / self.in_rate

    def reset(self) -> None:
        """Forget the stream: the next ``process`` call starts a new one."""
        taps = 0 if self._plan is None else self._plan.taps
        # The buffer starts with the zero history before input 0 (taps/2 - 1 samples), so that the first
        # tap of output 0 is at buffer index 0.
        self._buf: FloatArray = np.zeros(max(taps // 2 - 1, 0), dtype=np.float32)
        self._n = 0  # next output, counted from the start of the block that begins at buffer index 0
        self._consumed = 0  # inputs seen in this stream
        self._produced = 0  # outputs returned in this stream

    def process(self, x: npt.ArrayLike) -> FloatArray:
        """Feed the next chunk (float mono samples) and return the float32 output it completes."""
        chunk = np.asarray(x, dtype=np.float32).reshape(-1)
        if self._plan is None:
            return chunk.copy()
        self._consumed += chunk.size
        self._buf = np.concatenate((self._buf, chunk))
        return self._run(self._plan, None)

    def flush(self) -> FloatArray:
        """Return the rest of the stream (input is taken as zero past its end), then reset.

        Over a whole stream, the ``process`` outputs plus ``flush`` hold ``ceil(N * out_rate / in_rate)``
        samples for ``N`` input samples.
        """
        plan = self._plan
        if plan is None:
            return np.zeros(0, dtype=np.float32)
        total = -(-self._consumed * self._up // self._down)
        self._buf = np.concatenate((self._buf, np.zeros(plan.taps // 2, dtype=np.float32)))
        out = self._run(plan, total - self._produced)
        self.reset()
        return out

    def _run(self, plan: _Plan, limit: int | None) -> FloatArray:
        up, down, taps = self._up, self._down, plan.taps
        # Output n needs buffer[n * down // up + taps - 1]; find the first output that is not ready yet.
        ready = len(self._buf) - taps + 1
        n_end = -(-ready * up // down) if ready > 0 else 0
        if limit is not None:
            n_end = min(n_end, self._n + limit)
        if n_end <= self._n:
            return np.zeros(0, dtype=np.float32)
        blocks = -(-n_end // plan.block_out)
        width = plan.block_in + taps - 1
        buf = self._buf
        short = (blocks - 1) * plan.block_in + width - len(buf)
        if short > 0:  # the last block's unready outputs read past the end; they are discarded
            buf = np.concatenate((buf, np.zeros(short, dtype=np.float32)))
        # Overlapping rows over the same memory (what ``as_strided`` does, without its Python overhead).
        step = buf.itemsize
        rows = np.ndarray((blocks, width), np.float32, buffer=buf, strides=(step * plan.block_in, step))
        out = (rows @ plan.weights_t).reshape(-1)[self._n : n_end]
        self._produced += out.size
        # Keep the input from the block that holds the next output on.
        done = n_end // plan.block_out
        self._n = n_end - done * plan.block_out
        self._buf = self._buf[done * plan.block_in :]
        return out


def resample(x: npt.ArrayLike, in_rate: int, out_rate: int) -> FloatArray:
    """Resample a whole clip to ``ceil(len(x) * out_rate / in_rate)`` samples, aligned in time with ``x``."""
    rs = StreamResampler(in_rate, out_rate)
    head = rs.process(x)
    tail = rs.flush()
    return np.concatenate((head, tail)) if tail.size else head
