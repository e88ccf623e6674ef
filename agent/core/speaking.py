"""The speaking side of the session core: the agent's turns, from the reply's first word to what was heard.

One reason to change: the lifecycle of the agent's turns. ``Speaker`` numbers the turns and owns the one being
answered (``active``). It hands a turn's streamed reply text and tool calls to ``agent.core.reply_text`` (rounds,
sentences; the rules of tool calls are ``agent.core.tools``), adds the fixed phrases the agent says on its own
(apology, hold, greeting, idle prompt, goodbye: ``Synthesize.phrase``), passes the reply audio to the ledger
(``agent.core.reply_audio``), and ends turns: played out, interrupted, superseded, failed or overdue
(``agent.core.recovery``), keeping in the history only what the caller heard (and the tools it called).

A reply prepared ahead of the end of turn is ``agent.core.preemption``'s, a reply yielding to the caller's
sound ``agent.core.yielding``'s; when the caller speaks, which utterance becomes a turn, draining and idling
stay with the session (``agent.core.session``), as listening does with ``agent.core.listening``. Pure: no I/O,
no clock.
"""

from __future__ import annotations

from typing import assert_never

from agent.core import reply_audio, reply_text, tools, yielding
from agent.core.call_language import CallLanguage
from agent.core.events import (
    APOLOGY_SENTENCE,
    HOLD_SENTENCE,
    CancelReply,
    CancelTurn,
    Effect,
    ErrorNotice,
    FinishSynthesis,
    Notify,
    PlaybackClear,
    PlaybackMark,
    ReplyDelta,
    ReplyEnded,
    ReplyText,
    ReplyToolCall,
    SpeechAudio,
    SpeechEnded,
    SpeechStopped,
    StageFailed,
    ToolDone,
    ToolOutputAdded,
    ToolResult,
    TranscriptText,
)
from agent.core.history import Dialogue
from agent.core.language_text import localised
from agent.core.playback import Playback
from agent.core.policies import Phrases, SessionConfig
from agent.core.recovery import hold_due, overdue
from agent.core.reply_text import Asking
from agent.core.turn_detector import EndOfTurn
from agent.core.turn_state import Turn, turn_metrics
from agent.ports import ChatMessage

_KEEP_PLAYBACKS = 32
"""Finished turns whose reply timeline is kept, so that a client can still cut their text to what it played."""

TurnResult = ReplyDelta | ReplyToolCall | ReplyEnded | ToolDone | SpeechAudio | SpeechEnded | StageFailed | PlaybackMark
"""What the runtime reports about a turn's work (and the client about its playback)."""


