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
``playback.mark``s, or the clock).
Caller speech of at least ``BargeInPolicy.min_speech_ms`` during that time is a barge-in: ``CancelTurn``,
``playback.clear``, and the history keeps only what the caller heard. Backchannels ("uh-huh", "yeah") are
recognised from a quick transcript and do not interrupt.

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

from agent.core.endpointing import is_backchannel
from agent.core.events import (
    AudioFrame,
    CancelReply,
    CancelTranscription,
    CancelTurn,
    ClientEnded,
    CloseSession,
    Drain,
    Effect,
    ErrorNotice,
    Event,
    Notify,
    PlaybackClear,
    PlaybackMark,
    ReplyDelta,
    ReplyEnded,
    SessionEnded,
    SpeechAudio,
    SpeechEnded,
    SpeechStarted,
    SpeechStopped,
    StageFailed,
    Tick,
    Transcribe,
    TranscriptFailed,
    TranscriptReady,
    TranscriptText,
)
from agent.core.history import Dialogue
from agent.core.listening import Began, Ended, Heard, Interrupt, Listener
from agent.core.recovery import overdue
from agent.core.speaking import Speaker
from agent.core.turn_policy import EndOfTurn
from agent.core.turn_state import (
    BargeInPolicy,
    Deadlines,
    IdlePolicy,
    PendingTurn,
    Phrases,
    SessionConfig,
    Turn,
    turn_metrics,
)

__all__ = ["SHUTTING_DOWN", "BargeInPolicy", "Deadlines", "IdlePolicy", "Phrases", "Session", "SessionConfig"]

SHUTTING_DOWN = "server is shutting down"
"""Reason of the 1001 close (and the ``session.ended`` notice) at the end of a drain."""


