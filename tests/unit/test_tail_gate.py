"""The tail gate: voiced verdicts far below the speaker's own level are taken back (pure)."""

from __future__ import annotations

import numpy as np

from agent.audio.tail_gate import TailGate


def tone(dbfs: float) -> bytes:
    """20 ms of a 200 Hz sine at ``dbfs`` RMS (16 kHz PCM16LE)."""
    t = np.arange(320) / 16000
    amplitude = 10 ** (dbfs / 20) * np.sqrt(2)
    return bytes((amplitude * np.sin(2 * np.pi * 200 * t) * 32767).astype("<i2").tobytes())


def test_off_keeps_every_verdict() -> None:
    gate = TailGate(0.0)
    assert gate.voiced(tone(-10), True, 20) and gate.voiced(tone(-70), True, 20)
    assert not gate.voiced(tone(-10), False, 20)


def test_the_quiet_tail_after_loud_speech_is_not_speech() -> None:
    gate = TailGate(25.0)
    assert gate.voiced(tone(-12), True, 20)
    assert gate.voiced(tone(-30), True, 20)  # 18 dB down: still the word
    assert not gate.voiced(tone(-45), True, 20)  # 33 dB down: the fading tail
    assert not gate.voiced(tone(-12), False, 20)  # the detector's "unvoiced" is never overturned


def test_the_reference_level_decays_so_a_quieter_next_utterance_counts() -> None:
    gate = TailGate(25.0, decay_db_per_s=6.0)
    gate.voiced(tone(-10), True, 20)
    assert not gate.voiced(tone(-40), True, 20)
    for _ in range(150):  # 3 s of silence: the reference falls 18 dB
        gate.voiced(bytes(640), False, 20)
    assert gate.voiced(tone(-40), True, 20)


def test_audible_follows_the_level_of_the_words_not_the_detector_alone() -> None:
    gate = TailGate(30.0)
    for _ in range(10):  # the line's noise, 60 dB down
        gate.voiced(tone(-60), False, 20)
    gate.voiced(tone(-12), True, 20)
    assert gate.audible
    assert gate.voiced(tone(-40), True, 20) and gate.audible  # 28 dB down: still the word, and heard
    assert not gate.voiced(tone(-56), True, 20)  # the fading tail: taken back ...
    assert not gate.audible  # ... and not heard apart from the noise (4 dB above it)
    gate.voiced(tone(-12), False, 20)
    assert not gate.audible  # what the detector calls unvoiced is never audible


def test_audible_needs_the_voice_above_the_noise_even_with_the_gate_off() -> None:
    gate = TailGate(0.0)
    for _ in range(10):
        gate.voiced(tone(-45), False, 20)  # a noisy line
    assert gate.voiced(tone(-20), True, 20) and gate.audible
    assert gate.voiced(tone(-42), True, 20)  # the gate is off: the detector's verdict stands ...
    assert not gate.audible  # ... but 3 dB above the noise is not heard as words


def test_over_noise_takes_back_voice_the_line_s_noise_would_hide() -> None:
    gate = TailGate(30.0, over_noise_db=6.0)
    for _ in range(10):
        gate.voiced(tone(-45), False, 20)  # a noisy line
    assert gate.voiced(tone(-20), True, 20)
    assert not gate.voiced(tone(-42), True, 20)  # 3 dB above the noise: the tail, taken back
    assert TailGate(30.0).voiced(tone(-20), True, 20)
