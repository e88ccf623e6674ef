"""The state of the turns in a session: the utterance being heard, turns awaiting a transcript, turns being answered.

One reason to change: what the core remembers about a turn. Plain data used by the listening and speaking sides,
with no behaviour beyond small derived properties and the turn's figures (``turn_metrics``). The settings they
run under are in ``agent.core.policies``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.core.chunker import SentenceChunker
from agent.core.events import TurnInstants, TurnMetrics
from agent.core.playback import Playback
from agent.core.tools import ToolRounds
from agent.core.turn_detector import EndOfTurn
from agent.ports import ChatMessage


def ms_between(start: float | None, end: float | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start) * 1000.0, 1)


@dataclass(slots=True)
class Utterance:
    """The caller's utterance in progress."""

    id: int
    spec_request: int | None = None
    spec_voiced_until: int = -1
    spec_text: str | None = None
    score_request: int | None = None
    """The acoustic score asked for with the speculative transcript (``ScoreTurn``), while it is awaited."""
    spec_score: float | None = None
    """Its answer: the probability that the caller has finished (``None``: none yet, or none to be had); later the
    latest re-score's (``EndpointPolicy.rescore_ms``)."""
    rescore_request: int | None = None
    """A later look at the sound of the same pause, further into it, while it is awaited (never waited for: the
    decision goes on with the score it has)."""
    rescored_at_ms: int = 0
    """The trailing silence (ms) of the sound last asked to be scored; ``rescores``: how many re-scores so far."""
    rescores: int = 0
    """How many re-scores of the pause so far."""
    words_request: int | None = None
    """The text model's score of the speculative transcript (``ScoreWords``), while it is awaited."""
    spec_words: float | None = None
    """Its answer: the probability, from the words, that the caller has finished."""
    asked_at: tuple[float, float] = (0.0, 0.0)
    """When the speculative transcript (and the sound's score), and the words' score, were last asked for."""
    waited_ms: tuple[float | None, float | None, float | None] = (None, None, None)
    """How long their answers took: the transcript, the sound's score, the words' score."""
    probe_request: int | None = None
    probes: int = 0
    backchannel: bool = False
    """The latest quick transcript was only an acknowledgement."""
    not_backchannel: bool = False
    """The latest quick transcript had real words (not only acknowledgements)."""
    bid: bool = False
    """The latest quick transcript claims the floor ("wait", "stop", "no", or several words: ``claims_floor``):
    interrupt once the speech is long enough."""
    barged_in: bool = False
    unsure: bool = False
    """It began while the echo gate was still settling: it may be the agent's own echo (no yield at its onset)."""
    yielded: bool = False
    """The agent was asked to yield to it (``Yield``)."""
    onset_ms: int = 0
    """Stream position where it began."""
    over_agent: bool = False
    """It began while the agent held the floor: all its transcripts are plain (``Transcribe.over_agent``)."""

    def since(self, which: int, now: float) -> float:
        """Milliseconds since the evidence ``which`` (0: the transcript and the sound, 1: the words) was asked."""
        return (now - self.asked_at[which]) * 1000

    def scored(self, request: int, probability: float | None, now: float) -> bool:
        """The answer to one of its score requests, kept: ``True`` when the pause is to be judged again with it."""
        spec, sound, words = self.waited_ms
        if self.score_request == request:
            self.score_request, self.spec_score = None, probability
            sound = self.since(0, now) if probability is not None else None
        elif self.rescore_request == request:
            self.rescore_request = None
            if probability is None:
                return False
            self.spec_score = probability  # the latest look at the pause decides
        elif self.words_request == request:
            self.words_request, self.spec_words = None, probability
            words = self.since(1, now) if probability is not None else None
        else:
            return False
        self.waited_ms = (spec, sound, words)
        return True

    @property
    def pause_requests(self) -> tuple[int | None, ...]:
        """The requests about its pause: the speculative transcript, the sound's score, the words' score and a
        re-score of the sound."""
        return (self.spec_request, self.score_request, self.words_request, self.rescore_request)


def joined(*transcripts: str) -> str:
    """Transcripts one after the other (empty ones left out)."""
    return " ".join(text.strip() for text in transcripts if text.strip())


@dataclass(frozen=True, slots=True)
class Said:
    """The caller's words that turn ``turn`` answers: what a continuation of them is joined to."""

    turn: int
    end: EndOfTurn


@dataclass(slots=True)
class AsrRequest:
    utterance: int
    voiced_until: int
    purpose: Literal["spec", "probe", "final", "score", "words"]


@dataclass(slots=True)
class PendingTurn:
    """An ended utterance waiting for its transcript before it becomes a turn (or is dropped)."""

    end: EndOfTurn
    request: int
    last_voice_at: float | None
    ended_at: float
    only_if_not_backchannel: bool
    turn: int | None = None
    """The turn number it was announced as (``None``: not announced yet, said while the agent talked)."""

    def words(self, text: str) -> str:
        """The turn's words, its transcript being ``text``: those of its earlier pieces first, if it had any."""
        return joined(self.end.head_text, text)

    @property
    def opening(self) -> tuple[int, float | None, float]:
        """What a turn made of it starts from: its length (ms), when the caller's voice stopped, when it ended."""
        return self.end.utterance_ms, self.last_voice_at, self.ended_at


