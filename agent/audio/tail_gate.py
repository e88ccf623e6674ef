"""Take back "voiced" verdicts on the quiet tail of speech (pure, one per connection).

Voice detectors keep flagging the fading end of the last word, and breath after it, as speech: webrtcvad
does so for about 100–125 ms, and the end of turn can only be counted from the last voiced frame. The
speaker's own level says better where the words stopped: ``TailGate`` follows the level of the voiced
frames (a peak that decays slowly in time, so one loud syllable does not mute a sentence) and takes back a
voiced verdict on a frame more than ``floor_db`` below it. Frames the detector calls unvoiced stay so.
``floor_db`` 0 turns it off.
"""

from __future__ import annotations

from agent.audio.pcm import rms_dbfs

_QUIETEST_DB = -90.0


class TailGate:
    def __init__(self, floor_db: float, decay_db_per_s: float = 6.0) -> None:
        self._floor_db = floor_db
        self._decay_db_per_ms = decay_db_per_s / 1000.0
        self._peak_db = _QUIETEST_DB

    def voiced(self, pcm: bytes, voiced: bool, duration_ms: int) -> bool:
        """The verdict on ``pcm`` (``duration_ms`` long) that the detector called ``voiced``."""
        if not self._floor_db:
            return voiced
        self._peak_db = max(_QUIETEST_DB, self._peak_db - self._decay_db_per_ms * duration_ms)
        if not voiced:
            return False
        level = rms_dbfs(pcm)
        self._peak_db = max(self._peak_db, level)
        return level >= self._peak_db - self._floor_db
