"""Caller audio → 16 kHz detector frames with a speech verdict (pure, stateful, one per connection)."""

from __future__ import annotations

from agent.audio.pcm import Framer, float_to_pcm16, pcm16_to_float
from agent.audio.resample import StreamResampler
from agent.audio.tail_gate import TailGate
from agent.core.events import AudioFrame
from agent.ports import SpeechDetector

DETECTOR_RATE = 16000


class CallerAudio:
    """Resamples PCM16 at ``sample_rate`` to 16 kHz, cuts detector-sized frames and labels each one
    (``tail_floor_db``: voiced frames that far below the speaker's level are not, ``agent.audio.tail_gate``)."""

    def __init__(
        self, sample_rate: int, detector: SpeechDetector, threshold: float = 0.5, tail_floor_db: float = 0.0
    ) -> None:
        self._resampler = StreamResampler(sample_rate, DETECTOR_RATE) if sample_rate != DETECTOR_RATE else None
        self._detector = detector
        self._threshold = threshold
        self._gate = TailGate(tail_floor_db)
        self._framer = Framer(detector.frame_samples * 2)
        self._frame_ms = detector.frame_samples * 1000 // DETECTOR_RATE

    def push(self, pcm: bytes) -> list[AudioFrame]:
        if self._resampler is not None:
            pcm = float_to_pcm16(self._resampler.process(pcm16_to_float(pcm)))
        detector, threshold, gate, frame_ms = self._detector, self._threshold, self._gate, self._frame_ms
        return [
            AudioFrame(
                pcm=frame,
                voiced=gate.voiced(frame, detector.speech_probability(frame) >= threshold, frame_ms),
                duration_ms=frame_ms,
            )
            for frame in self._framer.push(pcm)
        ]
