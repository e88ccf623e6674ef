"""Speech detection with the WebRTC VAD (``webrtcvad-wheels``): a few microseconds per 20 ms frame."""

from __future__ import annotations

import webrtcvad

from agent.errors import AudioFormatError, ConfigError

SAMPLE_RATE = 16000
FRAME_SAMPLES = 320  # 20 ms at 16 kHz


class WebRtcSpeechDetector:
    """``SpeechDetector`` over the WebRTC VAD: 20 ms frames (320 samples) of PCM16LE at 16 kHz.

    ``mode`` 0–3 is the aggressiveness (3 rejects the most non-speech). ``speech_probability`` returns
    exactly 1.0 or 0.0. Raises ``AudioFormatError`` for a frame that is not 640 bytes and ``ConfigError``
    for a mode outside 0–3. One instance per connection.
    """

    def __init__(self, mode: int = 3) -> None:
        if mode not in (0, 1, 2, 3):
            raise ConfigError(f"webrtc VAD mode must be 0, 1, 2 or 3, got {mode}")
        self._mode = mode
        self._vad = webrtcvad.Vad(mode)

    @property
    def frame_samples(self) -> int:
        """Samples per frame accepted by ``speech_probability`` (320)."""
        return FRAME_SAMPLES

    def speech_probability(self, frame: bytes) -> float:
        """1.0 if the 20 ms frame holds speech, else 0.0."""
        if len(frame) != 2 * FRAME_SAMPLES:
            raise AudioFormatError(
                f"webrtc VAD takes {2 * FRAME_SAMPLES}-byte frames (20 ms at 16 kHz), got {len(frame)} bytes"
            )
        return 1.0 if self._vad.is_speech(frame, SAMPLE_RATE) else 0.0

    def reset(self) -> None:
        """Start over, as if no frame had been seen."""
        self._vad = webrtcvad.Vad(self._mode)
