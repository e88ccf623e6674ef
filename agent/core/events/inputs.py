"""What happens to a session: the inputs of the session core (``Event``).

One reason to change: something new can happen to a call. An audio frame with its speech verdict, a result
posted back by a runtime task (every one carries the ``request`` or ``turn`` it belongs to, and the core drops
those no longer current), the passing of time, the end of the call or of the server, and the requests of a
client that edits the conversation itself (``ClientRequest``, the Realtime path).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.ports import Role, ToolCall


@dataclass(frozen=True, slots=True)
class AudioFrame:
    """One frame of caller audio at 16 kHz with the speech detector's verdict."""

    pcm: bytes
    voiced: bool
    duration_ms: int
    echo_unsure: bool = False
    """The echo gate has just found the echo of the reply being played and is still learning its level: a voiced
    frame may be a leak of that echo."""
    audible: bool = True
    """A voiced frame the caller hears as their words, by its level (``agent.audio.tail_gate``); false for the
    fading tail the detector still calls voice. Where the audible end is (``EndOfTurn.audible_until_ms``)."""
    speech: bool = True
    """A second detector hears speech here too (``agent.audio.speech_confirm``; true without one): a voiced frame
    it does not confirm (a click, a knock) does not end a pause."""


@dataclass(frozen=True, slots=True)
class TranscriptReady:
    """The result of ``Transcribe(request)``, in ``language`` (as the recogniser chose it, by the request's
    ``LanguageHint``)."""

    request: int
    text: str
    language: str
    language_probability: float | None = None
    """How likely ``language`` was when the recogniser detected it (``None``: it did not, and the transcript says
    nothing of the call's language: ``agent.core.call_language``)."""


@dataclass(frozen=True, slots=True)
class TurnScored:
    """The result of ``ScoreTurn(request)`` or ``ScoreWords(request)``: the probability (0..1) that the caller
    has finished, from the sound of the utterance or from its words; ``None`` when there is no score (the model
    is busy, failed or off): the other evidence decides."""

    request: int
    probability: float | None


@dataclass(frozen=True, slots=True)
class TranscriptFailed:
    request: int
    message: str
    code: str = "asr_failed"
    """Wire code of the ``error`` sent when this was the turn's transcript (``internal_error`` for a bug)."""


@dataclass(frozen=True, slots=True)
class ReplyDelta:
    turn: int
    text: str


@dataclass(frozen=True, slots=True)
class ReplyToolCall:
    """The model, writing turn ``turn``'s reply, called a tool (in order with its ``ReplyDelta``s)."""

    turn: int
    call: ToolCall


@dataclass(frozen=True, slots=True)
class ReplyEnded:
    turn: int


@dataclass(frozen=True, slots=True)
class ToolDone:
    """The result of ``RunTool(turn, call_id)``: ``output`` (``ok``), or what went wrong (``code``
    ``tool_failed`` or ``tool_timeout``, ``output`` the message the model is told)."""

    turn: int
    call_id: str
    output: str
    ok: bool = True
    code: str = ""


@dataclass(frozen=True, slots=True)
class SpeechAudio:
    """Synthesized reply audio, PCM16LE at the session's output rate, one outbound frame."""

    turn: int
    pcm: bytes
    sentence: int = 0
    """Index of the ``Synthesize`` this audio speaks: the reply's sentences count from 0; fixed phrases
    outside the reply text use ``APOLOGY_SENTENCE`` (-1) and ``HOLD_SENTENCE`` (-2)."""
    offset: int | None = None
    """Where in the turn's audio (bytes from its first frame) this frame begins; the same frame may come again
    after a ``ResendSpeech``. ``None``: right after the audio posted so far."""


@dataclass(frozen=True, slots=True)
class SpeechEnded:
    turn: int


@dataclass(frozen=True, slots=True)
class StageFailed:
    """A runtime task for ``turn`` failed; ``stage`` is "asr", "llm" or "tts".

    ``code`` is the wire code: the stage's own (``llm_failed``, ``tts_failed``) or ``internal_error`` when
    the task raised something unexpected (a bug; logged with its traceback by the runtime)."""

    turn: int
    stage: str
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class PlaybackMark:
    """The client has played ``played_ms`` of turn ``turn``'s audio."""

    turn: int
    played_ms: float


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passes (posted periodically so timers run even when no audio arrives)."""


@dataclass(frozen=True, slots=True)
class ClientEnded:
    """The client asked to end the session."""


SHUTTING_DOWN = "server is shutting down"
"""Reason of the 1001 close (and the ``session.ended`` notice) at the end of a drain."""


@dataclass(frozen=True, slots=True)
class Drain:
    """The server is shutting down: finish the reply in progress by ``deadline`` (on the clock of ``now``),
    then say goodbye and close ``code`` with ``reason`` (1001, "server is shutting down"). No new turn starts
    meanwhile. Also how a call that cannot be served ends: a goodbye that says why, then the close."""

    deadline: float
    code: int = 1001
    reason: str = SHUTTING_DOWN


# Requests of a client that edits the conversation itself (the Realtime path, ``agent.core.requests``).


@dataclass(frozen=True, slots=True)
class CommitInput:
    """The caller's audio so far is a turn of its own now: transcribed, answered only if the session answers
    turns on its own (``SessionConfig.respond``). With ``pcm`` (16 kHz PCM16), that audio is the turn instead
    (a recorded message the client adds)."""

    pcm: bytes | None = None


@dataclass(frozen=True, slots=True)
class ClearInput:
    """Forget the caller's audio not yet committed."""


@dataclass(frozen=True, slots=True)
class AddMessage:
    """A message the client adds to the conversation (no reply by itself)."""

    role: Role
    text: str


@dataclass(frozen=True, slots=True)
class CreateResponse:
    """Reply now to the conversation so far; ``instructions`` replace the system prompt for this reply."""

    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class CancelResponse:
    """Stop the reply in progress (the history keeps what was heard)."""


@dataclass(frozen=True, slots=True)
class TruncateReply:
    """The client played only ``audio_end_ms`` of turn ``turn``'s reply: the history keeps that much of it
    (and a reply still going stops there)."""

    turn: int
    audio_end_ms: int


@dataclass(frozen=True, slots=True)
class DeleteMessage:
    turn: int
    role: Role


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The client ran the tool call ``call_id`` (one it was sent as ``ToolCalled``): its ``output``, or (``ok``
    False) the error it met. A call the reply waits on lets the reply go on; one of a reply already over (the
    Realtime path) joins the conversation, for the reply the client asks for next. A result for a call the client
    was not sent (a server tool's, answered only by ``ToolDone``) is refused: ``not_your_call``."""

    call_id: str
    output: str
    ok: bool = True


ClientRequest = (
    CommitInput | ClearInput | AddMessage | CreateResponse | CancelResponse | TruncateReply | DeleteMessage | ToolResult
)

Event = (
    AudioFrame
    | TranscriptReady
    | TurnScored
    | TranscriptFailed
    | ReplyDelta
    | ReplyToolCall
    | ReplyEnded
    | ToolDone
    | SpeechAudio
    | SpeechEnded
    | StageFailed
    | PlaybackMark
    | Tick
    | ClientEnded
    | Drain
    | ClientRequest
)
