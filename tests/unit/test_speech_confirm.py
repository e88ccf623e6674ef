"""The second detector's verdict, kept in step with the first one's frames (no model: a detector by level, which
implements the port as any detector does)."""

from __future__ import annotations

import numpy as np

from agent.audio.speech_confirm import SpeechConfirmer


class LoudDetector:
    """Speech where a 32 ms frame's mean absolute level is over 1000 (a stand-in for Silero's verdict)."""

    frame_samples = 512

    def __init__(self) -> None:
        self.frames = 0

    def speech_probability(self, frame: bytes) -> float:
        assert len(frame) == 1024
        self.frames += 1
        return 1.0 if np.abs(np.frombuffer(frame, dtype="<i2").astype(np.int32)).mean() > 1000 else 0.0

    def reset(self) -> None:
        self.frames = 0


def frames(level: int, count: int) -> list[bytes]:
    return [np.full(320, level, dtype="<i2").tobytes() for _ in range(count)]


def test_each_frame_gets_the_verdict_of_the_latest_complete_frame_of_the_second_detector() -> None:
    detector = LoudDetector()
    confirm = SpeechConfirmer(detector)
    heard = [confirm.hears(f) for f in frames(5000, 4) + frames(0, 4)]
    # 20 ms frames, 32 ms second frames: one completes with frames 2, 4, 5 (half loud), 7 and 8
    assert heard == [False, True, True, True, True, True, False, False]
    assert detector.frames == 5


def test_a_threshold_above_the_answer_hears_nothing() -> None:
    confirm = SpeechConfirmer(LoudDetector(), threshold=1.5)
    assert not any(confirm.hears(f) for f in frames(5000, 10))
