"""Caller audio → 16 kHz detector frames with a speech verdict (pure, stateful, one per connection)."""

from __future__ import annotations

from agent.audio.echo import EchoGate, EchoPolicy
from agent.audio.pcm import Framer, float_to_pcm16, pcm16_to_float
from agent.audio.playout import Playout
from agent.audio.resample import StreamResampler
from agent.audio.speech_confirm import SpeechConfirmer
from agent.audio.tail_gate import TailGate
from agent.config import EchoSettings
from agent.core.events import AudioFrame
from agent.ports import SpeechDetector

DETECTOR_RATE = 16000


class CallerAudio:
    """Resamples PCM16 at ``sample_rate`` to 16 kHz, cuts detector-sized frames and labels each one
    (``tail_floor_db``: voiced frames that far below the speaker's level are not, ``agent.audio.tail_gate``;
    ``echo``: nor are frames that hold only the echo of what ``playout`` says the caller was hearing,
    ``agent.audio.echo``; ``confirm``: a second detector's verdict on each frame, ``AudioFrame.speech``)."""

    def __init__(
        self,
        sample_rate: int,
        detector: SpeechDetector,
        threshold: float = 0.5,
        tail_floor_db: float = 0.0,
        echo: tuple[Playout, EchoGate] | None = None,
        tail_over_noise_db: float = 0.0,
        confirm: SpeechDetector | None = None,
        confirm_threshold: float = 0.25,
    ) -> None:
        self._resampler = StreamResampler(sample_rate, DETECTOR_RATE) if sample_rate != DETECTOR_RATE else None
        self._detector = detector
        self._threshold = threshold
        self._gate = TailGate(tail_floor_db, over_noise_db=tail_over_noise_db)
        self._framer = Framer(detector.frame_samples * 2)
        self._frame_ms = detector.frame_samples * 1000 // DETECTOR_RATE
        self._echo = echo
        self._reference = Framer(detector.frame_samples * 2)  # the playout, in step with ``_framer``
        self._started = False
        self._confirm = SpeechConfirmer(confirm, confirm_threshold) if confirm is not None else None

    def _resample(self, pcm: bytes) -> bytes:
        """``pcm`` at 16 kHz. The first chunk's output is short by what the resampler holds back for its filter
        (about 2 ms); that much silence goes first, so every later chunk completes its detector frame at once
        (20 ms in, a 20 ms frame out) instead of each frame waiting for a sliver of the next chunk, 20 ms later."""
        assert self._resampler is not None
        out = float_to_pcm16(self._resampler.process(pcm16_to_float(pcm)))
        if not self._started:
            self._started = True
            expected = len(pcm) // 2 * DETECTOR_RATE // self._resampler.in_rate
            out = bytes(2 * max(expected - len(out) // 2, 0)) + out
        return out

    def push(self, pcm: bytes, now: float = 0.0) -> list[AudioFrame]:
        """Frames completed by ``pcm`` (caller audio that arrived at ``now``, on the playout's clock)."""
        if self._resampler is not None:
            pcm = self._resample(pcm)
        detector, threshold, gate, frame_ms = self._detector, self._threshold, self._gate, self._frame_ms
        frames = self._framer.push(pcm)
        confirm = self._confirm
        if self._echo is None:
            return [
                AudioFrame(
                    pcm=frame,
                    voiced=gate.voiced(frame, detector.speech_probability(frame) >= threshold, frame_ms),
                    duration_ms=frame_ms,
                    audible=gate.audible,
                    speech=confirm is None or confirm.hears(frame),
                )
                for frame in frames
            ]
        playout, echo = self._echo
        out = []
        for frame, reference in zip(frames, self._reference.push(playout.take(len(pcm) // 2, now)), strict=True):
            voiced = detector.speech_probability(frame) >= threshold  # every frame: a detector may keep state
            voiced = echo.voice(frame, reference) and voiced
            unsure = echo.settling  # the echo's gain per band is not known yet
            voiced = gate.voiced(frame, voiced, frame_ms)
            speech = confirm is None or confirm.hears(frame)
            out.append(AudioFrame(frame, voiced, frame_ms, echo_unsure=unsure, audible=gate.audible, speech=speech))
        return out

    def played(self, pcm: bytes, sample_rate: int, now: float) -> None:
        """Reply audio (PCM16 at ``sample_rate``) went to the socket at ``now``: the echo gate's reference."""
        if self._echo is not None:
            self._echo[0].sent(pcm, sample_rate, now)

    def cleared(self, now: float) -> None:
        """The caller's playout buffer was emptied at ``now`` (a clear, or a pause): so is the echo's reference."""
        if self._echo is not None:
            self._echo[0].clear(now)


def echo_guard(settings: EchoSettings, twilio: bool) -> tuple[Playout, EchoGate] | None:
    """The reference and the gate for a connection's ``CallerAudio`` (``twilio``: a phone call, else ``/ws``),
    or ``None`` where the settings leave echo alone."""
    if settings.mode == "off" or not (twilio or settings.browser):
        return None
    return Playout(), EchoGate(EchoPolicy(max_delay_ms=settings.max_delay_ms))