class Speaker:
    """The agent's turns for one session: numbered here, the active one answered, each ended once."""

    def __init__(self, config: SessionConfig, dialogue: Dialogue, language: CallLanguage) -> None:
        self._config = config
        self._language = language
        self._localised = (config.phrases, language.current, localised(config.phrases, language.current))
        self._dialogue = dialogue
        self._number = 0
        self.active: Turn | None = None
        """The turn being answered: its reply is being prepared or is still playing."""
        self.finished_at: float | None = None
        """When the last turn ended (the idle timers count from there)."""
        self._heard: dict[int, Playback] = {}
        """The reply timelines of the latest finished turns (``truncate``)."""
        self.continues: int | None = None
        """The next transcript goes on with this turn's words (``TranscriptText.continues``)."""

    def reconfigure(self, config: SessionConfig) -> None:
        """New rules from now on (the output rate stays: it is fixed once audio has been sent)."""
        self._config = config

    @property
    def language(self) -> str:
        """The language replies are asked for and spoken in, and fixed phrases said in: the call's, now."""
        return self._language.current

    @property
    def phrases(self) -> Phrases:
        """The fixed phrases, in the language replies are spoken in."""
        phrases, language, said = self._localised
        if phrases is not self._config.phrases or language != self._language.current:
            language = self._language.current
            said = localised(self._config.phrases, language)
            self._localised = (self._config.phrases, language, said)
        return said

    def number_turn(self) -> int:
        """Number a turn that has no utterance (a message the client added, a reply it asked for)."""
        self._number += 1
        return self._number

    # ---------------------------------------------------------------------------------- starting turns

    def announce(self, end: EndOfTurn, now: float) -> list[Effect]:
        """An utterance ended: close the previous turn if it is still going, and number the new one."""
        effects = self.supersede(now)
        self._number += 1
        effects.append(Notify(SpeechStopped(turn=self._number, audio_ms=end.audio_ms)))
        return effects

    @property
    def number(self) -> int:
        """The number of the latest turn."""
        return self._number

    def new_turn(
        self,
        utterance_ms: int,
        last_voice_at: float | None,
        ended_at: float,
        number: int | None = None,
        *,
        speculative: bool = False,
        heard: EndOfTurn | None = None,
    ) -> Turn:
        """The turn announced as ``number`` (default: the latest), its reply not started yet; ``speculative``: its
        transcript is the one taken during the trailing silence; ``heard``: the utterance it answers."""
        number = self._number if number is None else number
        return Turn(number, utterance_ms, last_voice_at, ended_at, speculative=speculative, heard=heard)

    def answer(self, turn: Turn, text: str, now: float) -> list[Effect]:
        """``turn``'s transcript is ``text``: it becomes the active turn and its reply starts."""
        self.active = turn
        turn.transcript_at = turn.began_at = now
        text = text.strip()
        effects: list[Effect] = [Notify(TranscriptText(turn.number, text, self._continued(), language=self.language))]
        self._dialogue.add("user", text, turn.number)
        if not text or not self._config.respond:
            return effects + self.finish(turn, now, interrupted=False)
        return [*effects, reply_text.ask(turn, self._asking, self._dialogue.snapshot())]

    def misheard(self, turn: Turn, code: str, message: str, now: float) -> list[Effect]:
        """``turn``'s transcript failed or is overdue: say so, and apologise (nothing was understood)."""
        self.continues = None
        self.active = turn
        turn.transcript_at = turn.began_at = now
        return [Notify(ErrorNotice(code=code, message=message, turn=turn.number)), *self._apologise(turn, now)]

    def _continued(self) -> int | None:
        continues, self.continues = self.continues, None
        return continues

    def own_turn(self, text: str, phrase: str, now: float, *, remember: bool) -> list[Effect]:
        """A turn the agent starts on its own (greeting, idle prompt, apology, goodbye): ``reply.done`` and the
        phrase's audio. ``remember``: the phrase is the turn's reply text, which the history keeps."""
        self._number += 1
        turn = self.active = Turn(self._number, 0, None, None, system=True)
        turn.began_at = now
        turn.reply_finished = True
        if remember:
            turn.reply = [text]
            speak = reply_text.phrase(turn, self._asking, text, turn.playback.add_sentence(text), phrase, now)
        else:
            speak = reply_text.phrase(turn, self._asking, text, APOLOGY_SENTENCE, phrase, now)
        return [Notify(ReplyText(turn=turn.number, text=text, done=True)), speak, FinishSynthesis(turn.number)]

    @property
    def generating(self) -> bool:
        """The active turn's reply is still being written or synthesized (not only played out)."""
        turn = self.active
        return turn is not None and not (turn.reply_finished and turn.speech_finished)

    def respond(self, instructions: str | None, now: float) -> list[Effect]:
        """A reply to the conversation so far, asked for by the client (``CreateResponse``). A reply the client
        has been sent in full but may still be playing is over for it: it ends here, whole (or as truncated)."""
        previous = self.active
        effects = self.finish(previous, now, interrupted=False) if previous is not None else []
        turn = self.active = Turn(self.number_turn(), 0, None, None)
        turn.transcript_at = turn.began_at = now
        return [*effects, reply_text.ask(turn, self._asking, self._dialogue.snapshot(instructions))]

    def truncate(self, number: int, audio_end_ms: int, now: float) -> list[Effect] | None:
        """The client played ``audio_end_ms`` of turn ``number``'s reply: a reply still going stops there; the
        history keeps the text heard. ``None``: no reply of that turn is known (or it is not that long)."""
        turn = self.active
        if turn is not None and turn.number == number:
            if audio_end_ms > turn.playback.sent_ms + 1:
                return None
            turn.playback.mark(audio_end_ms, now)
            return [CancelTurn(turn.number), *self.finish(turn, now, interrupted=True)]
        playback = self._heard.get(number)
        if playback is None or audio_end_ms > playback.total_ms + 1:
            return None
        self._dialogue.replace(number, "assistant", playback.heard_text(audio_end_ms))
        return []

    def prepare(self, turn: Turn, text: str) -> list[Effect]:
        """The transcript notice and the reply request of ``turn``, whose transcript is ``text``, the history left
        as it is: a reply prepared ahead of the end of turn (``agent.core.preemption``)."""
        notice: Effect = Notify(TranscriptText(turn.number, text, self.continues, language=self.language))
        history = (*self._dialogue.snapshot(), ChatMessage("user", text))
        return [notice, reply_text.ask(turn, self._asking, history)]

    def adopt(self, turn: Turn, text: str) -> None:
        """The reply prepared ahead for ``turn`` is confirmed: it becomes the active turn, ``text`` its words."""
        self.active = turn
        self._dialogue.add("user", text, turn.number)
        self.continues = None

    @property
    def config(self) -> SessionConfig:
        return self._config

    @property
    def _asking(self) -> Asking:
        return Asking(self._config, self.language, self.phrases)

    def tool_result(self, result: ToolResult, now: float) -> list[Effect] | None:
        """The client's result of a call of the active reply (``tools.from_client``): one the reply waits on lets
        it go on; a call that is not the client's is refused (``not_your_call``), nothing changes. ``None``: the
        active reply made no such call."""
        turn = self.active
        found = "unknown" if turn is None else tools.from_client(turn.tools, result, now)
        if turn is None or found == "unknown":
            return None
        if found == "not_yours":
            return tools.not_yours(result.call_id)
        if found == "taken":
            return reply_text.after_call(turn, self._asking, now)
        if found == "kept":
            return [Notify(ToolOutputAdded(turn.number, result.call_id, result.output))]
        return []  # late: answered already

    # ------------------------------------------------------------------------------- the turn's work

    def result(self, event: TurnResult, now: float) -> list[Effect]:
        """What the runtime (or the client) reports about the active turn ``event.turn``; stale reports are
        dropped."""
        turn = self.active
        if turn is None or turn.number != event.turn:
            return []
        return self.advance(turn, event, now)

    def advance(self, turn: Turn, event: TurnResult, now: float) -> list[Effect]:
        """``turn`` (the active one, or a reply prepared ahead) moves on with what was reported about it."""
        match event:
            case ReplyDelta():
                return reply_text.delta(turn, self._asking, event.text, now)
            case ReplyToolCall():
                return tools.call(turn.tools, turn.number, event.call, self._config.tools, now)
            case ReplyEnded():
                return reply_text.ended(turn, self._asking, now)
            case ToolDone():
                timeout = event.code == "tool_timeout"
                if not tools.answered(turn.tools, event.call_id, event.output, event.ok, now, timeout):
                    return []
                return reply_text.after_call(turn, self._asking, now)
            case SpeechAudio():
                return reply_audio.send(turn, event.pcm, event.sentence, event.offset, self._config, now)
            case SpeechEnded():
                return reply_audio.synthesized(turn, now)
            case StageFailed():
                return self._failed(turn, event, now)
            case PlaybackMark():
                turn.playback.mark(event.played_ms, now)
                return []
            case _:
                assert_never(event)

    def _failed(self, turn: Turn, event: StageFailed, now: float) -> list[Effect]:
        effects: list[Effect] = [Notify(ErrorNotice(code=event.code, message=event.message, turn=turn.number))]
        if event.stage == "llm" and not turn.reply_finished:
            # Speak what was generated before the failure (or an apology); the turn ends when that is heard.
            return effects + reply_text.ended(turn, self._asking, now, failed=True)
        if event.stage == "tts":
            # The synthesis pipeline speaks a short apology (fallback voice) and ends with SpeechEnded.
            return effects
        effects.append(CancelTurn(turn.number))
        return effects + self.finish(turn, now, interrupted=False)

    def _apologise(self, turn: Turn, now: float) -> list[Effect]:
        """End ``turn`` (nothing of a reply was said) with the apology phrase, or at once without one."""
        if not self.phrases.apology:
            return self.finish(turn, now, interrupted=False)
        turn.reply_finished = True
        text = self.phrases.apology
        return [
            Notify(ReplyText(turn=turn.number, text=text, done=True)),
            reply_text.phrase(turn, self._asking, text, APOLOGY_SENTENCE, "apology", now),
            FinishSynthesis(turn.number),
        ]

    # ------------------------------------------------------------------------------------ ending turns

    def tend(self, now: float) -> list[Effect]:
        """The active turn as time passes: the hold phrase when its reply is late, its end once heard."""
        turn = self.active
        if turn is None:
            return []
        if turn.tools.waiting:
            return reply_text.waiting(turn, self._asking, now)
        if not turn.speech_finished:
            if not hold_due(turn, now, self.phrases):
                return []
            turn.held = True
            return [reply_text.phrase(turn, self._asking, self.phrases.hold, HOLD_SENTENCE, "hold", now)]
        if not reply_audio.all_sent(turn):
            return []  # paused, or still being sent again after a pause: not heard to the end
        if turn.playback.finished(now, self._config.barge_in.playback_margin_ms):
            return self.finish(turn, now, interrupted=False)
        return []

    def overdue(self, now: float) -> list[Effect]:
        """The active turn missed a deadline: stop it, say so, and apologise (``agent.core.recovery``)."""
        turn = self.active
        deadlines = self._config.deadlines
        code = None if turn is None else overdue(turn, now, deadlines)
        if turn is None or code is None:
            return []
        if code == "llm_timeout":
            failed = StageFailed(turn.number, "llm", code, f"no reply text within {deadlines.first_text_s:g} s")
            return [CancelReply(turn.number), *self._failed(turn, failed, now)]
        # Synthesis is stuck (or the reply as a whole is too slow): end the turn, then apologise in a turn
        # of its own, since this turn's synthesis cannot be trusted to say anything any more.
        message = "speech did not start in time" if code == "tts_timeout" else "the reply took too long"
        effects: list[Effect] = [
            CancelTurn(turn.number),
            Notify(ErrorNotice(code=code, message=message, turn=turn.number)),
            *self.finish(turn, now, interrupted=True),  # the history keeps only what was heard
        ]
        if not turn.system and self.phrases.apology:
            effects += self.own_turn(self.phrases.apology, "apology", now, remember=False)
        return effects

    def interrupt(self, now: float, *, clear: bool = True) -> list[Effect]:
        """Stop the active turn (barge-in, a newer turn; ``clear=False``: the session's end, nothing more is
        played anyway); the history keeps what was heard."""
        turn = self.active
        if turn is None:
            return []
        effects: list[Effect] = [CancelTurn(turn.number), *yielding.interrupted(turn)]
        if clear and turn.announced:
            effects.append(Notify(PlaybackClear(turn.number)))
        return effects + self.finish(turn, now, interrupted=True)

    def supersede(self, now: float) -> list[Effect]:
        """A new turn starts while the previous one is still going (barge-in disabled): close it."""
        return self.interrupt(now)

    def finish(self, turn: Turn, now: float, *, interrupted: bool) -> list[Effect]:
        """``turn`` is over: ``audio.end`` if still due, what the history keeps, its metrics."""
        effects = reply_audio.end(turn)
        heard_ms: float | None = None
        reply = "".join(turn.reply).strip()
        if interrupted and turn.announced:
            heard_ms = turn.playback.played_ms(now)
            reply = turn.playback.heard_text(heard_ms)
        elif interrupted:
            reply = ""  # nothing of it was heard
        tools.interrupted(turn.tools, now)
        for message in turn.tools.exchange(reply) or (ChatMessage("assistant", reply.strip()),):
            if message.text or message.calls or message.role == "tool":
                self._dialogue.add_message(message, turn.number, client_calls=turn.tools.client_calls)
        self._heard[turn.number] = turn.playback
        while len(self._heard) > _KEEP_PLAYBACKS:
            del self._heard[next(iter(self._heard))]
        effects.append(Notify(turn_metrics(turn, interrupted, heard_ms, now)))
        if self.active is turn:
            self.active = None
        self.finished_at = now
        return effects
