"""The caller's audio a client commits itself: the manual-commit buffer (Realtime ``turn_detection: null``).

One reason to change: how audio waits for the client's commit. With turn detection off the session finds no
utterances; the caller's audio gathers here (16 kHz PCM16, at most the policy's longest utterance) until the
client commits it (``CommitInput``), which makes it a turn of its own, or clears it (``ClearInput``). A commit
of less than ``MIN_COMMIT_MS`` is refused and the buffer kept. Pure: no I/O, no clock.
"""

from __future__ import annotations

MIN_COMMIT_MS = 100
"""The least audio a commit may hold (what OpenAI's Realtime API asks for too)."""

_BYTES_PER_MS = 32
"""16 kHz PCM16: 16 samples of 2 bytes per millisecond."""


class InputBuffer:
    """The audio since the last commit."""

    def __init__(self) -> None:
        self._pcm = bytearray()

    def add(self, pcm: bytes, max_ms: int) -> None:
        """More of the caller's audio; once ``max_ms`` is held, the rest is dropped until a commit or a clear."""
        if len(self._pcm) < max_ms * _BYTES_PER_MS:
            self._pcm.extend(pcm)

    def clear(self) -> None:
        self._pcm.clear()

    def take(self, audio: bytes | None) -> bytes | None:
        """The audio of a commit: ``audio`` when the client sent it with the commit (the buffer is left as it
        is), else everything held (the buffer is emptied). ``None``: shorter than ``MIN_COMMIT_MS``, refused."""
        pcm = bytes(self._pcm) if audio is None else audio
        if duration_ms(pcm) < MIN_COMMIT_MS:
            return None
        if audio is None:
            self._pcm.clear()
        return pcm


def duration_ms(pcm: bytes) -> int:
    """Whole milliseconds of 16 kHz PCM16 in ``pcm``."""
    return len(pcm) // _BYTES_PER_MS
