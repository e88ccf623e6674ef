"""What the protocol client saw of a session: one ``TurnResult`` per turn, gathered in a ``Conversation``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]


@dataclass(slots=True)
class TurnResult:
    """Everything the client saw of one turn. Times are ``time.monotonic()`` readings."""

    turn: int
    transcript: str | None = None
    continues: int | None = None
    """``continues`` of the transcript: the earlier turn whose words this one goes on with (its ``transcript``
    holds both; that turn's reply was cut)."""
    language: str | None = None
    """``language`` of the transcript: the code the server transcribed the turn in (``None`` from a server that
    does not say)."""
    reply: str = ""
    audio: bytearray = field(default_factory=bytearray)
    """The reply audio received, in order; a ``playback.pause`` cuts it back to the paused position (the resumed
    audio continues from there)."""
    sample_rate: int = 24000
    metrics: Message | None = None
    errors: list[Message] = field(default_factory=list)
    speech_end_audio_ms: float | None = None
    """``audio_ms`` of ``speech.stopped``: where the server put the end of speech, in input audio time."""
    last_voice_sent_at: float | None = None
    """When the last non-silent input frame before this turn's ``speech.stopped`` was sent."""
    stopped_at: float | None = None
    """When ``speech.stopped`` arrived."""
    first_audio_at: float | None = None
    """When the first binary audio frame of this turn arrived."""
    audio_ended: bool = False
    """``audio.end`` arrived (and no ``playback.pause`` since)."""
    pauses: list[float] = field(default_factory=list)
    """``played_ms`` of each ``playback.pause``: ``audio`` was cut back to it, and any audio after it resumed."""
    paused: bool = False
    """Paused, and no audio has come since."""
    resumes: int = 0
    """How many pauses were followed by more audio (resumed rather than cleared)."""
    starved_ms: float = 0.0
    """How long a player would have run dry inside this reply (its audio arriving after the audio before it had
    played out, a gap the caller hears; not counting the wait for the first frame, nor a resume after a pause)."""

    @property
    def done(self) -> bool:
        """``turn.metrics`` arrived (the server's last word on a turn)."""
        return self.metrics is not None

    @property
    def audio_seconds(self) -> float:
        return len(self.audio) / 2 / self.sample_rate

    @property
    def client_voice_to_voice_ms(self) -> float | None:
        """Last speech frame sent → first reply audio frame received, in milliseconds."""
        if self.first_audio_at is None or self.last_voice_sent_at is None:
            return None
        return (self.first_audio_at - self.last_voice_sent_at) * 1000.0

    def summary(self) -> Message:
        """The CLI's ``--json`` line for this turn."""
        line: Message = {"turn": self.turn, "transcript": self.transcript}
        if self.language is not None:
            line["language"] = self.language
        if self.continues is not None:
            line["continues"] = self.continues
        return line | {"reply": self.reply, "audio_seconds": round(self.audio_seconds, 3), "metrics": self.metrics}


@dataclass(slots=True)
class Conversation:
    """One session as the client saw it."""

    url: str
    input_sample_rate: int
    output_sample_rate: int = 24000
    session: Message = field(default_factory=dict)
    """The ``session.started`` message."""
    turns_by_id: dict[int, TurnResult] = field(default_factory=dict)
    errors: list[Message] = field(default_factory=list)
    """Every ``error`` message, in order (also attached to their turn when they name one)."""
    ended_reason: str | None = None
    close_code: int | None = None
    close_reason: str | None = None
    timed_out: bool = False
    """Some wait for the replies to settle ran out of time."""
    segment_ends: list[float] = field(default_factory=list)
    """When the last frame of each input utterance (the whole input, for ``converse``) was sent."""
    input_seconds: float = 0.0
    """Audio sent, silence included."""

    @property
    def session_id(self) -> str | None:
        value = self.session.get("session_id")
        return None if value is None else str(value)

    @property
    def turns(self) -> list[TurnResult]:
        return [self.turns_by_id[k] for k in sorted(self.turns_by_id)]

    def audio(self) -> bytes:
        """All reply audio, turn after turn, PCM16LE mono at ``output_sample_rate``."""
        return b"".join(bytes(t.audio) for t in self.turns)