class Session:
    """Turn-taking and turn bookkeeping for one caller. See the module docstring for the contract."""

    def __init__(self, config: SessionConfig) -> None:
        self._config = config
        self._barge = config.barge_in
        self._phrases = config.phrases
        self._speaker = Speaker(config)
        self._listener = Listener(config.policy, config.endpointing, config.barge_in)
        self._dialogue = Dialogue(config.system_prompt, config.max_history_messages)
        self._turns = 0
        self._pending: PendingTurn | None = None
        self._active: Turn | None = None
        self._last_activity_at: float | None = None
        self._prompted = False
        self._closed = False
        self._drain_by: float | None = None
        """Draining: the time by which the turn in progress is cut."""
        self._goodbye = False
        """Draining: the goodbye has been queued (it is never cut)."""

    @property
    def active_turn(self) -> int | None:
        return self._active.number if self._active else None

    @property
    def history(self) -> Dialogue:
        return self._dialogue

    def open(self, now: float) -> list[Effect]:
        """Call once when the session starts: the greeting, if there is one."""
        self._last_activity_at = now
        if not self._phrases.greeting or self._closed:
            return []
        return self._system_turn(self._phrases.greeting, "greeting", now, remember=True)

    def handle(self, event: Event, now: float) -> list[Effect]:
        if self._closed:
            return []
        if self._last_activity_at is None:
            self._last_activity_at = now
        match event:
            case AudioFrame():
                effects = self._on_audio(event, now)
            case TranscriptReady():
                effects = self._on_transcript(event.request, event.text, now)
            case TranscriptFailed():
                effects = self._on_transcript_failed(event, now)
            case ReplyDelta():
                turn = self._current(event.turn)
                effects = [] if turn is None else self._speaker.delta(turn, event.text, now)
            case ReplyEnded():
                effects = self._on_reply_ended(event.turn, now)
            case SpeechAudio():
                turn = self._current(event.turn)
                effects = [] if turn is None else self._speaker.audio(turn, event.pcm, event.sentence, now)
            case SpeechEnded():
                turn = self._current(event.turn)
                effects = [] if turn is None else self._speaker.audio_done(turn)
            case StageFailed():
                effects = self._on_failure(event, now)
            case PlaybackMark():
                if self._active is not None and self._active.number == event.turn:
                    self._active.playback.mark(event.played_ms, now)
                effects = []
            case Tick():
                effects = []
            case ClientEnded():
                return self._close(now, SessionEnded("client ended the session"), 1000, "session ended")
            case Drain():
                if self._drain_by is None:
                    self._drain_by = event.deadline
                effects = []
            case _:
                assert_never(event)
        return effects + self._housekeeping(now)

    # ------------------------------------------------------------------------------------- caller audio

    def _on_audio(self, frame: AudioFrame, now: float) -> list[Effect]:
        effects: list[Effect] = []
        for heard in self._listener.push(frame, now, self._agent_busy()):
            effects += self._on_heard(heard, now)
        if self._listener.last_voice_at == now:
            self._last_activity_at = now
            self._prompted = False
        return effects

    def _on_heard(self, heard: Heard, now: float) -> list[Effect]:
        match heard:
            case Began():
                return [Notify(SpeechStarted(audio_ms=heard.audio_ms))]
            case Transcribe() | CancelTranscription():
                return [heard]
            case Interrupt():
                return self._interrupt(now)
            case Ended():
                return self._utterance_ended(heard, now)
            case _:
                assert_never(heard)

    def _utterance_ended(self, ended: Ended, now: float) -> list[Effect]:
        if self._drain_by is not None:  # no new turn while draining: its transcript is not wanted
            return [] if ended.text is not None else [CancelTranscription(ended.request)]
        busy = self._agent_busy() and not ended.interrupted
        if ended.text is not None:
            if busy and self._no_bid(ended.text):
                return []
            return self._start_turn(ended, now, ended.text)
        effects = self._drop_pending(now)
        self._pending = PendingTurn(ended.end, ended.request, ended.last_voice_at, now, only_if_not_backchannel=busy)
        if not busy:
            effects += self._announce(ended.end, now)
        return effects

    def _drop_pending(self, now: float) -> list[Effect]:
        """A newer utterance replaces one still waiting for its transcript."""
        pending, self._pending = self._pending, None
        if pending is None:
            return []
        effects: list[Effect] = [CancelTranscription(pending.request)]
        if pending.only_if_not_backchannel:
            return effects
        turn = Turn(self._turns, pending.end.utterance_ms, pending.last_voice_at, pending.ended_at)
        return effects + self._finish(turn, now, interrupted=True)

    def _announce(self, end: EndOfTurn, now: float) -> list[Effect]:
        """Close the previous turn if it is still going, and number the new one."""
        effects = self._supersede(now)
        self._turns += 1
        effects.append(Notify(SpeechStopped(turn=self._turns, audio_ms=end.audio_ms)))
        return effects

    def _start_turn(self, ended: Ended, now: float, text: str) -> list[Effect]:
        """A turn whose transcript is already known (the speculative one was reused)."""
        effects = self._drop_pending(now) + self._announce(ended.end, now)
        turn = Turn(self._turns, ended.end.utterance_ms, ended.last_voice_at, now, speculative=True)
        self._active = turn
        return effects + self._transcribed(turn, text, now)

    # --------------------------------------------------------------------------------- transcripts

    def _on_transcript(self, request: int, text: str, now: float) -> list[Effect]:
        pending = self._pending
        if pending is not None and pending.request == request:
            return self._pending_transcribed(pending, text, now)
        effects: list[Effect] = []
        for heard in self._listener.answer(request, text, self._agent_busy()):
            effects += self._on_heard(heard, now)
        return effects

    def _pending_transcribed(self, pending: PendingTurn, text: str, now: float) -> list[Effect]:
        self._pending = None
        effects: list[Effect] = []
        if pending.only_if_not_backchannel:
            if self._no_bid(text):
                return []
            effects += self._announce(pending.end, now)
        turn = Turn(
            number=self._turns,
            utterance_ms=pending.end.utterance_ms,
            last_voice_at=pending.last_voice_at,
            ended_at=pending.ended_at,
        )
        self._active = turn
        return effects + self._transcribed(turn, text, now)

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
            return []  # said while the agent talked: it may have been "uh-huh"; the agent goes on
        turn = Turn(self._turns, pending.end.utterance_ms, pending.last_voice_at, pending.ended_at)
        turn.transcript_at = turn.began_at = now
        self._active = turn
        effects: list[Effect] = [Notify(ErrorNotice(code=code, message=message, turn=turn.number))]
        return effects + self._apologise(turn, now)

    def _transcribed(self, turn: Turn, text: str, now: float) -> list[Effect]:
        turn.transcript_at = turn.began_at = now
        text = text.strip()
        effects: list[Effect] = [Notify(TranscriptText(turn=turn.number, text=text))]
        if not text:
            return effects + self._finish(turn, now, interrupted=False)
        self._dialogue.add("user", text)
        effects.append(self._speaker.ask(turn, self._dialogue))
        return effects

    # -------------------------------------------------------------------------------------- replies

    def _current(self, number: int) -> Turn | None:
        turn = self._active
        return turn if turn is not None and turn.number == number else None

    def _on_reply_ended(self, number: int, now: float, *, failed: bool = False) -> list[Effect]:
        turn = self._current(number)
        return [] if turn is None else self._speaker.ended(turn, now, failed=failed)

    def _apologise(self, turn: Turn, now: float) -> list[Effect]:
        """End ``turn`` (nothing of a reply was said) with the apology, or at once without one."""
        effects = self._speaker.apologise(turn, now)
        return self._finish(turn, now, interrupted=False) if effects is None else effects

    def _on_failure(self, event: StageFailed, now: float) -> list[Effect]:
        turn = self._current(event.turn)
        if turn is None:
            return []
        effects: list[Effect] = [Notify(ErrorNotice(code=event.code, message=event.message, turn=turn.number))]
        if event.stage == "llm" and not turn.reply_finished:
            # Speak what was generated before the failure (or an apology); the turn ends when that is heard.
            return effects + self._on_reply_ended(turn.number, now, failed=True)
        if event.stage == "tts":
            # The synthesis pipeline speaks a short apology (fallback voice) and ends with SpeechEnded.
            return effects
        effects.append(CancelTurn(turn.number))
        return effects + self._finish(turn, now, interrupted=False)

    # ------------------------------------------------------------------------------ turn boundaries

    def _no_bid(self, text: str) -> bool:
        """Said while the agent talks, ``text`` does not claim the floor (nothing, or "uh-huh")."""
        return not text.strip() or is_backchannel(text, self._barge.backchannels)

    def _agent_busy(self) -> bool:
        """The agent holds the floor: a reply is being prepared or is still playing."""
        return self._barge.enabled and (self._active is not None or self._pending is not None)

    def _interrupt(self, now: float) -> list[Effect]:
        """Barge-in (or the drain's deadline): stop the turn in progress; the history keeps what was heard."""
        # The caller goes on talking before their last turn was even transcribed: that turn is moot.
        effects = self._drop_pending(now)
        turn = self._active
        if turn is None:
            return effects
        effects.append(CancelTurn(turn.number))
        if turn.audio_started:
            effects.append(Notify(PlaybackClear(turn.number)))
        return effects + self._finish(turn, now, interrupted=True)

    def _supersede(self, now: float) -> list[Effect]:
        """A new turn starts while the previous one is still going (barge-in disabled): close it."""
        turn = self._active
        if turn is None:
            return []
        self._active = None
        effects: list[Effect] = [CancelTurn(turn.number)]
        if turn.audio_started:
            effects.append(Notify(PlaybackClear(turn.number)))
        return effects + self._finish(turn, now, interrupted=True)

    def _finish(self, turn: Turn, now: float, *, interrupted: bool) -> list[Effect]:
        effects = self._speaker.end_audio(turn)
        heard_ms: float | None = None
        reply = "".join(turn.reply).strip()
        if interrupted and turn.audio_started:
            heard_ms = turn.playback.played_ms(now)
            reply = turn.playback.heard_text(heard_ms)
        elif interrupted:
            reply = ""  # nothing of it was heard
        self._dialogue.add("assistant", reply)
        effects.append(Notify(turn_metrics(turn, interrupted, heard_ms)))
        if self._active is turn:
            self._active = None
        self._last_activity_at = now
        return effects

    # -------------------------------------------------------------------------------------- timers

    def _housekeeping(self, now: float) -> list[Effect]:
        draining = self._drain_by is not None
        if self._drain_by is not None and not self._goodbye and now >= self._drain_by:
            return self._interrupt(now) + self._farewell(now)
        effects = self._deadlines(now)
        if effects:
            return effects
        turn = self._active
        if turn is not None and turn.speech_finished:
            if turn.playback.finished(now, self._barge.playback_margin_ms):
                effects = self._finish(turn, now, interrupted=False)
                return effects + self._farewell(now) if draining else effects
            return []
        if turn is not None:
            return self._speaker.hold(turn, now)
        if self._pending is not None:
            return []
        if draining:
            return self._farewell(now)
        if self._listener.speaking:
            return []
        return self._idle(now)

    def _farewell(self, now: float) -> list[Effect]:
        """Draining and nothing in progress: the goodbye, then, once it has been heard, close 1001."""
        if self._active is not None or self._pending is not None:
            return []
        if not self._goodbye and self._phrases.goodbye:
            drain_by = self._drain_by
            if self._listener.speaking and drain_by is not None and now < drain_by:
                return []  # not over the caller's words, unless time is up
            self._goodbye = True
            return self._system_turn(self._phrases.goodbye, "goodbye", now, remember=False)
        return self._close(now, SessionEnded(SHUTTING_DOWN), 1001, SHUTTING_DOWN)

    def _deadlines(self, now: float) -> list[Effect]:
        """Stages that missed their deadline: stop them, say so, and apologise (``agent.core.recovery``)."""
        deadlines = self._config.deadlines
        pending = self._pending
        if pending is not None and deadlines.asr_s and now - pending.ended_at >= deadlines.asr_s:
            self._listener.forget(pending.request)
            message = f"no transcript within {deadlines.asr_s:g} s"
            return [CancelTranscription(pending.request), *self._transcript_lost(pending, "asr_timeout", message, now)]
        turn = self._active
        code = None if turn is None else overdue(turn, now, deadlines)
        if turn is None or code is None:
            return []
        if code == "llm_timeout":
            failed = StageFailed(turn.number, "llm", code, f"no reply text within {deadlines.first_text_s:g} s")
            return [CancelReply(turn.number), *self._on_failure(failed, now)]
        # Synthesis is stuck (or the reply as a whole is too slow): end the turn, then apologise in a turn
        # of its own, since this turn's synthesis cannot be trusted to say anything any more.
        message = "speech did not start in time" if code == "tts_timeout" else "the reply took too long"
        effects: list[Effect] = [
            CancelTurn(turn.number),
            Notify(ErrorNotice(code=code, message=message, turn=turn.number)),
            *self._finish(turn, now, interrupted=True),  # the history keeps only what was heard
        ]
        if not turn.system and self._phrases.apology:
            effects += self._system_turn(self._phrases.apology, "apology", now, remember=False)
        return effects

    def _idle(self, now: float) -> list[Effect]:
        idle = self._config.idle
        since = now - (self._last_activity_at if self._last_activity_at is not None else now)
        if idle.end_after_s and since >= idle.end_after_s:
            return self._close(now, SessionEnded("no speech for a while: session ended"), 1000, "idle timeout")
        if idle.prompt_after_s and not self._prompted and since >= idle.prompt_after_s:
            self._prompted = True
            return self._system_turn(idle.prompt_text, "idle_prompt", now, remember=True)
        return []

    def _system_turn(self, text: str, phrase: str, now: float, *, remember: bool) -> list[Effect]:
        """A turn the agent starts on its own: the greeting, the idle prompt, an apology."""
        self._turns += 1
        self._active, effects = self._speaker.own_turn(self._turns, text, phrase, now, remember=remember)
        return effects

    def _close(self, now: float, notice: SessionEnded, code: int, reason: str) -> list[Effect]:
        effects: list[Effect] = []
        if self._active is not None:
            turn = self._active
            effects.append(CancelTurn(turn.number))
            effects += self._finish(turn, now, interrupted=True)
        self._closed = True
        return [*effects, Notify(notice), CloseSession(code, reason)]
