"""Speaker embeddings in pure numpy: resemblyzer's voice encoder (GE2E d-vectors), given its weights.

The network is a 3-layer LSTM over 40-channel mel frames (25 ms windows, 10 ms hop, 16 kHz) whose last hidden
state goes through a linear layer, a ReLU and an L2 norm: a 256-d embedding in which clips of one speaker lie
close together (cosine similarity, ``cosine``). The weights come from resemblyzer's ``pretrained.pt``
(``agent.adapters.resemblyzer_similarity`` loads them); this module holds only the arithmetic, so it is tested
on small hand-made weights.

Every step follows resemblyzer 0.1.4 (``audio.py``, ``voice_encoder.py``) with today's librosa defaults:

- ``preprocess``: volume raised (never lowered) to -30 dBFS RMS, then silences longer than ~200 ms cut out,
  from per-30 ms voice decisions (webrtcvad mode 3 there; any ``is_speech`` here) smoothed by a moving average
  of 8 windows and dilated by 6 windows;
- ``mel_spectrogram``: centred STFT (n_fft 400, hop 160, periodic Hann, zero padding), power, 40 Slaney mel
  bands (librosa's ``filters.mel``, area-normalised); not a log-mel;
- ``utterance_embedding``: partial utterances of 160 frames (1.6 s), 1.3 per second (77 frames apart, about
  half overlapping); the last one is kept when at least 75 % of it holds audio (zero-padded); each is embedded,
  the mean of their embeddings is L2-normalised.

Pure: no I/O, no threads, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]

SAMPLE_RATE = 16000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160
PARTIALS_PER_S = 1.3
MIN_COVERAGE = 0.75
VAD_WINDOW = 480  # 30 ms at 16 kHz
VAD_AVERAGE = 8
VAD_MAX_SILENCE = 6
TARGET_DBFS = -30.0
INT16_MAX = 32767


# --- preprocessing ----------------------------------------------------------------------------------------


def normalize_volume(wav: FloatArray, target_dbfs: float = TARGET_DBFS) -> FloatArray:
    """``wav`` raised to ``target_dbfs`` RMS (full scale = 1.0); louder audio, and silence, are left alone."""
    rms = float(np.sqrt(np.mean(np.square(wav, dtype=np.float64)))) if wav.size else 0.0
    if rms <= 0.0:
        return wav
    change_db = target_dbfs - 20.0 * math.log10(rms)
    return wav if change_db < 0 else (wav * 10.0 ** (change_db / 20.0)).astype(np.float32)


def speech_mask(flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """Which 30 ms windows to keep, from their raw voice decisions: a moving average over ``VAD_AVERAGE``
    windows, rounded, then dilated by ``VAD_MAX_SILENCE`` windows on each side (resemblyzer's
    ``trim_long_silences``)."""
    if flags.size == 0:
        return np.zeros(0, dtype=bool)
    width = VAD_AVERAGE
    padded = np.concatenate((np.zeros((width - 1) // 2), flags.astype(np.float64), np.zeros(width // 2)))
    sums = np.cumsum(padded)
    sums[width:] = sums[width:] - sums[:-width]
    smooth = np.round(sums[width - 1 :] / width).astype(bool)
    reach = (VAD_MAX_SILENCE + 1) // 2  # scipy's binary_dilation with a centred structure of 7 ones
    spread = np.convolve(smooth.astype(np.float64), np.ones(VAD_MAX_SILENCE + 1))
    dilated: npt.NDArray[np.bool_] = spread[reach : reach + smooth.size] > 0.5
    return dilated


def pcm16_windows(wav: FloatArray) -> list[bytes]:
    """``wav`` (whole windows only) as PCM16LE 30 ms windows, as resemblyzer hands them to its VAD."""
    usable = wav[: wav.size - wav.size % VAD_WINDOW]
    pcm = np.clip(np.round(usable.astype(np.float64) * INT16_MAX), -32768, 32767).astype("<i2").tobytes()
    step = 2 * VAD_WINDOW
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


def trim_long_silences(wav: FloatArray, is_speech: Callable[[bytes], bool]) -> FloatArray:
    """``wav`` (16 kHz) without its long silences; ``is_speech`` judges one 30 ms PCM16LE window."""
    windows = pcm16_windows(wav)
    flags = np.array([is_speech(window) for window in windows], dtype=bool)
    keep = np.repeat(speech_mask(flags), VAD_WINDOW)
    return wav[: keep.size][keep]


def preprocess(wav: FloatArray, is_speech: Callable[[bytes], bool]) -> FloatArray:
    """Volume normalisation, then silence trimming (resemblyzer's ``preprocess_wav`` after resampling)."""
    return trim_long_silences(normalize_volume(wav), is_speech)


# --- features ---------------------------------------------------------------------------------------------


def _hz_to_mel(hz: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Slaney's mel scale: linear (200/3 Hz per mel) below 1 kHz, logarithmic above."""
    mel = hz / (200.0 / 3.0)
    log_region = hz >= 1000.0
    mel[log_region] = 15.0 + np.log(hz[log_region] / 1000.0) / (math.log(6.4) / 27.0)
    return mel


def _mel_to_hz(mel: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    hz = mel * (200.0 / 3.0)
    log_region = mel >= 15.0
    hz[log_region] = 1000.0 * np.exp((math.log(6.4) / 27.0) * (mel[log_region] - 15.0))
    return hz


@cache
def mel_filters(sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS) -> FloatArray:
    """(n_mels, n_fft // 2 + 1) Slaney mel filterbank from 0 Hz to Nyquist, area-normalised (librosa's
    ``filters.mel`` defaults: ``htk=False``, ``norm="slaney"``, float32)."""
    fft_hz = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    edges = _mel_to_hz(np.linspace(0.0, _hz_to_mel(np.array([sample_rate / 2.0]))[0], n_mels + 2))
    widths = np.diff(edges)
    ramps = edges[:, None] - fft_hz[None, :]
    rising = -ramps[:-2] / widths[:-1, None]
    falling = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(rising, falling))
    weights *= (2.0 / (edges[2:] - edges[:-2]))[:, None]
    filters: FloatArray = weights.astype(np.float32)
    return filters


@cache
def _hann(n: int) -> npt.NDArray[np.float64]:
    return np.hanning(n + 1)[:-1]  # periodic (scipy's get_window("hann", n, fftbins=True))


def mel_spectrogram(wav: FloatArray) -> FloatArray:
    """(frames, 40) mel power spectrogram of 16 kHz audio: ``1 + len(wav) // HOP`` frames, centred."""
    padded = np.pad(wav.astype(np.float64), (N_FFT // 2, N_FFT // 2))
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * _hann(N_FFT), axis=-1)) ** 2
    mel: FloatArray = (power.astype(np.float32) @ mel_filters().T).astype(np.float32)
    return mel


def partial_slices(n_samples: int) -> list[slice]:
    """Frame ranges of the partial utterances of ``n_samples`` of audio (resemblyzer's
    ``compute_partial_slices`` with ``rate`` 1.3 and ``min_coverage`` 0.75); at least one."""
    n_frames = math.ceil((n_samples + 1) / HOP)
    step = round(SAMPLE_RATE / PARTIALS_PER_S / HOP)
    starts = range(0, max(1, n_frames - PARTIAL_FRAMES + step + 1), step)
    slices = [slice(i, i + PARTIAL_FRAMES) for i in starts]
    coverage = (n_samples - slices[-1].start * HOP) / (PARTIAL_FRAMES * HOP)
    if coverage < MIN_COVERAGE and len(slices) > 1:
        slices.pop()
    return slices


# --- the network ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LstmLayer:
    """One LSTM layer in PyTorch's layout: gates stacked input, forget, cell, output; ``bias`` = b_ih + b_hh."""

    w_ih: FloatArray  # (4H, F)
    w_hh: FloatArray  # (4H, H)
    bias: FloatArray  # (4H,)


@dataclass(frozen=True, slots=True)
class EncoderWeights:
    """The voice encoder's parameters: LSTM layers, then ``linear_w`` (E, H) and ``linear_b`` (E,)."""

    layers: tuple[LstmLayer, ...]
    linear_w: FloatArray
    linear_b: FloatArray

    @classmethod
    def from_state_dict(cls, state: Mapping[str, npt.NDArray[np.float32]]) -> EncoderWeights:
        """From PyTorch parameter names (``lstm.weight_ih_l0``..., ``linear.weight``); raises ``ValueError``
        when a parameter is missing or its shape does not fit."""

        def get(name: str) -> FloatArray:
            if name not in state:
                raise ValueError(f"no parameter {name!r}")
            return np.ascontiguousarray(state[name], dtype=np.float32)

        layers: list[LstmLayer] = []
        features = N_MELS
        while f"lstm.weight_ih_l{len(layers)}" in state:
            n = len(layers)
            w_ih, w_hh = get(f"lstm.weight_ih_l{n}"), get(f"lstm.weight_hh_l{n}")
            bias = get(f"lstm.bias_ih_l{n}") + get(f"lstm.bias_hh_l{n}")
            hidden = w_hh.shape[-1] if w_hh.ndim == 2 else 0
            gates = 4 * hidden
            if w_ih.shape != (gates, features) or w_hh.shape != (gates, hidden) or bias.shape != (gates,):
                raise ValueError(f"LSTM layer {n} has shapes {w_ih.shape}, {w_hh.shape}, {bias.shape}")
            layers.append(LstmLayer(w_ih, w_hh, bias))
            features = hidden
        linear_w, linear_b = get("linear.weight"), get("linear.bias")
        if not layers or linear_w.shape != (linear_b.shape[0], features):
            raise ValueError(f"linear layer {linear_w.shape} does not fit {len(layers)} LSTM layer(s)")
        return cls(tuple(layers), linear_w, linear_b)


BLOCK_MACS = 1 << 16
"""Multiply-adds per matrix product in the recurrence, at most. OpenBLAS hands a product of about 2^18 or more to
its worker threads: on a machine whose cores are busy with calls, waking (and spinning) them for the recurrence's
small products costs several times what it saves, and takes the cores from the calls. Smaller products run on
the calling thread."""


def lstm_last_hidden(x: FloatArray, layers: tuple[LstmLayer, ...]) -> FloatArray:
    """The last layer's hidden state after the last step, (B, H), for input (B, T, F); zero initial states."""
    batch, steps, _ = x.shape
    sequence = x.astype(np.float32)
    h = np.zeros((batch, 0), np.float32)
    for layer in layers:
        hidden = layer.w_hh.shape[1]
        # Gates reordered to input, forget, output, cell; sigmoid(z) = (1 + tanh(z / 2)) / 2, so the sigmoid
        # gates' rows are halved (exact in binary) and one tanh over all four gates serves.
        order = np.r_[0 : 2 * hidden, 3 * hidden : 4 * hidden, 2 * hidden : 3 * hidden]
        scale = np.where(np.arange(4 * hidden) < 3 * hidden, 0.5, 1.0).astype(np.float32)
        w_ih_t = layer.w_ih[order].T * scale
        w_hh_t = layer.w_hh[order].T * scale
        inputs = (sequence.reshape(batch * steps, -1) @ w_ih_t).reshape(batch, steps, -1) + layer.bias[order] * scale
        width = max(1, min(4 * hidden, BLOCK_MACS // max(1, batch * hidden)))
        blocks = [(a, np.ascontiguousarray(w_hh_t[:, a : a + width])) for a in range(0, 4 * hidden, width)]
        h = np.zeros((batch, hidden), np.float32)
        c = np.zeros((batch, hidden), np.float32)
        gates = np.empty((batch, 4 * hidden), np.float32)
        scratch = np.empty((batch, hidden), np.float32)
        outputs = np.empty((batch, steps, hidden), np.float32)
        sigmoids, cell = gates[:, : 3 * hidden], gates[:, 3 * hidden :]
        i, f, o = gates[:, :hidden], gates[:, hidden : 2 * hidden], gates[:, 2 * hidden : 3 * hidden]
        for t in range(steps):
            for a, block in blocks:
                np.matmul(h, block, out=gates[:, a : a + block.shape[1]])
            gates += inputs[:, t]
            np.tanh(gates, out=gates)
            sigmoids *= 0.5
            sigmoids += 0.5
            c *= f
            np.multiply(i, cell, out=scratch)
            c += scratch
            np.tanh(c, out=scratch)
            np.multiply(o, scratch, out=h)
            outputs[:, t] = h
        sequence = outputs
    return h


def partial_embeddings(mels: FloatArray, weights: EncoderWeights) -> FloatArray:
    """(B, E) L2-normalised embeddings of a batch of mel spectrograms (B, T, 40)."""
    hidden = lstm_last_hidden(mels, weights.layers)
    raw = np.maximum(hidden @ weights.linear_w.T + weights.linear_b, 0.0)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    embeds: FloatArray = (raw / np.maximum(norms, 1e-12)).astype(np.float32)
    return embeds


def utterance_embedding(wav: FloatArray, weights: EncoderWeights) -> FloatArray:
    """The embedding (E,) of preprocessed 16 kHz audio: the normalised mean of its partial utterances'."""
    slices = partial_slices(wav.size)
    needed = slices[-1].stop * HOP
    audio = np.pad(wav, (0, needed - wav.size)) if needed >= wav.size else wav
    mel = mel_spectrogram(audio)
    partials = partial_embeddings(np.stack([mel[s] for s in slices]), weights)
    mean = partials.mean(axis=0)
    embed: FloatArray = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
    return embed


def cosine(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Cosine similarity of two embeddings (-1..1; resemblyzer's are non-negative, so 0..1); 0.0 for a zero
    vector. Raises ``ValueError`` for shapes that differ."""
    x, y = np.asarray(a, np.float64).reshape(-1), np.asarray(b, np.float64).reshape(-1)
    if x.shape != y.shape:
        raise ValueError(f"embeddings of different sizes: {x.size} and {y.size}")
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norms if norms > 0 else 0.0
