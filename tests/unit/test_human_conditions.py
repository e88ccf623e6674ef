"""Telephone conditions (bench/turns/human_conditions.py) on synthetic audio: the 8 kHz band leaves nothing above
4 kHz and keeps length and timing, μ-law's round trip stays within its quantisation bounds, noise mixes in at the
SNR asked (measured back within 0.5 dB), the same way on every build, and the labels never move."""

from __future__ import annotations

import numpy as np
import pytest

from bench.turns import human_conditions as hc
from bench.turns.human_labels import LabelledSilence
from bench.turns.human_turn import RATE, LabelledTurn

RNG = np.random.default_rng(7)


def band_power(audio: np.ndarray, low: float, high: float) -> float:
    spectrum = np.abs(np.fft.rfft(audio.astype(np.float64) * np.hanning(audio.size))) ** 2
    freqs = np.fft.rfftfreq(audio.size, 1 / RATE)
    return float(spectrum[(freqs >= low) & (freqs < high)].sum())


def sine(hz: float, seconds: float = 1.0, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def turn(audio: np.ndarray, turn_id: str = "ami/x/A/1") -> LabelledTurn:
    ms = audio.size / RATE * 1000
    silences = (LabelledSilence(400, 600, "hold", False), LabelledSilence(ms - 300, ms, "end", False))
    return LabelledTurn(turn_id, "ami", "A", "dev", audio, silences, None, 100.0, ms)


def test_the_telephone_band_removes_what_is_above_4_khz_and_keeps_what_is_below() -> None:
    noise = (0.1 * RNG.standard_normal(RATE)).astype(np.float32)
    narrow = hc.band_limit(noise)
    assert narrow.size == noise.size
    above = band_power(narrow, 4200, 8000) / band_power(noise, 4200, 8000)
    assert 10 * np.log10(above) < -50
    below = band_power(narrow, 300, 3400) / band_power(noise, 300, 3400)
    assert abs(10 * np.log10(below)) < 0.2
    tone = sine(1000)
    passed = hc.band_limit(tone)
    assert np.max(np.abs(passed[800:-800] - tone[800:-800])) < 0.01  # in time, not delayed: labels stay put


def test_a_mulaw_round_trip_errs_by_at_most_half_a_step_of_its_segment() -> None:
    top = 32124 / 32768  # the largest μ-law code: louder samples saturate there
    x = (np.arange(-32124, 32125) / 32768).astype(np.float32)  # every PCM16 value up to it
    y = hc.mulaw_round_trip(x)
    assert y.size == x.size
    # A segment's step is 1/16 of its span: the error is at most 1/32 of the magnitude, plus the bias's rounding.
    assert np.all(np.abs(y - x) <= np.abs(x) / 32 + 8 / 32768)
    assert np.array_equal(hc.mulaw_round_trip(np.array([0.99, -1.0], np.float32)), np.array([top, -top], np.float32))
    speech_like = sine(440, amplitude=0.1)
    error = hc.mulaw_round_trip(speech_like) - speech_like
    snr = 10 * np.log10(np.mean(speech_like.astype(np.float64) ** 2) / np.mean(error.astype(np.float64) ** 2))
    assert 35 < snr < 42  # G.711's quantisation SNR on a -20 dBFS tone (about 38 dB)


def test_the_telephone_path_is_the_band_and_mulaw_together() -> None:
    noise = (0.1 * RNG.standard_normal(RATE)).astype(np.float32)
    phone = hc.telephone(noise)
    assert phone.size == noise.size
    assert 10 * np.log10(band_power(phone, 4200, 8000) / band_power(noise, 4200, 8000)) < -35
    assert not np.array_equal(phone, hc.band_limit(noise))  # μ-law's quantisation is there too


@pytest.mark.parametrize("snr_db", [10.0, 14.3, 20.0])
def test_noise_mixes_in_at_the_snr_asked_measured_back_within_half_a_db(snr_db: float) -> None:
    speech = sine(300, 2.0, 0.2)
    mask = np.zeros(speech.size, dtype=bool)
    mask[4000:28000] = True
    speech[~mask] = 0.0
    noise = (0.05 * RNG.standard_normal(speech.size)).astype(np.float32)
    mixed = hc.mix(speech, noise, snr_db, mask)
    residue = mixed - speech * (mixed[mask] @ speech[mask]) / (speech[mask] @ speech[mask])
    measured = 10 * np.log10(hc.power(mixed - residue, mask) / hc.power(residue, mask))
    assert measured == pytest.approx(snr_db, abs=0.5)


def test_a_mix_that_would_clip_is_scaled_down_whole() -> None:
    speech = sine(300, 1.0, 0.98)
    mask = np.ones(speech.size, dtype=bool)
    noise = (0.3 * RNG.standard_normal(speech.size)).astype(np.float32)
    mixed = hc.mix(speech, noise, 10.0, mask)
    assert np.max(np.abs(mixed)) <= hc.CLIP + 1e-6
    with pytest.raises(ValueError, match="audible"):
        hc.mix(np.zeros(100, np.float32), noise[:100], 10.0, mask[:100])


def test_each_row_gets_its_own_noise_and_snr_the_same_on_every_build() -> None:
    choices = [hc.noise_choice(f"ami/x/A/{n}") for n in range(200)]
    assert choices == [hc.noise_choice(f"ami/x/A/{n}") for n in range(200)]
    assert {name for name, _, _ in choices} == set(hc.NOISES)
    assert all(10.0 <= snr <= 20.0 for _, snr, _ in choices)


def test_a_condition_keeps_the_rows_length_and_labels_and_says_what_it_mixed() -> None:
    row = turn(sine(300, 2.0, 0.05))
    noises = {name: (0.01 * RNG.standard_normal(RATE)).astype(np.float32) for name in hc.NOISES}
    for condition in hc.CONDITIONS:
        out = hc.apply(condition, row, noises)
        assert out.audio.size == row.audio.size and out.silences == row.silences
        assert out.condition == condition
        assert bool(out.noise) == ("noise" in condition)
    assert np.array_equal(hc.apply("clean", row, {}).audio, row.audio)
    assert np.array_equal(
        hc.apply("telephone+noise", row, noises).audio, hc.apply("telephone+noise", row, noises).audio
    )
    with pytest.raises(ValueError, match="unknown condition"):
        hc.apply("underwater", row, noises)


def test_an_8_khz_copy_of_the_same_recording_agrees_and_a_shifted_one_does_not() -> None:
    wide = (0.1 * RNG.standard_normal(RATE)).astype(np.float32)
    from agent.audio.resample import resample

    narrow = resample(wide, RATE, 8000)
    assert hc.agreement_db(wide, narrow) > 60
    assert hc.agreement_db(wide, np.roll(narrow, 1)) < 10
