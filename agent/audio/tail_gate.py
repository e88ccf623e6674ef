"""Take back "voiced" verdicts on the quiet tail of speech (pure, one per connection).

Voice detectors keep flagging the fading end of the last word, and breath after it, as speech: webrtcvad
does so for about 100–125 ms, and the end of turn can only be counted from the last voiced frame. The
speaker's own level says better where the words stopped: ``TailGate`` follows the level of the voiced
frames (a peak that decays slowly in time, so one loud syllable does not mute a sentence) and takes back a
voiced verdict on a frame more than ``floor_db`` below it. Frames the detector calls unvoiced stay so.
``floor_db`` 0 turns it off.

It also says whether each frame is **audible** (``TailGate.audible``): voiced, within ``AUDIBLE_DB`` of that
level and ``AUDIBLE_OVER_NOISE_DB`` above the line's noise (the quietest recent frames, followed as they rise
slowly). The end of the last audible frame is where a caller hears their own words stop; what the detector
still calls voice after it is the tail the end of turn waits on, which the caller never hears
(``TurnMetrics.tail_ms``).
"""

from __future__ import annotations

from agent.audio.pcm import rms_dbfs

_QUIETEST_DB = -90.0
AUDIBLE_DB = 40.0
"""A voiced frame this far below the speaker's level is the word's fading end, not heard as the word."""
AUDIBLE_OVER_NOISE_DB = 6.0
"""A voiced frame less than this above the line's noise is not heard apart from it."""
NOISE_RISE_DB_PER_S = 3.0
"""How fast the noise estimate follows the line up (it follows it down at once)."""


class TailGate:
    def __init__(self, floor_db: float, decay_db_per_s: float = 6.0, over_noise_db: float = 0.0) -> None:
        """``over_noise_db`` (0: off): a voiced frame less than that above the line's noise is taken back too
        (what a noisy line's tail, or its noise, costs the end of turn: ``TurnMetrics.tail_ms``)."""
        self._floor_db = floor_db
        self._over_noise_db = over_noise_db
        self._decay_db_per_ms = decay_db_per_s / 1000.0
        self._peak_db = _QUIETEST_DB
        self._noise_db: float | None = None
        self.audible = False
        """The last frame judged was voiced and heard as such (see the module's docstring)."""

    def voiced(self, pcm: bytes, voiced: bool, duration_ms: int) -> bool:
        """The verdict on ``pcm`` (``duration_ms`` long) that the detector called ``voiced``."""
        level = rms_dbfs(pcm)
        rise = NOISE_RISE_DB_PER_S * duration_ms / 1000.0
        self._noise_db = level if self._noise_db is None else min(level, self._noise_db + rise)
        self._peak_db = max(_QUIETEST_DB, self._peak_db - self._decay_db_per_ms * duration_ms)
        if voiced:
            self._peak_db = max(self._peak_db, level)
        self.audible = voiced and level >= max(self._peak_db - AUDIBLE_DB, self._noise_db + AUDIBLE_OVER_NOISE_DB)
        if not voiced:
            return False
        if self._over_noise_db and level < self._noise_db + self._over_noise_db:
            return False
        return not self._floor_db or level >= self._peak_db - self._floor_db
