"""The session core: one caller's conversation as a pure state machine.

One reason to change: how the listening and speaking sides are arbitrated: who holds the floor, which utterance
becomes a turn, what a transcript, a barge-in or a deadline does to the turn in progress.

``Session.handle(event, now)`` takes one event and the current monotonic time in seconds and returns the effects
the runtime must carry out, in order. It does no I/O and reads no clock, so every turn-taking rule is a
synchronous unit test. How the parts fit (listening, speaking, preemption, yielding, recovery, closing, tools) is
told in ``agent.core``.

Every result carries its request or turn id; results for anything no longer current are dropped here, so
late results of a cancelled turn can never reach the caller. Superseded transcriptions are cancelled
(``CancelTranscriptOrScore``), so they cannot pile up behind each other.
"""

from __future__ import annotations

from typing import assert_never

from agent.core import requests, yielding
from agent.core.call_language import CallLanguage
from agent.core.closing import Closing
from agent.core.endpointing import passes
from agent.core.events import (
    SHUTTING_DOWN,
    AddMessage,
    AudioFrame,
    CancelResponse,
    CancelTranscriptOrScore,
    ClearInput,
    ClientEnded,
    CommitInput,
    CreateResponse,
    DeleteMessage,
    Drain,
    Effect,
    Event,
    InputCleared,
    InputCommitted,
    LanguageHeard,
    MessageDeleted,
    Notify,
    PlaybackMark,
    ReplyDelta,
    ReplyEnded,
    ReplyToolCall,
    ScoreTurn,
    ScoreWords,
    SessionEnded,
    SpeechAudio,
    SpeechEnded,
    SpeechStarted,
    StageFailed,
    Tick,
    ToolDone,
    ToolResult,
    Transcribe,
    TranscriptFailed,
    TranscriptReady,
    TruncateReply,
    TurnScored,
)
from agent.core.history import Dialogue
from agent.core.input_buffer import InputBuffer, duration_ms
from agent.core.listening import Began, Ended, Guessed, Interrupt, Passed, SpeechJudge, SpeechJudgement, Yield
from agent.core.policies import SessionConfig
from agent.core.preemption import Preemptor
from agent.core.speaking import Speaker
from agent.core.turn_detector import EndOfTurn
from agent.core.turn_state import PendingTurn, Said


