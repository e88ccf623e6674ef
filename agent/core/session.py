"""The session core: one caller's conversation as a pure state machine.

``Session.handle(event, now)`` takes one event and the current monotonic time in seconds and returns the
effects the runtime must carry out, in order. It does no I/O and reads no clock, so every turn-taking rule
is a synchronous unit test.

Listening side (``agent.core.listening.Listener``): the turn detector (audio time) finds utterances. Early
in the trailing silence a speculative transcript is requested; when it ends like a finished sentence the
turn ends after a short hangover and the transcript is reused, when it trails off the agent waits longer
(``EndpointPolicy``).

Speaking side (``agent.core.speaking.Speaker``): an utterance that ends becomes turn ``n``. Its reply is
streamed, cut into sentences and synthesized; the turn lasts until the caller has heard the reply (client
``playback.mark``s, or the clock). With preemption on (``SessionConfig.preemption``), the reply to the
speculative transcript starts before the end of turn with its output held, is released the moment the
utterance ends as guessed, and is discarded unheard when the caller goes on (``agent.core.preemption``).
Caller speech of at least ``BargeInPolicy.min_speech_ms`` during that time is a barge-in: ``CancelTurn``,
``playback.clear``, and the history keeps only what the caller heard. Backchannels ("uh-huh", "yeah") are
recognised from a quick transcript and do not interrupt. With ``BargeInPolicy.pause`` (a client that can
pause) the reply yields at once: it stops at the caller's speech onset (``PlaybackPause``) at the position
heard, resumes from exactly there when the sound does not take the floor (a cough, an acknowledgement:
``Passed``), and is cut at that position when it does.

Every result carries its request or turn id; results for anything no longer current are dropped here, so
late results of a cancelled turn can never reach the caller. Superseded transcriptions are cancelled
(``CancelTranscription``), so they cannot pile up behind each other.

Nothing can wedge a turn and every failure is spoken (``agent.core.recovery``): each stage has a deadline
checked on every event (``Deadlines``); a failed or overdue stage is reported with an ``error`` and, when
nothing of the reply was said, answered with the apology phrase. The agent also speaks on its own: a
greeting (``open``), a "one moment" when a reply is late, and the idle prompt (``Phrases``).

Drain (``Drain(deadline)``, the server is shutting down): no new turn starts; the turn in progress (a reply
being prepared or played, or an utterance waiting for its transcript) goes on until the caller has heard it,
or is cut at ``deadline``; then the goodbye phrase is spoken and, once heard, the session closes 1001.
"""

from __future__ import annotations

from typing import assert_never

from agent.core import requests
from agent.core.endpointing import claims_floor, no_bid
from agent.core.events import (
    SHUTTING_DOWN,
    AddMessage,
    AudioFrame,
    CancelResponse,
    CancelTranscription,
    ClearInput,
    ClientEnded,
    CloseSession,
    CommitInput,
    CreateResponse,
    DeleteMessage,
    Drain,
    Effect,
    Event,
    InputCleared,
    InputCommitted,
    MessageDeleted,
    Notify,
    PlaybackMark,
    ReplyDelta,
    ReplyEnded,
    ScoreTurn,
    SessionEnded,
    SpeechAudio,
    SpeechEnded,
    SpeechStarted,
    StageFailed,
    Tick,
    Transcribe,
    TranscriptFailed,
    TranscriptReady,
    TruncateReply,
    TurnScored,
)
from agent.core.history import Dialogue
from agent.core.language_text import phrase_text
from agent.core.listening import Began, Ended, Guessed, Heard, Interrupt, Listener, Passed, Yield
from agent.core.speaking import Speaker, localised
from agent.core.turn_detector import EndOfTurn
from agent.core.turn_state import (
    BargeInPolicy,
    Deadlines,
    IdlePolicy,
    PendingTurn,
    Phrases,
    Said,
    SessionConfig,
)

__all__ = ["SHUTTING_DOWN", "BargeInPolicy", "Deadlines", "IdlePolicy", "Phrases", "Session", "SessionConfig"]