@dataclass(slots=True)
class Turn:
    number: int
    utterance_ms: int
    last_voice_at: float | None
    ended_at: float | None
    speculative: bool = False
    preemptive: bool = False
    """Started from the speculative transcript before the end of turn, released at it."""
    heard: EndOfTurn | None = None
    """What was heard of the caller's utterance: the tail after its audible end, how long its evidence took."""
    system: bool = False
    """Started by the agent (greeting, idle prompt, apology): it never apologises for itself."""
    held: bool = False
    """The hold phrase was queued."""
    began_at: float | None = None
    """When the reply was asked for (transcript, the start of a system turn, a new round after tool calls): the
    deadlines' origin."""
    asked: tuple[ChatMessage, ...] = ()
    """The conversation the reply's first round was asked with: every later round (after tool calls) is asked
    with it and the calls and results since."""
    tools: ToolRounds = field(default_factory=ToolRounds)
    transcript_at: float | None = None
    first_text_at: float | None = None
    reply_done_at: float | None = None
    first_synthesis_at: float | None = None
    first_audio_at: float | None = None
    speech_done_at: float | None = None
    """When synthesis of the reply was over (for a trace of the turn: ``TurnInstants``)."""
    reply: list[str] = field(default_factory=list)
    chunker: SentenceChunker = field(default_factory=lambda: SentenceChunker(frozenset()))
    """Cuts the reply into sentences: each round's own, in the reply's language (``reply_text.ask``)."""
    playback: Playback = field(default_factory=Playback)
    reply_finished: bool = False
    speech_finished: bool = False
    audio_ended: bool = False
    announced: bool = False
    """``audio.start`` was sent."""
    paused: bool = False
    """The caller is making a sound over the reply: its audio waits (``BargeInPolicy.pause``)."""
    prepared: bool = False
    """A reply prepared before the end of turn (``agent.core.preemption``): its audio is counted, and sent from
    its start once the reply is released."""
    audio_bytes: int = 0
    """Bytes of the reply's audio synthesized so far (what the runtime keeps, and can send again from any point)."""
    sent_bytes: int = 0
    """Bytes of it sent to the client (since the last resume, from where that resumed): the next frame to send
    begins here. Below ``audio_bytes`` only while a paused turn's audio is sent again (``ResendSpeech``)."""

    @property
    def audio_started(self) -> bool:
        return self.first_audio_at is not None

    @property
    def withheld(self) -> bool:
        """Its audio goes to no one now (paused for the caller, or prepared and not released yet)."""
        return self.paused or self.prepared


def turn_metrics(turn: Turn, interrupted: bool, heard_ms: float | None, now: float = 0.0) -> TurnMetrics:
    """The turn's figures. A preemptive turn's stages count only what they added after the end of turn (work
    done before it cost the caller nothing): a stage finished by then shows 0. ``now``: when the turn is closed;
    the figures carry the instants they are differences of (``TurnInstants``), for a trace."""
    transcript_at, first_text_at, reply_done_at, first_synthesis_at, speech_done_at = (
        _not_before(turn.ended_at, t) if turn.preemptive else t
        for t in (
            turn.transcript_at,
            turn.first_text_at,
            turn.reply_done_at,
            turn.first_synthesis_at,
            turn.speech_done_at,  # a prepared reply's synthesis may be over before the pause is
        )
    )
    heard = turn.heard
    tail = heard.tail_ms if heard is not None else 0
    return TurnMetrics(
        turn=turn.number,
        endpoint_ms=ms_between(turn.last_voice_at, turn.ended_at),
        asr_ms=ms_between(turn.ended_at, transcript_at),
        llm_first_text_ms=ms_between(transcript_at, first_text_at),
        llm_total_ms=ms_between(transcript_at, reply_done_at),
        tts_first_audio_ms=ms_between(first_synthesis_at, turn.first_audio_at),
        voice_to_voice_ms=ms_between(turn.last_voice_at, turn.first_audio_at),
        tail_ms=tail,
        caller_voice_to_voice_ms=_plus(ms_between(turn.last_voice_at, turn.first_audio_at), tail),
        spec_asr_ms=_round(heard.spec_ms if heard else None),
        score_ms=_round(heard.score_ms if heard else None),
        words_ms=_round(heard.words_ms if heard else None),
        utterance_ms=turn.utterance_ms,
        reply_audio_ms=round(turn.playback.total_ms),
        interrupted=interrupted,
        speculative_asr=turn.speculative,
        heard_ms=None if heard_ms is None else round(heard_ms),
        preemptive=turn.preemptive,
        tools=tuple(turn.tools.timings),
        at=TurnInstants(
            began_at=_first(turn.last_voice_at, turn.began_at, turn.ended_at, now),
            finished_at=now,
            last_voice_at=turn.last_voice_at,
            ended_at=turn.ended_at,
            spec_at=heard.spec_at if heard is not None and heard.spec_ms is not None else None,
            transcript_at=transcript_at,
            first_text_at=first_text_at,
            reply_done_at=reply_done_at,
            first_synthesis_at=first_synthesis_at,
            first_audio_at=turn.first_audio_at,
            speech_done_at=speech_done_at,
        ),
    )


def _first(*instants: float | None) -> float:
    return next(t for t in instants if t is not None)


def _round(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 1)


def _plus(ms: float | None, more: int) -> float | None:
    return None if ms is None else ms + more


def _not_before(floor: float | None, t: float | None) -> float | None:
    return t if floor is None or t is None else max(floor, t)
