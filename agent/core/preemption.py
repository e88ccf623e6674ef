"""A reply prepared before the end of turn: what may run ahead, what is held, and when it is released.

Early in the caller's trailing silence the speculative transcript is known, often hundreds of milliseconds
before the end of turn is decided (the hangover) and long before a remote language model's first token. The
session then starts the reply from it at once (``Preemption``: ``llm``, the reply text; ``llm+tts``, also the
speech of its first sentence) and holds its output: nothing is sent to the caller, the history does not
change (its audio is counted, and kept by the runtime). When the end of turn comes with the same transcript (the
caller did not go on), the held output is released in order at that moment, its audio sent from the start
through the same backpressure as any other (``ResendSpeech``); when the caller goes on, or the turn ends
differently, the work is cancelled and nothing of it is ever heard.

One reason to change: how a reply is prepared ahead of the end of turn. ``Guess`` is that reply's state;
``Guess.hold`` decides, effect by effect, what runs now and what waits. ``Preemptor`` starts, confirms and
discards it on the speaking side (``agent.core.speaking``); when to try is the session's decision. Pure: no
I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.core import tools
from agent.core.events import (
    CancelTurn,
    Effect,
    FinishSynthesis,
    GenerateReply,
    Notify,
    PreemptionOutcome,
    ResendSpeech,
    StageFailed,
    Synthesize,
)
from agent.core.policies import Preemption
from agent.core.speaking import Speaker, TurnResult
from agent.core.turn_detector import EndOfTurn
from agent.core.turn_state import Turn


@dataclass(slots=True)
class Guess:
    """The reply to ``text``, the speculative transcript of speech voiced until ``voiced_until_ms``."""

    turn: Turn
    text: str
    voiced_until_ms: int
    mode: Preemption
    held: list[Effect] = field(default_factory=list)
    _work_held: bool = False

    def holds(self, text: str | None, voiced_until_ms: int) -> bool:
        """The utterance ended exactly as guessed: same speech, same transcript."""
        return text is not None and voiced_until_ms == self.voiced_until_ms and text.strip() == self.text

    def hold(self, effects: list[Effect]) -> list[Effect]:
        """The effects that run now; the others are kept, in order, for ``release``.

        Messages to the caller always wait. Work runs ahead only as the mode allows: the reply text
        (``GenerateReply``) always, the first sentence's speech with ``llm+tts``; once one piece of work
        waits, every later one waits behind it, so the order of a turn's work never changes.
        """
        run: list[Effect] = []
        for effect in effects:
            if isinstance(effect, Notify):
                self.held.append(effect)
            elif not self._work_held and self._runs_ahead(effect):
                run.append(effect)
            else:
                self._work_held = True
                self.held.append(effect)
        return run

    def release(self, now: float, keep: bool) -> list[Effect]:
        """The end of turn is confirmed at ``now``: the caller starts hearing the reply from this moment. What was
        synthesized of it is sent from its start (``ResendSpeech``), each frame as the client takes it, like any
        reply audio; ``keep``: the turn may be paused later, so the runtime keeps its audio."""
        turn = self.turn
        turn.preemptive = True
        turn.prepared = False
        tools.released(turn.tools, now)
        if turn.first_audio_at is not None:
            turn.first_audio_at = now  # the caller's first audio, not the synthesizer's
        held, self.held = self.held, []
        return [*held, ResendSpeech(turn.number, 0, keep=keep)]

    def _runs_ahead(self, effect: Effect) -> bool:
        if isinstance(effect, GenerateReply):
            return True
        if self.mode != "llm+tts":
            return False
        if isinstance(effect, Synthesize):
            return effect.sentence == 0 and effect.phrase is None
        return isinstance(effect, FinishSynthesis)  # everything before it ran: a one-sentence reply


class Preemptor:
    """The reply prepared ahead for ``speaker``: at most one ``guess`` at a time, not a turn until confirmed."""

    def __init__(self, speaker: Speaker) -> None:
        self._speaker = speaker
        self.guess: Guess | None = None
        """A reply prepared before the end of turn, not released yet (it is not a turn yet)."""

    def preempt(self, text: str, voiced_until_ms: int, mode: Preemption, now: float) -> list[Effect]:
        """Start the reply to the speculative transcript ``text`` before the end of turn, output held."""
        effects = self.discard()
        speaker = self._speaker
        turn = Turn(speaker.number + 1, 0, None, None, speculative=True, prepared=True)
        turn.transcript_at = turn.began_at = now
        guess = self.guess = Guess(turn, text.strip(), voiced_until_ms, mode)
        return effects + guess.hold(speaker.prepare(turn, guess.text))

    def confirm(self, end: EndOfTurn, last_voice_at: float | None, now: float) -> list[Effect] | None:
        """The utterance ended as guessed: the prepared reply becomes the turn and is released now.

        ``None`` (and the guess discarded by the caller) when it cannot be: the turn ended otherwise."""
        guess, speaker = self.guess, self._speaker
        if guess is None or guess.turn.number != speaker.number + 1:
            return None
        self.guess = None
        effects = speaker.announce(end, now)
        turn = guess.turn
        turn.utterance_ms, turn.last_voice_at, turn.ended_at = end.utterance_ms, last_voice_at, now
        turn.heard = end
        speaker.adopt(turn, guess.text)
        effects.append(PreemptionOutcome(turn.number, hit=True, synthesized_ms=turn.playback.total_ms))
        return effects + guess.release(now, speaker.config.barge_in.pause)

    def discard(self) -> list[Effect]:
        """The caller went on (or the turn ended otherwise): the prepared reply is dropped unheard."""
        guess, self.guess = self.guess, None
        if guess is None:
            return []
        number, synthesized_ms = guess.turn.number, guess.turn.playback.total_ms
        return [CancelTurn(number), PreemptionOutcome(number, hit=False, synthesized_ms=synthesized_ms)]

    def owns(self, turn: int) -> bool:
        """Turn ``turn`` is the prepared reply's (its work reports go to ``result``)."""
        return self.guess is not None and self.guess.turn.number == turn

    def result(self, event: TurnResult, now: float) -> list[Effect]:
        """What the runtime reports about the prepared reply's work (``owns(event.turn)``): held like the rest."""
        guess = self.guess
        if guess is None or guess.turn.number != event.turn:
            return []
        if isinstance(event, StageFailed):
            return self.discard()  # the end of turn asks again, and reports a failure that persists
        return guess.hold(self._speaker.advance(guess.turn, event, now))
