"""The session core: one caller's conversation as a pure state machine.

``Session.handle(event, now)`` takes one event and the current monotonic time in seconds and returns the
effects the runtime must carry out, in order. It does no I/O and reads no clock, so every turn-taking rule
is a synchronous unit test.

Turn ids make races harmless: each utterance that ends becomes turn ``n``; every result posted back carries
its turn, and results for a turn that is no longer active are dropped here. A new utterance that ends while
turn ``n`` is still being answered supersedes it (``CancelTurn(n)``, its audio closed, its metrics marked
``interrupted``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from agent.core.chunker import SentenceChunker
from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioFrame,
    AudioStart,
    CancelTurn,
    ClientEnded,
    CloseSession,
    Effect,
    ErrorNotice,
    Event,
    FinishSynthesis,
    GenerateReply,
    Notify,
    ReplyDelta,
    ReplyEnded,
    ReplyText,
    SessionEnded,
    SpeechAudio,
    SpeechEnded,
    SpeechStarted,
    SpeechStopped,
    StageFailed,
    Synthesize,
    Transcribe,
    TranscriptReady,
    TranscriptText,
    TurnMetrics,
)
from agent.core.history import Dialogue
from agent.core.turn_policy import Discarded, EndOfTurn, Onset, TurnDetector, TurnPolicy


@dataclass(frozen=True, slots=True)
class SessionConfig:
    output_sample_rate: int = 24000
    policy: TurnPolicy = field(default_factory=TurnPolicy)
    system_prompt: str = ""
    max_history_messages: int = 20


def _ms(start: float | None, end: float | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start) * 1000.0, 1)


@dataclass(slots=True)
class _Turn:
    number: int
    utterance_ms: int
    last_voice_at: float | None
    ended_at: float
    transcript_at: float | None = None
    first_text_at: float | None = None
    reply_done_at: float | None = None
    first_synthesis_at: float | None = None
    first_audio_at: float | None = None
    reply: list[str] = field(default_factory=list)
    chunker: SentenceChunker = field(default_factory=SentenceChunker)
    audio_bytes: int = 0
    audio_started: bool = False
    reply_finished: bool = False


class Session:
    """Turn-taking and turn bookkeeping for one caller. See the module docstring for the contract."""

    def __init__(self, config: SessionConfig) -> None:
        self._config = config
        self._detector = TurnDetector(config.policy)
        self._dialogue = Dialogue(config.system_prompt, config.max_history_messages)
        self._turns = 0
        self._active: _Turn | None = None
        self._last_voice_at: float | None = None
        self._closed = False

    @property
    def active_turn(self) -> int | None:
        return self._active.number if self._active else None

    @property
    def history(self) -> Dialogue:
        return self._dialogue

    def handle(self, event: Event, now: float) -> list[Effect]:
        if self._closed:
            return []
        match event:
            case AudioFrame():
                return self._on_audio(event, now)
            case TranscriptReady():
                return self._on_transcript(event, now)
            case ReplyDelta():
                return self._on_reply_delta(event, now)
            case ReplyEnded():
                return self._on_reply_ended(event.turn, now)
            case SpeechAudio():
                return self._on_speech_audio(event, now)
            case SpeechEnded():
                return self._on_speech_ended(event.turn, now)
            case StageFailed():
                return self._on_failure(event, now)
            case ClientEnded():
                return self._close(now)
            case _:
                assert_never(event)

    # ------------------------------------------------------------------------------------- caller audio

    def _on_audio(self, frame: AudioFrame, now: float) -> list[Effect]:
        signal = self._detector.push(frame.pcm, frame.voiced, frame.duration_ms)
        if frame.voiced and (self._detector.speaking or isinstance(signal, Onset)):
            self._last_voice_at = now
        match signal:
            case None | Discarded():
                return []
            case Onset():
                return [Notify(SpeechStarted(audio_ms=signal.audio_ms))]
            case EndOfTurn():
                return self._start_turn(signal, now)
            case _:
                assert_never(signal)

    def _start_turn(self, end: EndOfTurn, now: float) -> list[Effect]:
        effects = self._supersede(now)
        self._turns += 1
        self._active = _Turn(
            number=self._turns,
            utterance_ms=end.utterance_ms,
            last_voice_at=self._last_voice_at,
            ended_at=now,
        )
        effects += [
            Notify(SpeechStopped(turn=self._turns, audio_ms=end.audio_ms)),
            Transcribe(turn=self._turns, pcm=end.audio),
        ]
        return effects

    def _supersede(self, now: float) -> list[Effect]:
        turn = self._active
        if turn is None:
            return []
        effects: list[Effect] = [CancelTurn(turn.number)]
        effects += self._finish(turn, now, interrupted=True)
        return effects

    # ------------------------------------------------------------------------------------ task results

    def _current(self, number: int) -> _Turn | None:
        turn = self._active
        return turn if turn is not None and turn.number == number else None

    def _on_transcript(self, event: TranscriptReady, now: float) -> list[Effect]:
        turn = self._current(event.turn)
        if turn is None or turn.transcript_at is not None:
            return []
        turn.transcript_at = now
        text = event.text.strip()
        effects: list[Effect] = [Notify(TranscriptText(turn=turn.number, text=text))]
        if not text:
            return effects + self._finish(turn, now, interrupted=False)
        self._dialogue.add("user", text)
        effects.append(GenerateReply(turn=turn.number, history=self._dialogue.snapshot()))
        return effects

    def _on_reply_delta(self, event: ReplyDelta, now: float) -> list[Effect]:
        turn = self._current(event.turn)
        if turn is None or turn.reply_finished or not event.text:
            return []
        if turn.first_text_at is None:
            turn.first_text_at = now
        turn.reply.append(event.text)
        effects: list[Effect] = [Notify(ReplyText(turn=turn.number, text=event.text, done=False))]
        effects += self._synthesize(turn, turn.chunker.push(event.text), now)
        return effects

    def _on_reply_ended(self, number: int, now: float) -> list[Effect]:
        turn = self._current(number)
        if turn is None or turn.reply_finished:
            return []
        turn.reply_finished = True
        turn.reply_done_at = now
        text = "".join(turn.reply).strip()
        self._dialogue.add("assistant", text)
        effects: list[Effect] = [Notify(ReplyText(turn=turn.number, text=text, done=True))]
        effects += self._synthesize(turn, turn.chunker.flush(), now)
        effects.append(FinishSynthesis(turn.number))
        return effects

    def _synthesize(self, turn: _Turn, sentences: list[str], now: float) -> list[Effect]:
        if sentences and turn.first_synthesis_at is None:
            turn.first_synthesis_at = now
        return [Synthesize(turn=turn.number, text=s) for s in sentences]

    def _on_speech_audio(self, event: SpeechAudio, now: float) -> list[Effect]:
        turn = self._current(event.turn)
        if turn is None or not event.pcm:
            return []
        effects: list[Effect] = []
        if not turn.audio_started:
            turn.audio_started = True
            turn.first_audio_at = now
            effects.append(Notify(AudioStart(turn=turn.number, sample_rate=self._config.output_sample_rate)))
        turn.audio_bytes += len(event.pcm)
        effects.append(Notify(AudioChunk(turn=turn.number, pcm=event.pcm)))
        return effects

    def _on_speech_ended(self, number: int, now: float) -> list[Effect]:
        turn = self._current(number)
        if turn is None or not turn.reply_finished:
            return []
        return self._finish(turn, now, interrupted=False)

    def _on_failure(self, event: StageFailed, now: float) -> list[Effect]:
        turn = self._current(event.turn)
        if turn is None:
            return []
        effects: list[Effect] = [Notify(ErrorNotice(code=event.code, message=event.message, turn=turn.number))]
        if event.stage == "llm" and not turn.reply_finished:
            # Speak what was generated before the failure; the turn ends when that audio is done.
            return effects + self._on_reply_ended(turn.number, now)
        if event.stage == "asr" and turn.transcript_at is None:
            turn.transcript_at = now
        effects.append(CancelTurn(turn.number))
        return effects + self._finish(turn, now, interrupted=False)

    # -------------------------------------------------------------------------------------- turn end

    def _finish(self, turn: _Turn, now: float, *, interrupted: bool) -> list[Effect]:
        effects: list[Effect] = []
        if turn.audio_started:
            effects.append(Notify(AudioEnd(turn=turn.number)))
        effects.append(Notify(self._metrics(turn, now, interrupted)))
        if self._active is turn:
            self._active = None
        return effects

    def _metrics(self, turn: _Turn, now: float, interrupted: bool) -> TurnMetrics:
        bytes_per_ms = self._config.output_sample_rate * 2 / 1000.0
        return TurnMetrics(
            turn=turn.number,
            endpoint_ms=_ms(turn.last_voice_at, turn.ended_at),
            asr_ms=_ms(turn.ended_at, turn.transcript_at),
            llm_first_text_ms=_ms(turn.transcript_at, turn.first_text_at),
            llm_total_ms=_ms(turn.transcript_at, turn.reply_done_at),
            tts_first_audio_ms=_ms(turn.first_synthesis_at, turn.first_audio_at),
            voice_to_voice_ms=_ms(turn.last_voice_at, turn.first_audio_at),
            utterance_ms=turn.utterance_ms,
            reply_audio_ms=round(turn.audio_bytes / bytes_per_ms),
            interrupted=interrupted,
        )

    def _close(self, now: float) -> list[Effect]:
        effects = self._supersede(now)
        self._closed = True
        effects += [Notify(SessionEnded(reason="client ended the session")), CloseSession(1000, "session ended")]
        return effects