class Session:
    """Turn-taking and turn bookkeeping for one caller. See the module docstring for the contract."""

    def __init__(self, config: SessionConfig) -> None:
        self._config = config
        self._barge = config.barge_in
        self._language = CallLanguage(config.language, detect=config.detect_language)
        """The call's language: this session owns it; its listening and speaking sides read it."""
        self._dialogue = Dialogue(config.system_prompt, config.max_history_messages)
        self._speaker = Speaker(config, self._dialogue, self._language)
        self._ahead = Preemptor(self._speaker)
        self._closing = Closing(self._speaker, self._ahead)
        self._judge = SpeechJudge(config.policy, config.endpointing, config.barge_in, language=self._language)
        self._pending: PendingTurn | None = None
        self._input = InputBuffer()
        """Turn detection off: the caller's audio since the last commit."""
        self._said: Said | None = None
        """The utterance the latest caller turn was made of."""

    @property
    def config(self) -> SessionConfig:
        return self._config

    def reconfigure(self, config: SessionConfig) -> None:
        """New rules from now on (a Realtime client's ``session.update``); the output rate stays what it was."""
        self._config = config
        self._barge = config.barge_in
        self._dialogue.system_prompt = config.system_prompt
        self._speaker.reconfigure(config)
        self._judge.reconfigure(config.policy, config.endpointing, config.barge_in)

    @property
    def language(self) -> str:
        """The call's language now: the given one, else the detected one, else the one it started with."""
        return self._language.current

    def choose_language(self, given: str | None) -> list[LanguageHeard]:
        """The client gives the call's language (``None``: detect it from here on, starting from the current)."""
        return self._language.choose(given)

    @property
    def active_turn(self) -> int | None:
        turn = self._speaker.active
        return turn.number if turn else None

    @property
    def history(self) -> Dialogue:
        return self._dialogue

    def open(self, now: float) -> list[Effect]:
        """Call once when the session starts: the greeting, if there is one."""
        self._closing.last_activity_at = now
        greeting = self._speaker.phrases.greeting
        ok = greeting and not self._closing.closed
        return self._speaker.own_turn(greeting, "greeting", now, remember=True) if ok else []

    def handle(self, event: Event, now: float) -> list[Effect]:
        closing = self._closing
        if closing.closed:
            return []
        if closing.last_activity_at is None:
            closing.last_activity_at = now
        match event:
            case AudioFrame():
                effects = self._on_audio(event, now)
            case TranscriptReady():
                effects = [*self._language.heard(event.language, event.language_probability)]
                effects += self._on_transcript(event.request, event.text, now)
            case TurnScored():
                effects = self._on_score(event, now)
            case TranscriptFailed():
                effects = self._on_transcript_failed(event, now)
            case (
                ReplyDelta()
                | ReplyToolCall()
                | ReplyEnded()
                | ToolDone()
                | SpeechAudio()
                | SpeechEnded()
                | StageFailed()
                | PlaybackMark()
            ):
                if self._ahead.owns(event.turn):
                    effects = self._ahead.result(event, now)
                else:
                    effects = self._speaker.result(event, now)
            case Tick():
                effects = []
            case ClientEnded():
                return closing.close(now, SessionEnded("client ended the session"), 1000, "session ended")
            case Drain():
                effects = closing.drain(event)
            case CommitInput():
                effects = self._commit(event.pcm, now)
            case ClearInput():
                self._input.clear()
                effects = [Notify(InputCleared())]
            case AddMessage() | CreateResponse() | CancelResponse() | TruncateReply() | DeleteMessage() | ToolResult():
                if isinstance(event, CreateResponse) and closing.draining:
                    return requests.refused("server_shutting_down", SHUTTING_DOWN)
                effects = requests.answer(event, self._speaker, self._dialogue, self._pending is not None, now)
            case _:
                assert_never(event)
        return effects + self._housekeeping(now)

    # ------------------------------------------------------------------------------------- caller audio

    def _on_audio(self, frame: AudioFrame, now: float) -> list[Effect]:
        if not self._config.detect_turns:  # the client commits: no utterances, only a buffer
            self._input.add(frame.pcm, self._config.policy.max_utterance_ms)
            return []
        effects: list[Effect] = []
        judge = self._judge
        judge.continuable = self._continuable()
        for judgement in judge.push(frame, now, self._agent_busy()):
            effects += self._on_judgement(judgement, now)
        guess = self._ahead.guess
        if guess is not None and (not judge.speaking or judge.voiced_until_ms != guess.voiced_until_ms):
            effects += self._ahead.discard()  # the caller went on (or the utterance was dropped)
        if judge.last_voice_at == now:
            self._closing.voice(now)
        return effects

    def _on_judgement(self, judgement: SpeechJudgement, now: float) -> list[Effect]:
        match judgement:
            case Began():
                # Yield at once, unless the sound may be the agent's own echo: then only once it goes on (Yield).
                busy = self._agent_busy() and not judgement.unsure
                pause = yielding.pause(self._speaker.active, self._config, now) if busy else []
                return [*pause, Notify(SpeechStarted(audio_ms=judgement.audio_ms))]
            case Yield():
                return yielding.pause(self._speaker.active, self._config, now) if self._agent_busy() else []
            case Passed():
                return self._resume(now)
            case Transcribe() | ScoreTurn() | ScoreWords() | CancelTranscriptOrScore():
                return [judgement]
            case Interrupt(continues=continues):
                return self._interrupt(now) + ([] if continues is None else self._continue(continues))
            case Guessed():
                return self._preempt(judgement, now)
            case Ended():
                return self._utterance_ended(judgement, now)
            case _:
                assert_never(judgement)

    def _preempt(self, guessed: Guessed, now: float) -> list[Effect]:
        """The speculative transcript of the whole utterance so far: start its reply (output held)."""
        idle = self._speaker.active is None and self._pending is None and not self._closing.draining
        mode = self._config.preemption
        if mode == "off" or not idle or not guessed.text.strip():
            return []
        return self._ahead.preempt(guessed.text, guessed.voiced_until_ms, mode, now)

    def _utterance_ended(self, ended: Ended, now: float) -> list[Effect]:
        speaker, ahead = self._speaker, self._ahead
        if self._closing.draining:  # no new turn while draining: its transcript is not wanted
            return [] if ended.text is not None else [CancelTranscriptOrScore(ended.request)]
        busy = self._agent_busy() and not ended.interrupted
        guess = ahead.guess
        if guess is not None and not busy and guess.holds(ended.text, ended.end.voiced_until_ms):
            effects = self._drop_pending(now)
            released = ahead.confirm(ended.end, ended.last_voice_at, now)
            if released is not None:
                self._said = Said(speaker.number, ended.end)
                return effects + released
        effects = ahead.discard()
        if ended.text is not None:
            if busy and self._no_bid(ended.text, ended.end.speech_ms):
                return effects + self._resume(now)
            effects += self._drop_pending(now) + self._announce(ended.end, now)
            turn = speaker.new_turn(ended.end.utterance_ms, ended.last_voice_at, now, speculative=True, heard=ended.end)
            effects += speaker.answer(turn, ended.text, now)  # a long turn's, after the caller went on, waits:
            return effects + (yielding.pause(speaker.active, self._config, now) if self._judge.speaking else [])
        effects += self._drop_pending(now)
        if not busy:
            effects += self._announce(ended.end, now)
        number = None if busy else speaker.number
        self._pending = PendingTurn(ended.end, ended.request, ended.last_voice_at, now, busy, number)
        return effects

    def _announce(self, end: EndOfTurn, now: float) -> list[Effect]:
        """The utterance ``end`` becomes the next turn (what a continuation of it is joined to)."""
        effects = self._speaker.announce(end, now)
        # Words cut at the longest utterance are continued by none: joined, they would be cut and answered anew at once.
        self._said = None if end.reason == "max_length" else Said(self._speaker.number, end)
        return effects

    def _continuable(self) -> Said | None:
        """The caller's words the agent is answering now (their turn's transcript awaited, or its reply under
        way): speech that takes the floor soon after them continues them (``BargeInPolicy.continue_within_ms``)."""
        said, pending, active = self._said, self._pending, self._speaker.active
        if said is None or not self._barge.continue_within_ms or self._closing.draining:
            return None
        if pending is not None:
            answering = None if pending.only_if_not_backchannel else pending.turn
        else:
            answering = active.number if active is not None and not active.system else None
        return said if answering == said.turn else None

    def _drop_pending(self, now: float) -> list[Effect]:
        """A newer utterance replaces one still waiting for its transcript."""
        pending, self._pending = self._pending, None
        if pending is None or pending.only_if_not_backchannel:
            return [] if pending is None else [CancelTranscriptOrScore(pending.request)]
        effects: list[Effect] = [CancelTranscriptOrScore(pending.request)]
        turn = self._speaker.new_turn(*pending.opening, pending.turn, heard=pending.end)
        return effects + self._speaker.finish(turn, now, interrupted=True)

    def _commit(self, audio: bytes | None, now: float) -> list[Effect]:
        """The client ends the caller's turn: the utterance in progress (turn detection on), all the audio since the
        last commit (off), or ``audio``, becomes a turn, answered only if the session answers turns on its own."""
        if audio is None and self._config.detect_turns:
            committed, judged = self._judge.commit(self._agent_busy())
            effects = [e for judgement in judged for e in self._on_judgement(judgement, now)]
            return effects + ([] if committed else requests.refused(requests.COMMIT_EMPTY, "no speech to commit"))
        pcm = self._input.take(audio)
        if pcm is None:
            return requests.refused(requests.COMMIT_EMPTY, "at least 100 ms of audio must be committed")
        audio_ms = duration_ms(pcm)
        effects = self._drop_pending(now)
        turn, request = self._speaker.number_turn(), self._judge.new_request()
        end = EndOfTurn(pcm, audio_ms, audio_ms, self._judge.position_ms, "silence", self._judge.position_ms)
        self._pending = PendingTurn(end, request, None, now, only_if_not_backchannel=False, turn=turn)
        return [*effects, Notify(InputCommitted(turn, audio_ms)), Transcribe(request, pcm, self._language.hint())]

    # --------------------------------------------------------------------------------- transcripts

    def _on_transcript(self, request: int, text: str, now: float) -> list[Effect]:
        if (pending := self._pending) is not None and pending.request == request:
            return self._pending_transcribed(pending, text, now)
        self._judge.continuable = self._continuable()
        judged = self._judge.answer(request, text, self._agent_busy(), now)
        return [e for judgement in judged for e in self._on_judgement(judgement, now)]

    def _on_score(self, scored: TurnScored, now: float) -> list[Effect]:
        self._judge.continuable = self._continuable()
        judged = self._judge.answer_score(scored.request, scored.probability, self._agent_busy(), now)
        return [e for judgement in judged for e in self._on_judgement(judgement, now)]

    def _pending_transcribed(self, pending: PendingTurn, text: str, now: float) -> list[Effect]:
        self._pending = None
        effects: list[Effect] = []
        if pending.only_if_not_backchannel:
            if self._no_bid(text, pending.end.speech_ms):
                return self._resume(now)
            effects += self._announce(pending.end, now)
        number = pending.turn if not pending.only_if_not_backchannel else None
        turn = self._speaker.new_turn(*pending.opening, number, heard=pending.end)
        effects += self._speaker.answer(turn, pending.words(text), now)
        speaking = self._judge.speaking and self._agent_busy()  # again: the reply waits until that is judged
        return effects + (yielding.pause(turn, self._config, now) if speaking else [])

    def _on_transcript_failed(self, event: TranscriptFailed, now: float) -> list[Effect]:
        judged = self._judge.forget(event.request)  # a piece of a long turn: its words are lost, the turn goes on
        if (pending := self._pending) is None or pending.request != event.request:
            return [e for judgement in judged for e in self._on_judgement(judgement, now)]  # the final is tried anyway
        if pending.end.head_text:  # the words said before the last part of a long turn were understood
            return self._pending_transcribed(pending, "", now)
        return self._transcript_lost(pending, event.code, event.message, now)

    def _transcript_lost(self, pending: PendingTurn, code: str, message: str, now: float) -> list[Effect]:
        """The turn's transcript failed or is overdue: say so, and apologise (nothing was understood)."""
        self._pending = None
        if pending.only_if_not_backchannel:
            return self._resume(now)  # said while the agent talked: maybe "uh-huh"; it goes on
        turn = self._speaker.new_turn(*pending.opening, pending.turn, heard=pending.end)
        return self._speaker.misheard(turn, code, message, now)

    # ------------------------------------------------------------------------------ turn boundaries

    def _no_bid(self, text: str, speech_ms: int) -> bool:
        """Said while the agent talks, ``text`` does not take the floor (``passes``)."""
        b = self._barge
        return passes(text, speech_ms, b.acknowledging, b.backchannel_max_ms, language=self.language)

    def _agent_busy(self) -> bool:
        """The agent holds the floor: a reply is being prepared or is still playing."""
        return self._barge.enabled and (self._speaker.active is not None or self._pending is not None)

    def _interrupt(self, now: float) -> list[Effect]:
        """Barge-in (or the drain's deadline): stop the turn in progress (one still awaiting its transcript is moot);
        the history keeps what was heard."""
        return self._drop_pending(now) + self._ahead.discard() + self._speaker.interrupt(now)

    def _resume(self, now: float) -> list[Effect]:
        """The caller's sound did not take the floor: a reply paused for it plays on (``agent.core.yielding``)."""
        return yielding.resume(self._speaker.active, self._config, now)

    def _continue(self, turn: int) -> list[Effect]:
        """The caller's new speech goes on with the words of ``turn`` (they had only paused): the utterance holds
        both; ``turn``'s words and its reply leave the history, and the next transcript ``continues`` them."""
        self._speaker.continues = turn
        return [Notify(MessageDeleted(turn, r)) for r in ("user", "assistant") if self._dialogue.remove(turn, r)]

    # -------------------------------------------------------------------------------------- timers

    def _housekeeping(self, now: float) -> list[Effect]:
        closing = self._closing
        if closing.cut_due(now):
            return self._interrupt(now) + self._farewell(now)
        speaker = self._speaker
        effects = self._transcript_overdue(now) or speaker.overdue(now)
        if effects:
            return effects
        if speaker.active is not None:
            effects = speaker.tend(now)
            return effects + self._farewell(now) if closing.draining and speaker.active is None else effects
        if self._pending is not None:
            return []
        if closing.draining:
            return self._farewell(now)
        if self._judge.speaking:
            return []
        return closing.idle(now, self._config.idle)

    def _farewell(self, now: float) -> list[Effect]:
        return self._closing.farewell(now, waiting=self._pending is not None, caller_speaking=self._judge.speaking)

    def _transcript_overdue(self, now: float) -> list[Effect]:
        """A transcript missed its deadline: the pending turn's is stopped and apologised for; a piece's left out."""
        deadline_s = self._config.deadlines.asr_s
        if held := self._judge.overdue(now, deadline_s):
            return [e for judgement in held for e in self._on_judgement(judgement, now)]
        if (pending := self._pending) is None or not deadline_s or now - pending.ended_at < deadline_s:
            return []
        self._judge.forget(pending.request)
        message = f"no transcript within {deadline_s:g} s"
        return [CancelTranscriptOrScore(pending.request), *self._transcript_lost(pending, "asr_timeout", message, now)]
