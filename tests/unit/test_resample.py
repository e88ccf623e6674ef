"""Streaming resampler: frequency response, steady output, streaming == one-shot, lengths, alignment."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from agent.audio.resample import StreamResampler, resample
from agent.errors import AudioFormatError

# Every conversion the server does: caller audio to 16 kHz, Piper (22.05 kHz) and 24 kHz voices to wire rates.
RATIOS = [
    (48000, 16000),
    (24000, 16000),
    (8000, 16000),
    (22050, 24000),
    (22050, 16000),
    (22050, 8000),
    (22050, 48000),
    (24000, 8000),
    (24000, 48000),
    (16000, 8000),
    (16000, 48000),
]
Pair = tuple[int, int]


def _tone(freq: float, rate: int, seconds: float, amp: float = 0.5) -> npt.NDArray[np.float32]:
    t = np.arange(round(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _middle(y: npt.NDArray[np.float32], rate: int) -> npt.NDArray[np.float32]:
    """0.1 s from the middle: an exact number of periods for tones on multiples of 10 Hz."""
    start = len(y) // 2 - rate // 20
    return y[start : start + rate // 10]


def _sweep(lo: float, hi: float, count: int) -> list[float]:
    """Frequencies on the 10 Hz grid (coherent with the 0.1 s analysis window)."""
    return sorted({round(f / 10) * 10 for f in np.linspace(lo, hi, count)})


@pytest.mark.parametrize(("src", "dst"), RATIOS)
def test_passband_is_flat(src: int, dst: int) -> None:
    nyquist = min(src, dst) / 2
    for freq in _sweep(20, 0.9 * nyquist, 15):
        seg = _middle(resample(_tone(freq, src, 0.4), src, dst), dst)
        spectrum = np.abs(np.fft.rfft(seg)) * 2 / len(seg)
        gain_db = 20 * np.log10(spectrum[round(freq / 10)] / 0.5)
        assert abs(gain_db) < 0.5, f"{freq} Hz: {gain_db:.2f} dB"


@pytest.mark.parametrize(("src", "dst"), [(s, d) for s, d in RATIOS if s > d])
def test_downsampling_rejects_what_would_alias(src: int, dst: int) -> None:
    for freq in _sweep(dst / 2, 0.98 * src / 2, 15):
        seg = _middle(resample(_tone(freq, src, 0.4), src, dst), dst)
        level_db = 20 * np.log10(np.sqrt(2 * np.mean(seg.astype(np.float64) ** 2)) / 0.5 + 1e-12)
        assert level_db < -50, f"{freq} Hz leaks at {level_db:.1f} dB"


@pytest.mark.parametrize(("src", "dst"), [(s, d) for s, d in RATIOS if s < d])
def test_upsampling_suppresses_images(src: int, dst: int) -> None:
    for freq in _sweep(20, 0.9 * src / 2, 10):
        seg = _middle(resample(_tone(freq, src, 0.4), src, dst), dst)
        window = np.hanning(len(seg))
        spectrum = np.abs(np.fft.rfft(seg * window)) * 2 / window.sum()
        freqs = np.fft.rfftfreq(len(seg), 1 / dst)
        image_db = 20 * np.log10(spectrum[freqs >= src / 2].max() / 0.5)
        assert image_db < -50, f"{freq} Hz: image at {image_db:.1f} dB"


@pytest.mark.parametrize(("src", "dst"), RATIOS)
def test_20ms_chunks_give_20ms_out_without_bursts(src: int, dst: int) -> None:
    rs = StreamResampler(src, dst)
    assert rs.latency_s <= 0.005
    x = np.random.default_rng(0).standard_normal(src * 2).astype(np.float32) * 0.1
    chunk = src // 50
    sizes = [rs.process(x[i : i + chunk]).size for i in range(0, len(x), chunk)]
    per_chunk = dst / 50
    lag = rs.latency_s * dst
    assert per_chunk - lag - 2 <= sizes[0] <= per_chunk
    assert all(abs(size - per_chunk) <= 1 for size in sizes[1:]), sizes
    assert sum(sizes) >= len(x) * dst / src - lag - 2


@pytest.mark.parametrize(("src", "dst"), RATIOS)
def test_streaming_equals_one_shot(src: int, dst: int) -> None:
    rng = np.random.default_rng(src + dst)
    x = rng.standard_normal(src // 2).astype(np.float32) * 0.2
    rs = StreamResampler(src, dst)
    pieces = []
    pos = 0
    while pos < len(x):
        size = int(rng.choice([0, 1, 7, 160, 441, 960, 3000]))
        pieces.append(rs.process(x[pos : pos + size]))
        pos += size
    pieces.append(rs.flush())
    streamed = np.concatenate(pieces)
    whole = resample(x, src, dst)
    assert streamed.shape == whole.shape
    np.testing.assert_allclose(streamed, whole, atol=1e-5)


@pytest.mark.parametrize(("src", "dst"), RATIOS)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 441, 1000, 12345])
def test_one_shot_length(src: int, dst: int, n: int) -> None:
    y = resample(np.zeros(n, dtype=np.float32), src, dst)
    assert y.dtype == np.float32
    assert abs(y.size - round(n * dst / src)) <= 1


@pytest.mark.parametrize(("src", "dst"), RATIOS)
def test_one_shot_is_not_shifted(src: int, dst: int) -> None:
    freq = 300.0
    y = resample(_tone(freq, src, 0.5), src, dst)
    expected = _tone(freq, dst, 0.5)[: y.size]
    # Away from the edges (where the stream starts and ends in silence) it is the same tone, same phase.
    margin = dst // 50
    np.testing.assert_allclose(y[margin:-margin], expected[margin : y.size - margin], atol=2e-3)


def test_flush_resets_for_a_new_stream() -> None:
    x = np.random.default_rng(3).standard_normal(4410).astype(np.float32)
    rs = StreamResampler(22050, 16000)
    first = np.concatenate([rs.process(x), rs.flush()])
    second = np.concatenate([rs.process(x), rs.flush()])
    np.testing.assert_array_equal(first, second)


def test_identity_passes_samples_through() -> None:
    x = np.random.default_rng(4).standard_normal(321).astype(np.float32)
    rs = StreamResampler(16000, 16000)
    out = rs.process(x)
    np.testing.assert_array_equal(out, x)
    assert out is not x
    assert rs.flush().size == 0
    assert rs.latency_s == 0.0
    np.testing.assert_array_equal(resample(x, 24000, 24000), x)


def test_dc_gain_is_unity() -> None:
    y = resample(np.full(22050, 0.5, dtype=np.float32), 22050, 24000)
    np.testing.assert_allclose(y[1000:-1000], 0.5, atol=1e-5)


def test_bad_rates_are_rejected() -> None:
    with pytest.raises(AudioFormatError):
        StreamResampler(0, 16000)
    with pytest.raises(AudioFormatError):
        StreamResampler(16000, -8000)


@pytest.mark.parametrize("rate", [7919, 44101, 48001, 383999])
def test_odd_rates_are_approximated_not_planned_exactly(rate: int) -> None:
    """An exact plan for 24000/44101 would need gigabytes; the ratio is approximated within 0.1 %."""
    from agent.audio.resample import _MAX_RATIO_TERMS, _ratio

    up, down = _ratio(rate, 24000)
    assert up * down <= _MAX_RATIO_TERMS
    assert abs(up / down / (24000 / rate) - 1) < 1e-3
    y = resample(np.zeros(rate, dtype=np.float32), rate, 24000)
    assert abs(y.size - 24000) <= 24


def test_ratios_over_64_are_refused() -> None:
    with pytest.raises(AudioFormatError):
        resample(np.zeros(10, dtype=np.float32), 1, 24000)
