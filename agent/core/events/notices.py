"""What the client is told: the events the session core sends it (``ServerEvent``, carried by ``Notify``).

One reason to change: something new to tell a client. A transport codec turns each into wire messages.
``TurnEvent``s are what every client gets (protocol v1 has a message for each); ``ConversationEvent``s answer
the requests of a client that edits the conversation itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.ports import Role, ToolCall


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    audio_ms: int


@dataclass(frozen=True, slots=True)
class SpeechStopped:
    turn: int
    audio_ms: int


@dataclass(frozen=True, slots=True)
class TranscriptText:
    turn: int
    text: str
    continues: int | None = None
    """The earlier turn whose words this one goes on with (the caller had only paused): ``text`` holds both,
    and that turn's words are no longer in the conversation."""
    language: str = field(kw_only=True)
    """The language the words were heard in (and the reply is given in)."""


@dataclass(frozen=True, slots=True)
class ReplyText:
    """A piece of reply text (``done`` False) or the whole reply (``done`` True)."""

    turn: int
    text: str
    done: bool


@dataclass(frozen=True, slots=True)
class AudioStart:
    turn: int
    sample_rate: int


@dataclass(frozen=True, slots=True)
class AudioChunk:
    turn: int
    pcm: bytes


@dataclass(frozen=True, slots=True)
class AudioEnd:
    turn: int


@dataclass(frozen=True, slots=True)
class PlaybackClear:
    """Barge-in: stop playing turn ``turn`` at once and drop what is buffered."""

    turn: int


@dataclass(frozen=True, slots=True)
class PlaybackPause:
    """The caller started speaking over turn ``turn``: stop playing it at once and drop what is buffered; the
    caller has heard ``played_ms`` of it. The turn goes on: its audio resumes from there, or is cleared."""

    turn: int
    played_ms: int


@dataclass(frozen=True, slots=True)
class ToolCalled:
    """The model, answering turn ``turn``, called a tool the client runs (``ToolSpec.runs_on == "client"``): the
    client answers with ``ToolResult`` (``/ws`` ``tool.call``; a Realtime ``function_call`` item)."""

    turn: int
    call: ToolCall


ToolOutcome = Literal["ok", "failed", "timeout", "cancelled"]


@dataclass(frozen=True, slots=True)
class ToolTiming:
    """One tool call of a turn: how long its result took (from the call to its result), and how it ended."""

    name: str
    ms: float
    outcome: ToolOutcome
    client: bool = False
    """The client ran it (its name is the client's, not one the server configured)."""
    at: float | None = field(default=None, compare=False, repr=False)
    """When the call was made, on the session's clock (``ms`` counts from it): what a trace span starts at."""


@dataclass(frozen=True, slots=True)
class TurnInstants:
    """The instants, on the session's clock (seconds), that a turn's figures are differences of: a trace of the
    turn is drawn from these, so its spans last what ``TurnMetrics`` says (one clock). ``None``: did not happen.
    A preemptive turn's stages are clamped to its end of turn, as its figures are."""

    began_at: float
    """The turn's first instant: the caller's last voice, else when its reply was asked for."""
    finished_at: float
    """When the core closed the turn (its figures were sent)."""
    last_voice_at: float | None = None
    ended_at: float | None = None
    spec_at: float | None = None
    """When the speculative transcript the turn was judged by was asked for (it took ``spec_asr_ms``)."""
    transcript_at: float | None = None
    first_text_at: float | None = None
    reply_done_at: float | None = None
    first_synthesis_at: float | None = None
    first_audio_at: float | None = None
    speech_done_at: float | None = None
    """When synthesis of the reply was over (``None``: it did not finish, the turn was interrupted)."""


@dataclass(frozen=True, slots=True)
class TurnMetrics:
    """Per-stage latencies of one turn in milliseconds; ``None`` for a stage that did not happen."""

    turn: int
    endpoint_ms: float | None
    asr_ms: float | None
    llm_first_text_ms: float | None
    llm_total_ms: float | None
    tts_first_audio_ms: float | None
    voice_to_voice_ms: float | None
    utterance_ms: int
    reply_audio_ms: int
    interrupted: bool
    speculative_asr: bool = False
    """The transcript taken speculatively during the trailing silence was reused."""
    heard_ms: int | None = None
    """Reply audio the caller heard before interrupting (interrupted turns only)."""
    preemptive: bool = False
    """The reply was started from the speculative transcript before the end of turn and released at it."""
    tail_ms: int = 0
    """Voice the detector heard after the caller's audible end, as the server estimates it from the level: time
    the end of turn waited on that the caller does not hear (``agent.audio.tail_gate``)."""
    caller_voice_to_voice_ms: float | None = None
    """``voice_to_voice_ms`` from the audible end: what the caller waits, less the network (``tail_ms`` more)."""
    spec_asr_ms: float | None = None
    """How long the speculative transcript the turn was judged by took to come back (``None``: none was)."""
    score_ms: float | None = None
    """How long the sound's score of that pause took (``None``: none)."""
    words_ms: float | None = None
    """How long the words' score took, from the transcript's return (``None``: none)."""
    tools: tuple[ToolTiming, ...] = ()
    """The tool calls the reply waited on, in the order they were made."""
    at: TurnInstants | None = field(default=None, compare=False, repr=False)
    """The instants the figures were computed from (for a trace; no wire sends them)."""


@dataclass(frozen=True, slots=True)
class ErrorNotice:
    code: str
    message: str
    turn: int | None = None


@dataclass(frozen=True, slots=True)
class SessionEnded:
    reason: str


@dataclass(frozen=True, slots=True)
class InputCommitted:
    """The caller's committed audio (``CommitInput``) is turn ``turn``'s message; its transcript follows."""

    turn: int
    audio_ms: int


@dataclass(frozen=True, slots=True)
class InputCleared:
    pass


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """The client's ``AddMessage`` is in the conversation as turn ``turn``'s message."""

    turn: int
    role: Role
    text: str


@dataclass(frozen=True, slots=True)
class MessageDeleted:
    turn: int
    role: Role


@dataclass(frozen=True, slots=True)
class ReplyTruncated:
    turn: int
    audio_ms: int


@dataclass(frozen=True, slots=True)
class ToolOutputAdded:
    """The client's ``ToolResult`` for a call of turn ``turn``'s finished reply is in the conversation."""

    turn: int
    call_id: str
    output: str


ConversationEvent = InputCommitted | InputCleared | MessageAdded | MessageDeleted | ReplyTruncated | ToolOutputAdded
"""Answers to ``ClientRequest``s (clients of protocol v1 never send those, and never get these)."""

TurnEvent = (
    SpeechStarted
    | SpeechStopped
    | TranscriptText
    | ReplyText
    | AudioStart
    | AudioChunk
    | AudioEnd
    | PlaybackClear
    | PlaybackPause
    | ToolCalled
    | TurnMetrics
    | ErrorNotice
    | SessionEnded
)
"""What happens in a conversation's turns: every client gets these (protocol v1 has a message for each)."""

ServerEvent = TurnEvent | ConversationEvent
