"""Messages in and out of the session core.

Inputs (``Event``) are what happened: an audio frame with its speech verdict, or a result posted back by a
runtime task. Every result carries the ``turn`` it belongs to; the core drops results of turns that are no
longer current. Outputs (``Effect``) are what the runtime must do: notify the client (``Notify`` wraps a
``ServerEvent``, which a transport codec turns into wire messages), start work, cancel work, close.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.ports import ChatMessage, Role

APOLOGY_SENTENCE = -1
"""Sentence index of an apology (the core's, or the synthesis pipeline's own after a voice failure)."""
HOLD_SENTENCE = -2
"""Sentence index of the "one moment" phrase, queued before the reply's first sentence."""

# ---------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class AudioFrame:
    """One frame of caller audio at 16 kHz with the speech detector's verdict."""

    pcm: bytes
    voiced: bool
    duration_ms: int
    echo_unsure: bool = False
    """The echo gate has just found the echo of the reply being played and is still learning its level: a voiced
    frame may be a leak of that echo."""


@dataclass(frozen=True, slots=True)
class TranscriptReady:
    """The result of ``Transcribe(request)``, in ``language`` (the call's language as the recogniser chose it:
    ``agent.languages``)."""

    request: int
    text: str
    language: str = "en"
    language_probability: float | None = None
    """How likely ``language`` was when the recogniser detected it (``None``: it did not); the runtime's
    language choice reads it, the core does not."""


@dataclass(frozen=True, slots=True)
class TurnScored:
    """The result of ``ScoreTurn(request)``: the probability (0..1) that the caller has finished, from the sound
    of the utterance; ``None`` when there is no score (the model is busy, failed or off): the words decide."""

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
class ReplyEnded:
    turn: int


@dataclass(frozen=True, slots=True)
class SpeechAudio:
    """Synthesized reply audio, PCM16LE at the session's output rate, one outbound frame."""

    turn: int
    pcm: bytes
    sentence: int = 0
    """Index of the ``Synthesize`` this audio speaks: the reply's sentences count from 0; fixed phrases
    outside the reply text use ``APOLOGY_SENTENCE`` (-1) and ``HOLD_SENTENCE`` (-2)."""


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


ClientRequest = CommitInput | ClearInput | AddMessage | CreateResponse | CancelResponse | TruncateReply | DeleteMessage

Event = (
    AudioFrame
    | TranscriptReady
    | TurnScored
    | TranscriptFailed
    | ReplyDelta
    | ReplyEnded
    | SpeechAudio
    | SpeechEnded
    | StageFailed
    | PlaybackMark
    | Tick
    | ClientEnded
    | Drain
    | ClientRequest
)

# ------------------------------------------------------------------------------- events for the client


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
    language: str = "en"
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


ConversationEvent = InputCommitted | InputCleared | MessageAdded | MessageDeleted | ReplyTruncated
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
    | TurnMetrics
    | ErrorNotice
    | SessionEnded
)
"""What happens in a conversation's turns: every client gets these (protocol v1 has a message for each)."""

ServerEvent = TurnEvent | ConversationEvent

# ------------------------------------------------------------------------------------------ effects


@dataclass(frozen=True, slots=True)
class Notify:
    """Send ``event`` to the client (in order, through the outbound queue)."""

    event: ServerEvent


@dataclass(frozen=True, slots=True)
class Transcribe:
    """Transcribe ``pcm`` (16 kHz PCM16LE); post ``TranscriptReady`` or ``TranscriptFailed`` for ``request``."""

    request: int
    pcm: bytes
    purpose: Literal["final", "speculative", "quick"] = "final"
    """final: the transcript of an ended turn (blocks a reply); speculative: early in the trailing silence;
    quick: a look at speech while the agent talks (barge-in). Only ``final`` must never be skipped."""
    over_agent: bool = False
    """The utterance began while the agent held the floor: the question is whether it holds words at all (a bid)
    or not (a cough, an "uh-huh"), so the recogniser runs without a prompt that writes fillers
    (``JobInfo.plain``); and so does its whole transcript once it has taken the floor, as it always did."""


@dataclass(frozen=True, slots=True)
class ScoreTurn:
    """Judge from its sound whether the utterance so far is finished (the acoustic turn-completion model):
    ``pcm`` is the utterance up to now, trailing silence included (16 kHz PCM16LE); post ``TurnScored``. Asked
    with the speculative transcript; droppable (the words alone decide without it)."""

    request: int
    pcm: bytes


@dataclass(frozen=True, slots=True)
class CancelTranscription:
    """The answer to ``Transcribe(request)`` is no longer wanted (superseded): stop it, or never start it."""

    request: int


@dataclass(frozen=True, slots=True)
class GenerateReply:
    """Stream a reply for ``history``; post ``ReplyDelta``s then ``ReplyEnded`` (or ``StageFailed``)."""

    turn: int
    history: tuple[ChatMessage, ...] = field(default_factory=tuple)
    language: str = "en"
    """The language to answer in (the history's system message says so too)."""


@dataclass(frozen=True, slots=True)
class Synthesize:
    """Speak ``text`` after every earlier ``Synthesize`` of the same turn; post ``SpeechAudio`` frames."""

    turn: int
    text: str
    sentence: int = 0
    phrase: str | None = None
    """A fixed phrase (``apology``, ``idle_prompt``, ``greeting``, ``hold``, ``goodbye``): the runtime plays the voice's
    stored recording of it when it has one, and synthesizes ``text`` otherwise."""
    language: str = "en"
    """The language ``text`` is in: the voice speaks it as that language."""


@dataclass(frozen=True, slots=True)
class FinishSynthesis:
    """No more text for ``turn``: post ``SpeechEnded`` once everything queued has been spoken."""

    turn: int


@dataclass(frozen=True, slots=True)
class CancelReply:
    """Stop generating the reply text of ``turn`` (it missed its deadline); its speech goes on."""

    turn: int


@dataclass(frozen=True, slots=True)
class CancelTurn:
    """Stop all work of ``turn`` and drop its queued outbound audio."""

    turn: int


@dataclass(frozen=True, slots=True)
class PreemptionOutcome:
    """A reply prepared before the end of turn was released (``hit``) or discarded; for the metrics.

    A miss wasted one language-model request and ``synthesized_ms`` of speech."""

    turn: int
    hit: bool
    synthesized_ms: float


@dataclass(frozen=True, slots=True)
class YieldOutcome:
    """A reply paused for the caller's sound (``PlaybackPause``) resumed, or was interrupted; for the metrics."""

    turn: int
    resumed: bool


@dataclass(frozen=True, slots=True)
class CloseSession:
    code: int
    reason: str


Effect = (
    Notify
    | Transcribe
    | ScoreTurn
    | CancelTranscription
    | GenerateReply
    | Synthesize
    | FinishSynthesis
    | CancelReply
    | CancelTurn
    | PreemptionOutcome
    | YieldOutcome
    | CloseSession
)
