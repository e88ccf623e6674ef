"""Caller audio → 16 kHz detector frames with a speech verdict (pure, stateful, one per connection)."""

from __future__ import annotations

from agent.audio.pcm import Framer, float_to_pcm16, pcm16_to_float
from agent.audio.resample import StreamResampler
from agent.core.events import AudioFrame
from agent.ports import SpeechDetector

DETECTOR_RATE = 16000


class CallerAudio:
    """Resamples PCM16 at ``sample_rate`` to 16 kHz, cuts detector-sized frames and labels each one."""

    def __init__(self, sample_rate: int, detector: SpeechDetector, threshold: float = 0.5) -> None:
        self._resampler = StreamResampler(sample_rate, DETECTOR_RATE) if sample_rate != DETECTOR_RATE else None
        self._detector = detector
        self._threshold = threshold
        self._framer = Framer(detector.frame_samples * 2)
        self._frame_ms = detector.frame_samples * 1000 // DETECTOR_RATE

    def push(self, pcm: bytes) -> list[AudioFrame]:
        if self._resampler is not None:
            pcm = float_to_pcm16(self._resampler.process(pcm16_to_float(pcm)))
        return [
            AudioFrame(
                pcm=frame,
                voiced=self._detector.speech_probability(frame) >= self._threshold,
                duration_ms=self._frame_ms,
            )
            for frame in self._framer.push(pcm)
        ]
