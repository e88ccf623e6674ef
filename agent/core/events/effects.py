"""What the runtime must do: the outputs of the session core (``Effect``).

One reason to change: a new kind of work the core can ask for. Notify the client (``Notify`` wraps a
``ServerEvent``), start work (transcribe, score, generate, synthesize), cancel work, report an outcome to the
metrics, close. The runtime carries them out in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.core.events.notices import ServerEvent
from agent.ports import ChatMessage, LanguageHint, ToolCall, ToolChoice, ToolSpec

APOLOGY_SENTENCE = -1
"""Sentence index of an apology (the core's, or the synthesis pipeline's own after a voice failure)."""
HOLD_SENTENCE = -2
"""Sentence index of the "one moment" phrase, queued before the reply's first sentence."""


@dataclass(frozen=True, slots=True)
class Notify:
    """Send ``event`` to the client (in order, through the outbound queue)."""

    event: ServerEvent


@dataclass(frozen=True, slots=True)
class Transcribe:
    """Transcribe ``pcm`` (16 kHz PCM16LE); post ``TranscriptReady`` or ``TranscriptFailed`` for ``request``."""

    request: int
    pcm: bytes
    hint: LanguageHint
    """The language to transcribe in, and whether the recogniser may detect another (the call's:
    ``agent.core.call_language``)."""
    purpose: Literal["final", "speculative", "quick"] = "final"
    """final: the transcript of an ended turn (blocks a reply); speculative: early in the trailing silence;
    quick: a look at speech while the agent talks (barge-in). Only ``final`` must never be skipped."""
    over_agent: bool = False
    """The utterance began while the agent held the floor: the question is whether it holds words at all (a bid)
    or not (a cough, an "uh-huh"), so the recogniser runs without a prompt that writes fillers
    (``JobInfo.plain``); and so does its whole transcript once it has taken the floor, as it always did."""


@dataclass(frozen=True, slots=True)
class LanguageHeard:
    """The call's language became ``language`` (from ``was``): the first detection, a change (``change``), or the
    client's choice. Replies and fixed phrases are said in it from now on (keep its phrases ready)."""

    language: str
    was: str
    change: bool


@dataclass(frozen=True, slots=True)
class ScoreTurn:
    """Judge from its sound whether the utterance so far is finished (the acoustic turn-completion model):
    ``pcm`` is the utterance up to now, trailing silence included (16 kHz PCM16LE); post ``TurnScored``. Asked
    with the speculative transcript; droppable (the words alone decide without it)."""

    request: int
    pcm: bytes


@dataclass(frozen=True, slots=True)
class ScoreWords:
    """Judge from its words whether the utterance so far is finished (the text end-of-turn model): ``text`` is
    its speculative transcript, in ``language``; post ``TurnScored``. Asked once that transcript is back;
    droppable (the rules and the sound decide without it)."""

    request: int
    text: str
    language: str


@dataclass(frozen=True, slots=True)
class CancelTranscriptOrScore:
    """The answer to ``Transcribe(request)``, ``ScoreTurn(request)`` or ``ScoreWords(request)`` is no longer wanted
    (superseded, or its utterance is over): stop it, or never start it."""

    request: int


@dataclass(frozen=True, slots=True)
class GenerateReply:
    """Stream a reply for ``history``; post ``ReplyDelta``s then ``ReplyEnded`` (or ``StageFailed``)."""

    turn: int
    history: tuple[ChatMessage, ...] = field(default_factory=tuple)
    language: str = field(kw_only=True)
    """The language to answer in (the history's system message says so too)."""
    tools: tuple[ToolSpec, ...] = ()
    """The functions the model may call this round (its calls come back as ``ReplyToolCall``)."""
    tool_choice: ToolChoice = "auto"


@dataclass(frozen=True, slots=True)
class RunTool:
    """Run the server-side tool ``call`` of ``turn`` (a ``ToolRunner``); post ``ToolDone``. Parallel calls of one
    round each get their own ``RunTool`` and run at once."""

    turn: int
    call: ToolCall


@dataclass(frozen=True, slots=True)
class CancelTool:
    """The result of ``RunTool(turn, call_id)`` is no longer wanted (it timed out): stop it."""

    turn: int
    call_id: str


@dataclass(frozen=True, slots=True)
class Synthesize:
    """Speak ``text`` after every earlier ``Synthesize`` of the same turn; post ``SpeechAudio`` frames."""

    turn: int
    text: str
    sentence: int = 0
    phrase: str | None = None
    """A fixed phrase (``apology``, ``idle_prompt``, ``greeting``, ``hold``, ``goodbye``): the runtime plays the voice's
    stored recording of it when it has one, and synthesizes ``text`` otherwise."""
    language: str = field(kw_only=True)
    """The language ``text`` is in: the voice speaks it as that language."""


@dataclass(frozen=True, slots=True)
class FinishSynthesis:
    """No more text for ``turn``: post ``SpeechEnded`` once everything queued has been spoken."""

    turn: int


@dataclass(frozen=True, slots=True)
class HoldSpeech:
    """The caller started speaking over ``turn``: post no more of its audio until ``ResendSpeech`` (what is being
    synthesized waits, and so does synthesis once it is ahead)."""

    turn: int


@dataclass(frozen=True, slots=True)
class ResendSpeech:
    """``turn`` plays on from byte ``start`` of its audio: post its audio again from there (``SpeechAudio`` with
    their ``offset``), each frame waiting for room like any other, and then the rest as it is synthesized."""

    turn: int
    start: int
    keep: bool = True
    """Keep the turn's audio after this (it may be paused again); ``False``: it never will, forget it."""


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
    | LanguageHeard
    | ScoreTurn
    | ScoreWords
    | CancelTranscriptOrScore
    | GenerateReply
    | RunTool
    | CancelTool
    | Synthesize
    | FinishSynthesis
    | HoldSpeech
    | ResendSpeech
    | CancelReply
    | CancelTurn
    | PreemptionOutcome
    | YieldOutcome
    | CloseSession
)
