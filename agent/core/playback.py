"""What the caller has heard of a reply.

Reply audio is sent faster than real time, so "sent" is not "heard". The client reports what it actually
played (``playback.mark``); between marks the position is estimated from the wall clock since the first
audio frame, never beyond what was sent. On barge-in the reply is cut at the word reached, so the
conversation history holds only what the caller heard.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class _Sentence:
    text: str
    audio_ms: float = 0.0


@dataclass(slots=True)
class Playback:
    """Audio and text of one reply, sentence by sentence, and how far the caller got.

    Positions are on the reply's own timeline (milliseconds of its audio from the first frame): ``total_ms``
    synthesized, ``sent_ms`` of it sent to the client. A pause (the caller started speaking over the reply)
    freezes the position at what was heard and drops what the client had buffered beyond it; a resume sends
    the rest again from that position, frame by frame as the client takes it (``send_until``), and the clock
    counts on from there."""

    started_at: float | None = None
    """When the first audio was sent (the clock's origin before any pause)."""
    sentences: list[_Sentence] = field(default_factory=list)
    total_ms: float = 0.0
    sent_ms: float = 0.0
    marked_ms: float | None = None
    marked_at: float | None = None
    lead_ms: float = 0.0
    """Audio played before the reply's first sentence that is not part of its text (the hold phrase)."""
    paused_ms: float | None = None
    """Paused: the position heard when it was (nothing plays until the resume)."""
    _origin: float | None = None
    """The clock time at which position 0 would have played (moved by each resume)."""

    @property
    def paused(self) -> bool:
        return self.paused_ms is not None

    def add_sentence(self, text: str) -> int:
        self.sentences.append(_Sentence(text))
        return len(self.sentences) - 1

    def add_audio(self, sentence: int, audio_ms: float) -> None:
        """``audio_ms`` more of the reply (of its ``sentence``) was synthesized; ``send_until`` says when it goes
        to the client."""
        if 0 <= sentence < len(self.sentences):
            self.sentences[sentence].audio_ms += audio_ms
        elif self.total_ms == self.lead_ms:  # nothing of the reply's own sentences yet
            self.lead_ms += audio_ms
        self.total_ms += audio_ms

    def send_until(self, position_ms: float, now: float) -> None:
        """The reply up to ``position_ms`` has gone to the client by ``now`` (the clock starts with the first)."""
        if self.started_at is None:
            self.started_at = self._origin = now
        self.sent_ms = max(self.sent_ms, min(position_ms, self.total_ms))

    def mark(self, played_ms: float, now: float) -> None:
        if self.paused:
            return  # about audio from before the pause: the position is the one paused at
        self.marked_ms = min(max(played_ms, 0.0), self.sent_ms)
        self.marked_at = now

    def played_ms(self, now: float) -> float:
        """Best estimate of the audio played by ``now``: the last mark advanced by the clock, or the clock."""
        if self.paused_ms is not None:
            return self.paused_ms
        if self._origin is None:
            return 0.0
        if self.marked_ms is not None and self.marked_at is not None:
            estimate = self.marked_ms + (now - self.marked_at) * 1000.0
        else:
            estimate = (now - self._origin) * 1000.0
        return max(0.0, min(estimate, self.sent_ms))

    def finished(self, now: float, margin_ms: float) -> bool:
        """All sent audio has been played (with ``margin_ms`` for the client's buffer)."""
        if self.paused:
            return False
        if self._origin is None:
            return True
        if self.marked_ms is not None and self.marked_ms >= self.sent_ms:
            return True
        return (now - self._origin) * 1000.0 >= self.sent_ms + margin_ms

    def pause(self, now: float, overrun_ms: float = 0.0, frame_ms: int = 0) -> float:
        """Stop at what has been heard by ``now`` (the client drops the rest; ``overrun_ms``: a far end that cannot
        drop what it was sent still plays that much of it), at the start of the ``frame_ms`` frame it is in (the
        reply goes on in whole frames: a far end such as Asterisk takes nothing else); returns that position."""
        if self.paused_ms is None:
            heard = min(self.played_ms(now) + overrun_ms, self.sent_ms)
            if frame_ms > 0 and heard < self.sent_ms:
                heard = heard // frame_ms * frame_ms
            self.paused_ms = float(int(heard))  # whole ms, as the client is told: never ahead
            self.sent_ms = self.paused_ms
        return self.paused_ms

    def resume(self, now: float) -> float:
        """Play on from the paused position, which is returned: everything after it is sent again from now on
        (``send_until``), and the clock counts on from it."""
        position = self.paused_ms if self.paused_ms is not None else self.sent_ms
        self.paused_ms = None
        self.marked_ms = self.marked_at = None
        if self.started_at is None:
            self.started_at = now
        self._origin = now - position / 1000.0
        self.sent_ms = position
        return position

    def heard_text(self, played_ms: float) -> str:
        """The reply cut at the sentence and word reached after ``played_ms`` of audio."""
        heard: list[str] = []
        remaining = played_ms - self.lead_ms
        for sentence in self.sentences:
            if sentence.audio_ms <= 0:
                break
            if remaining >= sentence.audio_ms:
                heard.append(sentence.text)
                remaining -= sentence.audio_ms
                continue
            words = sentence.text.split()
            count = int(len(words) * remaining / sentence.audio_ms)
            if count:
                heard.append(" ".join(words[:count]) + "…")
            break
        return " ".join(heard)
