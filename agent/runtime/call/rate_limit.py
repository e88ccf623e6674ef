"""How fast a caller may send audio: a token bucket in audio milliseconds (pure; the clock is a parameter).

A caller streams audio in real time. A client that sends it much faster makes the server transcribe more
than it can hear, and every other caller waits behind those transcriptions. The bucket refills at
``max_rate`` × real time and holds ``max_rate × window_s`` of audio: a burst (a client catching up after a
stall, a short file sent at once) passes, a sustained rate above ``max_rate`` does not.

``admit`` answers for each frame: ``ADMIT``; ``DROP`` (over the limit, already reported); ``WARN`` (over
the limit: drop it and tell the client ``rate_limited``, at most once per ``window_s``); ``CLOSE`` (the
client has stayed over the limit: more than a whole bucket of audio was dropped, so it is not catching
up but flooding; close the session 1008).

One bucket per session takes every message that carries caller audio (``carried_audio_ms``): streamed PCM at
the wire's input rate of the moment (a client may switch formats), and whole utterances a client commits as
items (Realtime ``input_audio`` parts).
"""

from __future__ import annotations

from enum import Enum

from agent.core.events import CommitInput
from agent.runtime.call.caller_audio import DETECTOR_RATE


def carried_audio_ms(item: object, input_rate: int) -> float | None:
    """How much caller audio a decoded message carries, in ms: caller PCM16 at ``input_rate``, or an utterance a
    client commits whole (16 kHz); ``None`` for a message without audio."""
    if isinstance(item, bytes):
        return len(item) / (input_rate * 2 / 1000.0)
    if isinstance(item, CommitInput) and item.pcm is not None:
        return len(item.pcm) / (DETECTOR_RATE * 2 / 1000.0)
    return None


class Verdict(Enum):
    ADMIT = "admit"
    DROP = "drop"
    WARN = "warn"
    CLOSE = "close"


class InputRateLimiter:
    def __init__(self, max_rate: float = 1.5, window_s: float = 5.0) -> None:
        if max_rate <= 0 or window_s <= 0:
            raise ValueError("max_rate and window_s must be positive")
        self._rate = max_rate
        self._window_s = window_s
        self._capacity_ms = max_rate * window_s * 1000.0
        self._tokens_ms = self._capacity_ms
        self._at: float | None = None
        self._warned_at: float | None = None
        self._dropped_ms = 0.0

    @property
    def dropped_ms(self) -> float:
        """Audio dropped since the client was last under the limit."""
        return self._dropped_ms

    def admit(self, audio_ms: float, now: float) -> Verdict:
        """Whether a frame of ``audio_ms`` received at ``now`` (seconds, monotonic) may go to the session."""
        if self._at is not None:
            elapsed_ms = max(0.0, now - self._at) * 1000.0
            self._tokens_ms = min(self._capacity_ms, self._tokens_ms + elapsed_ms * self._rate)
        self._at = now
        if audio_ms <= self._tokens_ms:
            self._tokens_ms -= audio_ms
            if self._tokens_ms >= self._capacity_ms / 2:
                self._dropped_ms = 0.0  # well under the limit again: a later burst starts afresh
            return Verdict.ADMIT
        self._dropped_ms += audio_ms
        if self._dropped_ms > self._capacity_ms:
            return Verdict.CLOSE
        if self._warned_at is None or now - self._warned_at >= self._window_s:
            self._warned_at = now
            return Verdict.WARN
        return Verdict.DROP
