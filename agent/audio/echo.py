"""Caller audio that is only the agent's own voice coming back (pure, one per connection).

A caller on a speakerphone (a phone call has no echo canceller on the caller's side) feeds the agent's reply
back into the microphone: a copy of what the server sent, late by the network both ways and the phone's
buffers, coloured and smeared by the room, some 10 to 25 dB down. The server knows what it sent
(``agent.audio.playout`` keeps it, in step with the caller's audio), so ``EchoGate`` compares the two and tells,
frame by frame, whether the caller's audio holds more than that echo. ``CallerAudio`` takes back the speech
detector's "voiced" on frames that hold only echo: the agent does not interrupt itself, and its own words never
become a caller's utterance. A caller talking over the echo is louder than it in some bands, and stays voiced.

How, every 10 ms (20 ms Hann windows at 16 kHz, 18 bands from 150 Hz to 3.9 kHz, all a phone line carries):

- **The reference's envelope**: the band powers of what was played, held with a decay of ``decay_db_per_s``
  (the room's reverberation keeps an echo sounding after the reference stopped).
- **The echo path**: every ``estimate_ms`` while the reference sounds (4 times less often once known), the
  delay (0 to ``max_delay_ms``) at which the caller's log band powers over the last ``window_ms`` correlate
  best with the reference's, once ``evidence_ms`` of reference sounded in it (shorter spans match by chance).
  A peak of at least ``lock_correlation`` fixes the delay, and each band's gain is the ``gain_quantile`` of
  caller / reference power over the 10 ms steps where the reference sounds and the caller was not judged to be
  speaking (so talking over the agent does not raise it). For the first ``settle_ms`` of reply after the lock a
  band's gain is at least the quantile of all bands together: a band's few ratios may not hold its loudest echo
  yet (one rendering in ~300 of the test reply let a long vowel through a second after the lock).
- **The verdict**: the echo expected now is the gain times the reference's envelope at that delay
  (± ``tolerance_ms``). Power beyond ``margin_db`` over the expected echo and the background noise is the
  caller's own; a frame holds only echo when that is under ``voice_share`` of its power and the expected echo
  explains at least that share.

Before the path is known (the first ``evidence_ms`` of reply in a call) the echo is bounded by ``prior_gain_db``
× the loudest reference anywhere in the delay range (-9 dB, plus ``margin_db``: 6 dB under the reply's loudest
sound of the last half second, in each band), so talking over the first reply's first second takes a voice
within 6 dB of the reply's peaks. An echo of -10 dB sits far under that bound (its loudness follows the reply's
from moment to moment; the bound holds the peaks): none of 1152 test scenes, -10 to -25 dB, 30-400 ms, wideband
and over a phone line, made an onset, nor with the bound at -15 dB. After ``learn_ms`` of reference without a
correlation peak the call has no echo (headphones, a browser's echo canceller) and nothing is taken back; a later
peak (the caller switched to the speaker) turns it on again, and ``release_ms`` of reference without one turns it
off.

Cost: about 0.15 ms of CPU per 20 ms frame with the playout (``bench/echo.py``); no dependency beyond numpy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from agent.audio.pcm import pcm16_to_float

Array = npt.NDArray[np.float64]

RATE = 16000
HOP = 160  # 10 ms
_WINDOW = 2 * HOP
_HANN = np.hanning(_WINDOW + 2)[1:-1]


def _band_table() -> Array:
    """[bins, bands]: which bins of a 20 ms spectrum (50 Hz apart) make each of 18 bands, 150 Hz to 3.9 kHz."""
    edges = np.round(np.geomspace(150.0, 3900.0, 19) / (RATE / _WINDOW)).astype(int)
    table = np.zeros((_WINDOW // 2 + 1, edges.size - 1))
    for band, (low, high) in enumerate(itertools.pairwise(edges)):
        table[low : max(high, low + 1), band] = 1.0
    return table


_BANDS = _band_table()
BANDS = _BANDS.shape[1]

_LOG_FLOOR = 1e-3  # band power ~60 dB below speech at -20 dBFS: quieter sounds do not steer the delay search
_SOUNDING = 10 ** (-50 / 10)  # mean square of a reference step that counts as sounding (-50 dBFS)
_TINY = 1e-12
_NOISE_RISE = 10 ** (1.0 / 10 / 100)  # the background estimate creeps up 1 dB/s, and drops at once
_NOISE_MARGIN = 4.0  # 6 dB over the background is more than background


@dataclass(frozen=True, slots=True)
class EchoPolicy:
    max_delay_ms: int = 500
    tolerance_ms: int = 20
    window_ms: int = 2000
    estimate_ms: int = 100
    evidence_ms: int = 1000
    """Reference heard within ``window_ms`` before a correlation counts (shorter spans match by chance)."""
    lock_correlation: float = 0.6
    gain_quantile: float = 0.9
    margin_db: float = 3.0
    voice_share: float = 0.3
    decay_db_per_s: float = 150.0
    prior_gain_db: float = -9.0
    learn_ms: int = 2500
    release_ms: int = 4000
    settle_ms: int = 1500
    """Reference heard after the first lock before the path counts as known: the gain per band is still being
    learned, and a short leak of echo (60 ms, seen over real sockets) would otherwise pass for the caller."""
    """Reference heard with no correlation peak before a found path is given up (the caller left the speaker)."""


@dataclass(frozen=True, slots=True)
class EchoPath:
    """What the gate knows of the echo: ``state`` learning (bound by the prior), locked, or absent."""

    state: str
    delay_ms: int | None
    gain_db: float | None
    correlation: float


class EchoGate:
    """Feed it the caller's frames and the reference of the same span, in step; it answers for each frame."""

    def __init__(self, policy: EchoPolicy | None = None) -> None:
        p = self._policy = policy if policy is not None else EchoPolicy()
        self._delays = p.max_delay_ms // 10  # largest delay, in 10 ms steps
        self._tol = p.tolerance_ms // 10
        self._window = p.window_ms // 10
        self._evidence = p.evidence_ms // 10
        self._keep = self._window + self._delays + 2 * self._tol + 2
        capacity = 4 * self._keep
        self._near = np.zeros((capacity, BANDS))  # caller's band powers, one row per 10 ms step
        self._far = np.zeros((capacity, BANDS))  # reference's band powers
        self._env = np.zeros((capacity, BANDS))  # reference's envelope (held, decaying)
        self._sounding = np.zeros(capacity, dtype=bool)  # the reference sounded in that step
        self._voice = np.zeros(capacity, dtype=bool)  # the caller's own voice was found in that step
        self._n = 0
        self._decay = 10 ** (-p.decay_db_per_s / 100 / 10)
        self._margin = 10 ** (p.margin_db / 10)
        self._prior = 10 ** (p.prior_gain_db / 10)
        self._near_rest = np.zeros(0)
        self._far_rest = np.zeros(0)
        self._near_prev = np.zeros(HOP)
        self._far_prev = np.zeros(HOP)
        self._noise: Array | None = None
        self._gain = np.full(BANDS, self._prior)
        self._delay: int | None = None
        self._absent = False
        self._heard = 0  # steps of reference sounding while learning
        self._settled = 0  # steps of reference sounding since the first lock
        self._unmatched = 0  # steps of reference sounding since the last correlation peak
        self._since_estimate = 0
        self._correlation = 0.0
        self._last = True

    @property
    def settling(self) -> bool:
        """The echo's path was found moments ago and the gain per band is still being learned (``settle_ms``): a
        voiced frame may be a leak of the echo. Before the lock a frame the gate calls voiced is beyond the
        prior's bound (within 6 dB of the loudest reply sound in the delay range, far above any echo), and once
        settled the learned gain bounds the echo: in both cases a voiced frame is the caller's."""
        return not self._absent and self._delay is not None and self._settled * 10 < self._policy.settle_ms

    @property
    def path(self) -> EchoPath:
        if self._absent:
            return EchoPath("absent", None, None, self._correlation)
        if self._delay is None:
            return EchoPath("learning", None, None, self._correlation)
        gain = 10 * float(np.log10(np.median(self._gain) + _TINY))
        return EchoPath("locked", self._delay * 10, gain, self._correlation)

    def voice(self, near: bytes, far: bytes) -> bool:
        """Whether ``near`` (caller PCM16 at 16 kHz) holds more than the echo of ``far`` (the reference of the
        same span, the same length). ``True`` where there is nothing to explain it (no reference)."""
        if len(near) != len(far):
            raise ValueError(f"near and far frames differ: {len(near)} and {len(far)} bytes")
        x = np.concatenate([self._near_rest, pcm16_to_float(near)])
        y = np.concatenate([self._far_rest, pcm16_to_float(far)])
        steps = x.size // HOP
        if steps == 0:
            self._near_rest, self._far_rest = x, y
            return self._last
        used = steps * HOP
        near_bands = self._band_powers(np.concatenate([self._near_prev, x[:used]]), steps)
        far_blocks = np.concatenate([self._far_prev, y[:used]])
        far_bands = self._band_powers(far_blocks, steps)
        far_ms = np.mean(np.square(far_blocks[HOP:].reshape(steps, HOP)), axis=1)
        self._near_prev, self._far_prev = x[used - HOP : used], y[used - HOP : used]
        self._near_rest, self._far_rest = x[used:], y[used:]
        residual = total = explained = 0.0
        for i in range(steps):
            r, e, t = self._step(near_bands[i], far_bands[i], bool(far_ms[i] >= _SOUNDING))
            residual, explained, total = residual + r, explained + e, total + t
        share = self._policy.voice_share * total
        self._last = not (residual < share and explained >= share)
        return self._last

    # ------------------------------------------------------------------------------------------ steps

    @staticmethod
    def _band_powers(samples: Array, steps: int) -> Array:
        rows = samples.reshape(steps + 1, HOP)
        windows = np.concatenate([rows[:-1], rows[1:]], axis=1) * _HANN
        spectrum = np.fft.rfft(windows, axis=1)
        power: Array = (spectrum.real**2 + spectrum.imag**2) @ _BANDS
        return power

    def _step(self, near: Array, far: Array, sounding: bool) -> tuple[float, float, float]:
        """One 10 ms step: record it, and return (the caller's own power, the echo's, the total)."""
        if self._n == self._near.shape[0]:
            keep = self._keep
            for rows in (self._near, self._far, self._env, self._sounding, self._voice):
                rows[:keep] = rows[self._n - keep : self._n]
            self._n = keep
        n = self._n
        env = np.maximum(far, self._env[n - 1] * self._decay) if n else far
        self._near[n], self._far[n], self._env[n], self._sounding[n] = near, far, env, sounding
        self._n = n + 1
        noise = self._noise = near.copy() if self._noise is None else np.minimum(self._noise * _NOISE_RISE, near)
        echo = self._expected_echo()
        residual = float(np.sum(np.maximum(near - self._margin * echo - _NOISE_MARGIN * noise, 0.0)))
        explained = float(np.sum(np.minimum(near, self._margin * echo)))
        total = float(np.sum(near))
        self._voice[n] = residual >= self._policy.voice_share * total
        if sounding:
            self._heard += 1
            self._unmatched += 1
            if self._delay is not None:
                self._settled += 1
        self._since_estimate += 1
        every = self._policy.estimate_ms * (1 if self._delay is None and not self._absent else 4)
        if self._since_estimate * 10 >= every and sounding:
            self._since_estimate = 0
            self._estimate()
        return residual, explained, total

    def _expected_echo(self) -> Array:
        """The echo's band powers expected in the step just recorded."""
        n = self._n
        if self._absent:
            return np.zeros(BANDS)
        if self._delay is None:  # anywhere in the delay range, at the prior's gain
            start = max(0, n - 1 - self._delays - self._tol)
            bound: Array = self._prior * self._env[start:n].max(axis=0)
            return bound
        centre = n - 1 - self._delay
        start, end = max(0, centre - self._tol), min(n, max(0, centre + self._tol + 1))
        if end <= start:
            return np.zeros(BANDS)
        held: Array = self._gain * self._env[start:end].max(axis=0)
        return held

    # ------------------------------------------------------------------------------------ the echo path

    def _estimate(self) -> None:
        """Look for the delay of the echo in the last ``window_ms``; lock on to it, or learn that there is none."""
        n, delays, tol = self._n, self._delays, self._tol
        width = min(self._window, n - delays - tol - 1)
        if width <= 0 or np.count_nonzero(self._sounding[n - width : n]) < self._evidence:
            return
        near = np.log10(self._near[n - width : n] + _LOG_FLOOR)
        far = np.log10(self._far[n - width - delays : n] + _LOG_FLOOR)
        near -= near.mean(axis=0)
        shifted = sliding_window_view(far, width, axis=0)  # [delays + 1, bands, width]; index j = delay - j
        shifted = shifted - shifted.mean(axis=2, keepdims=True)
        products = np.einsum("wb,jbw->j", near, shifted)
        norms = np.sqrt(np.sum(near * near) * np.einsum("jbw,jbw->j", shifted, shifted)) + _TINY
        correlation = products / norms
        best = int(np.argmax(correlation))
        self._correlation = float(correlation[best])
        p = self._policy
        if self._correlation >= p.lock_correlation:
            self._delay = delays - best
            self._absent = False
            self._unmatched = 0
            self._learn_gain(width)
        elif self._delay is None and not self._absent and self._heard * 10 >= p.learn_ms:
            self._absent = True
        elif self._delay is not None and self._unmatched * 10 >= p.release_ms:
            self._delay, self._absent = None, True

    def _learn_gain(self, width: int) -> None:
        """Each band's echo gain: a high quantile of caller / reference envelope where only the echo sounds."""
        n, delay, tol = self._n, self._delay, self._tol
        assert delay is not None
        env = self._env[n - width - delay - tol : min(n, n - delay + tol)]
        env = np.concatenate([env, np.zeros((width + 2 * tol - env.shape[0], BANDS))])  # no future: none yet
        held = sliding_window_view(env, 2 * tol + 1, axis=0).max(axis=2)  # [width, bands]
        rows = slice(n - width, n)
        useful = self._sounding[rows] & ~self._voice[rows]
        useful[1:] &= ~self._voice[n - width : n - 1]  # and not just after the caller's voice
        near = self._near[rows][useful]
        held = held[useful]
        if near.shape[0] < 20:
            return
        loud = held > held.max(axis=0) * 1e-3
        ratio = np.where(loud, near / (held + _TINY), -np.inf)
        counts = np.count_nonzero(loud, axis=0)
        if not counts.any():
            return
        q = self._policy.gain_quantile
        overall = float(np.quantile(ratio[loud], q))
        ranked = np.sort(ratio, axis=0)  # each band's useful ratios last, ascending
        at = ranked.shape[0] - counts + np.floor(q * np.maximum(counts - 1, 0)).astype(int)
        per_band = np.take_along_axis(ranked, np.minimum(at, ranked.shape[0] - 1)[None, :], axis=0)[0]
        gain = np.where(counts >= 20, per_band, overall)
        if self._settled * 10 < self._policy.settle_ms:  # a band's few ratios may not hold its loudest echo yet
            gain = np.maximum(gain, overall)
        self._gain = gain
