"""Telephone conditions for any set's rows (pure functions of 16 kHz float32 audio): changes only with how a
condition changes the audio. The labels never move: every condition keeps the audio's length and timing.

- ``band8k``: down to 8 kHz and back up with the server's own resampler (``agent.audio.resample``, zero-phase,
  at least 60 dB down from 4 kHz): what the telephone band leaves.
- ``mulaw``: a G.711 μ-law round trip (``agent.audio.mulaw``, bit-exact with the ITU-T reference) at the
  audio's own rate: its quantisation alone (about 38 dB SNR on speech).
- ``telephone``: both, as a phone call carries it: down to 8 kHz, μ-law, back to 8 kHz PCM, up to 16 kHz.
- ``noise``: a real background recording (``livekit-agents``' ambience and typing; ``NOISES``) mixed in at an SNR
  of 10 to 20 dB over the row's speech; which recording, where in it and which SNR follow from the row's id
  (seeded: every build makes the same audio). Scaled down together, never clipped.
- ``telephone+noise``: the noise in the caller's room, then the telephone path.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from agent.audio import mulaw
from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from bench.turns.human_turn import RATE, Audio, LabelledTurn, looped

NARROW = 8000
CONDITIONS = ("clean", "band8k", "mulaw", "telephone", "noise", "telephone+noise")
NOISES = (
    "office-ambience",
    "crowded-room",
    "city-ambience",
    "forest-ambience",
    "keyboard-typing",
    "keyboard-typing2",
)
"""The background recordings mixed in (``livekit/agents/resources/<name>.ogg``; ``hold_music`` is not noise)."""
SNR_DB = (10.0, 20.0)
CLIP = 0.99


def band_limit(audio: Audio, rate: int = RATE) -> Audio:
    """``audio`` through the telephone band: resampled to 8 kHz and back (same length, same timing)."""
    narrow = resample(audio, rate, NARROW)
    return _fit(resample(narrow, NARROW, rate), audio.size)


def mulaw_round_trip(audio: Audio) -> Audio:
    """``audio`` encoded to G.711 μ-law and decoded (via PCM16, as a phone gateway does)."""
    return pcm16_to_float(mulaw.decode(mulaw.encode(float_to_pcm16(audio))))


def telephone(audio: Audio, rate: int = RATE) -> Audio:
    """``audio`` as a phone call carries it: 8 kHz, μ-law there and back, then up to ``rate``."""
    narrow = mulaw_round_trip(resample(audio, rate, NARROW))
    return _fit(resample(narrow, NARROW, rate), audio.size)


def agreement_db(wide: Audio, narrow: Audio, rate: int = RATE) -> float:
    """How closely ``wide`` (at ``rate``) brought down to 8 kHz matches ``narrow`` (an 8 kHz copy of the same
    recording): the SNR in dB of ``narrow`` against its difference from ours (best gain, no shift)."""
    ours = resample(wide, rate, NARROW).astype(np.float64)
    theirs = narrow.astype(np.float64)
    n = min(ours.size, theirs.size)
    ours, theirs = ours[:n], theirs[:n]
    gain = float(np.dot(ours, theirs) / max(float(np.dot(ours, ours)), 1e-30))
    error = float(np.sum((theirs - gain * ours) ** 2))
    return float(10 * np.log10(float(np.sum(theirs * theirs)) / max(error, 1e-30)))


def _fit(audio: Audio, size: int) -> Audio:
    if audio.size >= size:
        return audio[:size]
    return np.concatenate([audio, np.zeros(size - audio.size, np.float32)])


def power(audio: npt.NDArray[np.floating], mask: npt.NDArray[np.bool_] | None = None) -> float:
    """Mean square of ``audio`` (under ``mask``)."""
    part = (audio if mask is None else audio[mask]).astype(np.float64)
    return float(np.mean(part * part)) if part.size else 0.0


def mix(speech: Audio, noise: Audio, snr_db: float, mask: npt.NDArray[np.bool_]) -> Audio:
    """``speech`` plus ``noise`` (as long) scaled so that their powers under ``mask`` (the speech) are ``snr_db``
    apart; both scaled down together when the sum would pass ``CLIP``. Raises ``ValueError`` for silent speech or
    noise under the mask."""
    signal, background = power(speech, mask), power(noise, mask)
    if signal <= 0 or background <= 0:
        raise ValueError("speech and noise must both be audible under the mask to mix at an SNR")
    gain = float(np.sqrt(signal / background / 10 ** (snr_db / 10)))
    out = speech.astype(np.float64) + gain * noise.astype(np.float64)
    peak = float(np.max(np.abs(out)))
    return (out * (CLIP / peak if peak > CLIP else 1.0)).astype(np.float32)


def noise_choice(turn_id: str, names: tuple[str, ...] = NOISES) -> tuple[str, float, int]:
    """The background recording, the SNR (dB, 0.1 dB steps in ``SNR_DB``) and the seed of the starting point for
    the row ``turn_id``: the same on every build."""
    rng = np.random.default_rng(zlib.crc32(f"{turn_id}/noise".encode()))
    name = names[int(rng.integers(len(names)))]
    snr = round(float(rng.uniform(*SNR_DB)), 1)
    return name, snr, int(rng.integers(1 << 30))


def with_noise(turn: LabelledTurn, noises: Mapping[str, Audio]) -> tuple[LabelledTurn, str]:
    """``turn`` with its background recording mixed in (``noise_choice``); and what was mixed ("office-ambience
    14.2 dB"). ``noises``: name -> 16 kHz mono float32 recording."""
    name, snr, start = noise_choice(turn.id, tuple(n for n in NOISES if n in noises))
    noise = looped(noises[name], turn.audio.size, start)
    return replace(turn, audio=mix(turn.audio, noise, snr, turn.speech_mask())), f"{name} {snr:g} dB"


def apply(condition: str, turn: LabelledTurn, noises: Mapping[str, Audio]) -> LabelledTurn:
    """``turn`` under ``condition`` (one of ``CONDITIONS``; ``noises`` for the noisy ones). Raises ``ValueError``
    for another condition."""
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r}: the conditions are {', '.join(CONDITIONS)}")
    out = turn
    if "noise" in condition:
        out, mixed = with_noise(out, noises)
        out = replace(out, noise=mixed)
    if condition == "band8k":
        out = replace(out, audio=band_limit(out.audio))
    elif condition == "mulaw":
        out = replace(out, audio=mulaw_round_trip(out.audio))
    elif condition.startswith("telephone"):
        out = replace(out, audio=telephone(out.audio))
    return replace(out, condition=condition)
