"""A reply prepared before the end of turn: what may run ahead, what is held, and when it is released.

Early in the caller's trailing silence the speculative transcript is known, often hundreds of milliseconds
before the end of turn is decided (the hangover) and long before a remote language model's first token. The
session then starts the reply from it at once (``Preemption``: ``llm``, the reply text; ``llm+tts``, also the
speech of its first sentence) and holds its output: nothing is sent to the caller, the history does not
change. When the end of turn comes with the same transcript (the caller did not go on), the held output is
released in order at that moment; when the caller goes on, or the turn ends differently, the work is
cancelled and nothing of it is ever heard.

``Guess`` is that reply's state; ``Guess.hold`` decides, effect by effect, what runs now and what waits.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.core.events import Effect, FinishSynthesis, GenerateReply, Notify, Synthesize
from agent.core.turn_state import Preemption, Turn


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

    def release(self, now: float) -> list[Effect]:
        """The end of turn is confirmed at ``now``: the caller starts hearing the reply from this moment."""
        turn = self.turn
        turn.preemptive = True
        if turn.first_audio_at is not None:
            turn.first_audio_at = now  # the caller's first audio, not the synthesizer's
        turn.playback.restart(now)
        held, self.held = self.held, []
        return held

    def _runs_ahead(self, effect: Effect) -> bool:
        if isinstance(effect, GenerateReply):
            return True
        if self.mode != "llm+tts":
            return False
        if isinstance(effect, Synthesize):
            return effect.sentence == 0 and effect.phrase is None
        return isinstance(effect, FinishSynthesis)  # everything before it ran: a one-sentence reply
