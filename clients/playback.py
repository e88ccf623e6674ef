"""Reply playback on the caller's side: the live client's jitter buffer (``clients/mic.py``), kept apart from the
sound device so that it can be tested without one.

The buffer holds the reply audio of the latest ``audio.start`` turn and knows where that turn's playback is on
its timeline (milliseconds of the turn's reply audio, from its first frame), which is what ``playback.mark``
reports. With the ``playback.pause`` capability the server may pause a turn: the buffer is dropped at once and
the position becomes the server's ``played_ms``; the audio frames that follow (a resume) continue the turn from
there, so later marks count on from ``played_ms``. ``playback.clear`` (barge-in) drops the buffer for good.
"""

from __future__ import annotations

import threading
from typing import Any

CAPABILITIES: tuple[str, ...] = ("playback.pause",)
"""What the clients that play the reply list in ``session.start``'s ``capabilities``."""


class PlaybackBuffer:
    """PCM16 mono reply audio waiting for the output device, and the current turn's played position.

    Thread-safe: the device callback calls ``read`` from its own thread while the receiver pushes audio and
    applies the server's messages.
    """

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self._lock = threading.Lock()
        self._buf = bytearray()
        self._turn: int | None = None
        self._played = 0  # bytes of the turn's timeline played
        self._paused = False

    @property
    def turn(self) -> int | None:
        """The latest ``audio.start`` turn (``None`` before the first)."""
        return self._turn

    @property
    def paused(self) -> bool:
        """The turn was paused and no audio has come since."""
        return self._paused

    @property
    def buffered_ms(self) -> float:
        return len(self._buf) / 2 / self.rate * 1000

    def position_ms(self) -> float:
        """Where the turn's playback is on its timeline (what ``playback.mark`` reports)."""
        return self._played / 2 / self.rate * 1000

    def start_turn(self, turn: int) -> None:
        """``audio.start``: a new turn at position 0; what was left of the previous turn is dropped."""
        with self._lock:
            self._buf.clear()
            self._turn, self._played, self._paused = turn, 0, False

    def push(self, pcm: bytes) -> bool:
        """Queue reply audio of the current turn; ``True`` when it resumes a paused turn."""
        with self._lock:
            if self._turn is None:
                return False  # no audio.start yet: nothing to attach it to
            resumed, self._paused = self._paused, False
            self._buf += pcm
            return resumed

    def read(self, nbytes: int) -> bytes:
        """Take up to ``nbytes`` for the output device (fewer when the buffer runs short); advances the position."""
        with self._lock:
            chunk = bytes(self._buf[:nbytes])
            del self._buf[:nbytes]
            self._played += len(chunk)
            return chunk

    def pause(self, turn: int, played_ms: float) -> bool:
        """``playback.pause``: stop at once, drop the buffer, and put the turn at ``played_ms``.

        ``False`` (and nothing changes) when ``turn`` is not the current turn."""
        with self._lock:
            if turn != self._turn:
                return False
            self._buf.clear()
            self._played = 2 * round(max(0.0, played_ms) * self.rate / 1000)
            self._paused = True
            return True

    def clear(self) -> None:
        """``playback.clear``: stop at once and drop everything buffered; the position stays where it was."""
        with self._lock:
            self._buf.clear()
            self._paused = False

    def mark(self) -> dict[str, Any] | None:
        """The ``playback.mark`` to send now (``None`` before the first turn)."""
        with self._lock:
            if self._turn is None:
                return None
            return {"type": "playback.mark", "turn": self._turn, "played_ms": round(self.position_ms())}