class Session:
    """Turn-taking and turn bookkeeping for one caller. See the module docstring for the contract."""

    def __init__(self, config: SessionConfig) -> None:
        self._config = config
        self._barge = config.barge_in
        self._language = config.language
        self._phrases = localised(config.phrases, self._language)
        self._dialogue = Dialogue(config.system_prompt, config.max_history_messages)
        self._speaker = Speaker(config, self._dialogue)
        self._listener = Listener(config.policy, config.endpointing, config.barge_in)
        self._speaker.language = self._listener.language = self._language
        self._pending: PendingTurn | None = None
        self._last_activity_at: float | None = None
        self._prompted = False
        self._closed = False
        self._drain_by: float | None = None
        """Draining: the time by which the turn in progress is cut."""
        self._goodbye = False
        """Draining: the goodbye has been queued (it is never cut)."""
        self._drain_close = (1001, SHUTTING_DOWN)
        """Draining: the close once the goodbye was heard."""
        self._input = bytearray()
        """Turn detection off: the caller's audio since the last commit (16 kHz PCM16)."""
        self._said: Said | None = None
        """The utterance the latest caller turn was made of."""

    @property
    def config(self) -> SessionConfig:
        return self._config

    def reconfigure(self, config: SessionConfig) -> None:
        """New rules from now on (a Realtime client's ``session.update``); the output rate stays what it was."""
        self._config = config
        self._barge = config.barge_in
        self._phrases = localised(config.phrases, self._language)
        self._dialogue.system_prompt = config.system_prompt
        self._speaker.reconfigure(config)
        self._listener.reconfigure(config.policy, config.endpointing, config.barge_in)

    @property
    def language(self) -> str:
        """The call's language now: the latest transcript's, else the one it started with."""
        return self._language

    def _hear_language(self, language: str) -> None:
        """A transcript came in ``language``: replies, fixed phrases and text rules follow it from now on."""
        if language == self._language:
            return
        self._language = language
        self._phrases = localised(self._config.phrases, language)
        self._speaker.language = self._listener.language = language

    @property
    def active_turn(self) -> int | None:
        turn = self._speaker.active
        return turn.number if turn else None

    @property
    def history(self) -> Dialogue:
        return self._dialogue

    def open(self, now: float) -> list[Effect]:
        """Call once when the session starts: the greeting, if there is one."""
        self._last_activity_at = now
        if not self._phrases.greeting or self._closed:
            return []
        return self._speaker.own_turn(self._phrases.greeting, "greeting", now, remember=True)

    def handle(self, event: Event, now: float) -> list[Effect]:
        if self._closed:
            return []
        if self._last_activity_at is None:
            self._last_activity_at = now
        match event:
            case AudioFrame():
                effects = self._on_audio(event, now)
            case TranscriptReady():
                self._hear_language(event.language)
                effects = self._on_transcript(event.request, event.text, now)
            case TurnScored():
                effects = self._on_score(event, now)
            case TranscriptFailed():
                effects = self._on_transcript_failed(event, now)
            case ReplyDelta() | ReplyEnded() | SpeechAudio() | SpeechEnded() | StageFailed() | PlaybackMark():
                effects = self._speaker.result(event, now)
            case Tick():
                effects = []
            case ClientEnded():
                return self._close(now, SessionEnded("client ended the session"), 1000, "session ended")
            case Drain():
                if self._drain_by is None:
                    self._drain_by = event.deadline
                    self._drain_close = (event.code, event.reason)
                effects = self._speaker.discard()  # no new turn while draining
            case CommitInput():
                effects = self._commit(event.pcm, now)
            case ClearInput():
                self._input.clear()
                effects = [Notify(InputCleared())]
            case AddMessage() | CreateResponse() | CancelResponse() | TruncateReply() | DeleteMessage():
                if isinstance(event, CreateResponse) and self._drain_by is not None:
                    return requests.refused("server_shutting_down", SHUTTING_DOWN)
                effects = requests.answer(event, self._speaker, self._dialogue, self._pending is not None, now)
            case _:
                assert_never(event)
        return effects + self._housekeeping(now)

    # ------------------------------------------------------------------------------------- caller audio

    def _on_audio(self, frame: AudioFrame, now: float) -> list[Effect]:
        if not self._config.detect_turns:  # the client commits: no utterances, only a buffer
            if len(self._input) < self._config.policy.max_utterance_ms * 32:
                self._input.extend(frame.pcm)
            return []
        effects: list[Effect] = []
        listener = self._listener
        listener.continuable = self._continuable()
        for heard in listener.push(frame, now, self._agent_busy()):
            effects += self._on_heard(heard, now)
        guess = self._speaker.guess
        if guess is not None and (not listener.speaking or listener.voiced_until_ms != guess.voiced_until_ms):
            effects += self._speaker.discard()  # the caller went on (or the utterance was dropped)
        if listener.last_voice_at == now:
            self._last_activity_at = now
            self._prompted = False
        return effects

    def _on_heard(self, heard: Heard, now: float) -> list[Effect]:
        match heard:
            case Began():
                # Yield at once, unless the sound may be the agent's own echo: then only once it goes on (Yield).
                pause = self._speaker.pause(now) if self._agent_busy() and not heard.unsure else []
                return [*pause, Notify(SpeechStarted(audio_ms=heard.audio_ms))]
            case Yield():
                return self._speaker.pause(now) if self._agent_busy() else []
            case Passed():
                return self._speaker.resume(now)
            case Transcribe() | ScoreTurn() | CancelTranscription():
                return [heard]
            case Interrupt(continues=continues):
                return self._interrupt(now) + ([] if continues is None else self._continue(continues))
            case Guessed():
                return self._preempt(heard, now)
            case Ended():
                return self._utterance_ended(heard, now)
            case _:
                assert_never(heard)

    def _preempt(self, guessed: Guessed, now: float) -> list[Effect]:
        """The speculative transcript of the whole utterance so far: start its reply (output held)."""
        idle = self._speaker.active is None and self._pending is None and self._drain_by is None
        if self._config.preemption == "off" or not idle or not guessed.text.strip():
            return []
        return self._speaker.preempt(guessed.text, guessed.voiced_until_ms, now)

    def _utterance_ended(self, ended: Ended, now: float) -> list[Effect]:
        speaker = self._speaker
        if self._drain_by is not None:  # no new turn while draining: its transcript is not wanted
            return [] if ended.text is not None else [CancelTranscription(ended.request)]
        busy = self._agent_busy() and not ended.interrupted
        guess = speaker.guess
        if guess is not None and not busy and guess.holds(ended.text, ended.end.voiced_until_ms):
            effects = self._drop_pending(now)
            released = speaker.confirm(ended.end, ended.last_voice_at, now)
            if released is not None:
                self._said = Said(speaker.number, ended.end)
                return effects + released
        effects = speaker.discard()
        if ended.text is not None:
            if busy and self._no_bid(ended.text, ended.end.speech_ms):
                return effects + speaker.resume(now)
            effects += self._drop_pending(now) + self._announce(ended.end, now)
            turn = speaker.new_turn(ended.end.utterance_ms, ended.last_voice_at, now, speculative=True)
            return effects + speaker.answer(turn, ended.text, now)
        effects += self._drop_pending(now)
        if not busy:
            effects += self._announce(ended.end, now)
        number = None if busy else speaker.number
        self._pending = PendingTurn(ended.end, ended.request, ended.last_voice_at, now, busy, number)
        return effects

    def _announce(self, end: EndOfTurn, now: float) -> list[Effect]:
        """The utterance ``end`` becomes the next turn (what a continuation of it is joined to)."""
        effects = self._speaker.announce(end, now)
        self._said = Said(self._speaker.number, end)
        return effects

    def _continuable(self) -> Said | None:
        """The caller's words the agent is answering now (their turn's transcript awaited, or its reply under
        way): speech that takes the floor soon after them continues them (``BargeInPolicy.continue_within_ms``)."""
        said, pending, active = self._said, self._pending, self._speaker.active
        if said is None or not self._barge.continue_within_ms or self._drain_by is not None:
            return None
        if pending is not None:
            answering = None if pending.only_if_not_backchannel else pending.turn
        else:
            answering = active.number if active is not None and not active.system else None
        return said if answering == said.turn else None

    def _drop_pending(self, now: float) -> list[Effect]:
        """A newer utterance replaces one still waiting for its transcript."""
        pending, self._pending = self._pending, None
        if pending is None:
            return []
        effects: list[Effect] = [CancelTranscription(pending.request)]
        if pending.only_if_not_backchannel:
            return effects
        turn = self._speaker.new_turn(pending.end.utterance_ms, pending.last_voice_at, pending.ended_at, pending.turn)
        return effects + self._speaker.finish(turn, now, interrupted=True)

    def _commit(self, audio: bytes | None, now: float) -> list[Effect]:
        """The client ends the caller's turn: the utterance in progress (turn detection on), or all the audio
        since the last commit (off), or ``audio``, becomes a turn, transcribed and answered only if the session
        answers turns on its own."""
        if audio is None and self._config.detect_turns:
            effects = [e for heard in self._listener.commit(self._agent_busy()) for e in self._on_heard(heard, now)]
            return effects or requests.refused("input_audio_buffer_commit_empty", "no speech to commit")
        pcm = bytes(self._input) if audio is None else audio
        audio_ms = len(pcm) // 32
        if audio_ms < 100:
            return requests.refused("input_audio_buffer_commit_empty", "at least 100 ms of audio must be committed")
        if audio is None:
            self._input.clear()
        effects = self._drop_pending(now)
        turn, request = self._speaker.number_turn(), self._listener.new_request()
        end = EndOfTurn(pcm, audio_ms, audio_ms, self._listener.position_ms, "silence", self._listener.position_ms)
        self._pending = PendingTurn(end, request, None, now, only_if_not_backchannel=False, turn=turn)
        return [*effects, Notify(InputCommitted(turn, audio_ms)), Transcribe(request, pcm)]

    # --------------------------------------------------------------------------------- transcripts

    def _on_transcript(self, request: int, text: str, now: float) -> list[Effect]:
        pending = self._pending
        if pending is not None and pending.request == request:
            return self._pending_transcribed(pending, text, now)
        effects: list[Effect] = []
        self._listener.continuable = self._continuable()
        for heard in self._listener.answer(request, text, self._agent_busy()):
            effects += self._on_heard(heard, now)
        return effects

    def _on_score(self, scored: TurnScored, now: float) -> list[Effect]:
        self._listener.continuable = self._continuable()
        heard = self._listener.answer_score(scored.request, scored.probability, self._agent_busy())
        return [effect for item in heard for effect in self._on_heard(item, now)]

    def _pending_transcribed(self, pending: PendingTurn, text: str, now: float) -> list[Effect]:
        self._pending = None
        effects: list[Effect] = []
        if pending.only_if_not_backchannel:
            if self._no_bid(text, pending.end.speech_ms):
                return self._speaker.resume(now)
            effects += self._announce(pending.end, now)
        number = pending.turn if not pending.only_if_not_backchannel else None
        turn = self._speaker.new_turn(pending.end.utterance_ms, pending.last_voice_at, pending.ended_at, number)
        return effects + self._speaker.answer(turn, text, now)

    def _on_transcript_failed(self, event: TranscriptFailed, now: float) -> list[Effect]:
        self._listener.forget(event.request)
        pending = self._pending
        if pending is None or pending.request != event.request:
            return []  # a speculative or probe transcript: the final one will be tried anyway
        return self._transcript_lost(pending, event.code, event.message, now)

    def _transcript_lost(self, pending: PendingTurn, code: str, message: str, now: float) -> list[Effect]:
        """The turn's transcript failed or is overdue: say so, and apologise (nothing was understood)."""
        self._pending = None
        if pending.only_if_not_backchannel:
            return self._speaker.resume(now)  # said while the agent talked: maybe "uh-huh"; it goes on
        turn = self._speaker.new_turn(pending.end.utterance_ms, pending.last_voice_at, pending.ended_at, pending.turn)
        return self._speaker.misheard(turn, code, message, now)

    # ------------------------------------------------------------------------------ turn boundaries

    def _no_bid(self, text: str, speech_ms: int) -> bool:
        """Said while the agent talks, ``text`` does not claim the floor: nothing, "uh-huh", or a sound shorter
        than ``backchannel_max_ms`` that does not claim the floor (an interjection such as "wait" or "stop", or
        several words: ``claims_floor``). tiny.en writes words for hums and short acknowledgements ("And may
        Chen." for "mhm", "Amen." for "mm"), so a word or three are no bid; a caller who means to take the floor
        says "wait", says more, or goes on (``bench/backchannels.py``)."""
        barge = self._barge
        if no_bid(text, barge.backchannels, language=self._language):
            return True
        return (
            bool(barge.backchannels)
            and speech_ms < barge.backchannel_max_ms
            and not claims_floor(text, barge.backchannels, language=self._language)
        )

    def _agent_busy(self) -> bool:
        """The agent holds the floor: a reply is being prepared or is still playing."""
        return self._barge.enabled and (self._speaker.active is not None or self._pending is not None)

    def _interrupt(self, now: float) -> list[Effect]:
        """Barge-in (or the drain's deadline): stop the turn in progress; the history keeps what was heard."""
        # The caller goes on talking before their last turn was even transcribed: that turn is moot.
        return self._drop_pending(now) + self._speaker.discard() + self._speaker.interrupt(now)

    def _continue(self, turn: int) -> list[Effect]:
        """The caller's new speech goes on with the words of ``turn`` (they had only paused): the utterance now
        holds both, so its transcript is the whole; ``turn``'s words and the start of its reply leave the
        history, and the next transcript says it ``continues`` them."""
        self._speaker.continues = turn
        return [
            Notify(MessageDeleted(turn, role)) for role in ("user", "assistant") if self._dialogue.remove(turn, role)
        ]

    # -------------------------------------------------------------------------------------- timers

    def _housekeeping(self, now: float) -> list[Effect]:
        draining = self._drain_by is not None
        if self._drain_by is not None and not self._goodbye and now >= self._drain_by:
            return self._interrupt(now) + self._farewell(now)
        speaker = self._speaker
        effects = self._transcript_overdue(now) or speaker.overdue(now)
        if effects:
            return effects
        if speaker.active is not None:
            effects = speaker.tend(now)
            return effects + self._farewell(now) if draining and speaker.active is None else effects
        if self._pending is not None:
            return []
        if draining:
            return self._farewell(now)
        if self._listener.speaking:
            return []
        return self._idle(now)

    def _farewell(self, now: float) -> list[Effect]:
        """Draining and nothing in progress: the goodbye, then, once it has been heard, the drain's close."""
        if self._speaker.active is not None or self._pending is not None:
            return []
        if not self._goodbye and self._phrases.goodbye:
            drain_by = self._drain_by
            if self._listener.speaking and drain_by is not None and now < drain_by:
                return []  # not over the caller's words, unless time is up
            self._goodbye = True
            return self._speaker.own_turn(self._phrases.goodbye, "goodbye", now, remember=False)
        code, reason = self._drain_close
        return self._close(now, SessionEnded(reason), code, reason)

    def _transcript_overdue(self, now: float) -> list[Effect]:
        """The pending turn's transcript missed its deadline: stop it, say so, apologise."""
        deadline_s = self._config.deadlines.asr_s
        pending = self._pending
        if pending is None or not deadline_s or now - pending.ended_at < deadline_s:
            return []
        self._listener.forget(pending.request)
        message = f"no transcript within {deadline_s:g} s"
        return [CancelTranscription(pending.request), *self._transcript_lost(pending, "asr_timeout", message, now)]

    def _idle(self, now: float) -> list[Effect]:
        idle = self._config.idle
        marks = [t for t in (self._last_activity_at, self._speaker.finished_at) if t is not None]
        since = now - max(marks) if marks else 0.0
        if idle.end_after_s and since >= idle.end_after_s:
            return self._close(now, SessionEnded("no speech for a while: session ended"), 1000, "idle timeout")
        if idle.prompt_after_s and not self._prompted and since >= idle.prompt_after_s:
            self._prompted = True
            text = phrase_text("idle_prompt", idle.prompt_text, self._language)
            return self._speaker.own_turn(text, "idle_prompt", now, remember=True)
        return []

    def _close(self, now: float, notice: SessionEnded, code: int, reason: str) -> list[Effect]:
        effects = self._speaker.discard() + self._speaker.interrupt(now, clear=False)
        self._closed = True
        return [*effects, Notify(notice), CloseSession(code, reason)]
