"""A second opinion on voiced frames: a neural speech detector's verdict, kept in step with the first one's frames
(pure, stateful, one per connection).

The first detector (webrtcvad at its most sensitive) answers fast, which the onset of speech, a yield and a
barge-in need, but it calls a keyboard's clicks, a knock or a line's crackle voice, so a pause in noise never
stays silent long enough to end the turn (docs/benchmarks.md, "End of turn on recorded people"). Silero, trained
against such noise, does not. ``SpeechConfirmer`` feeds it the same audio in its own frame size (32 ms) and says,
for each of the first detector's frames, whether the latest of its frames heard speech; the turn detector asks it
only where a voiced frame would end a pause (``agent.core.turn_detector``, ``speech``).

Reason to change: how the second detector is fed and read.
"""

from __future__ import annotations

from agent.ports import SpeechDetector


class SpeechConfirmer:
    def __init__(self, detector: SpeechDetector, threshold: float = 0.5) -> None:
        self._detector = detector
        self._threshold = threshold
        self._bytes = detector.frame_samples * 2
        self._pending = bytearray()
        self._speech = False

    def hears(self, pcm: bytes) -> bool:
        """``pcm`` (16 kHz PCM16LE, the next frame of the first detector) is fed in; whether the second detector's
        latest complete frame, the one that ends closest to it, was speech."""
        self._pending += pcm
        while len(self._pending) >= self._bytes:
            frame = bytes(self._pending[: self._bytes])
            del self._pending[: self._bytes]
            self._speech = self._detector.speech_probability(frame) >= self._threshold
        return self._speech
