"""When the trailing silence ends the caller's turn, given the evidence known and the evidence still on its way.

The evidence of a pause (``agent.core.endpointing``): its speculative transcript (the words, read by the rules),
the sound's score (Smart Turn) and the words' score (a small language model). On a live server each arrives
some time into the pause: a transcript of a long utterance can take longer than the default hangover on a busy
machine. A pause is never judged blind:

- while the transcript of every voiced frame, or a score asked for it, is on its way, the turn waits for it, up
  to ``hangover_max_ms`` (the only wait that overrides it);
- when the late evidence arrives it decides at once: a transcript that trails off ("for, um,") keeps the turn
  for the longest wait, a finished one ends it as soon as its own hangover has passed;
- evidence that will not come (no speculation, a model that is off, busy or failed) is decided without: with
  no transcript at all the pause ends at the default hangover.

One reason to change: how evidence still on its way holds the end of turn. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.core.endpointing import Completeness, EndpointPolicy, completeness, normalise_phrase
from agent.core.turn_state import Utterance


@dataclass(frozen=True, slots=True)
class Evidence:
    """What is known of a pause (each ``None`` when not known) and what is still on its way."""

    text: str | None = None
    """The speculative transcript of every voiced frame so far."""
    sound: float | None = None
    """The acoustic model's probability that the caller has finished."""
    words: float | None = None
    """The text model's probability that the caller has finished."""
    text_pending: bool = False
    sound_pending: bool = False
    words_pending: bool = False

    @property
    def pending(self) -> bool:
        return self.text_pending or self.sound_pending or self.words_pending


def hangover(policy: EndpointPolicy, evidence: Evidence, language: str) -> int:
    """The trailing silence (ms) after which the pause ends the turn, given ``evidence`` in ``language``."""
    text = evidence.text
    if text is not None and completeness(text, language=language) is Completeness.TRAILING:
        return policy.hangover_max_ms  # the words trail off: nothing still to come can end the turn sooner
    if evidence.pending:
        return policy.hangover_max_ms
    return policy.hangover_for(text, evidence.sound, language=language, words=evidence.words)


def evidence_of(utterance: Utterance, fresh: bool, in_flight: bool) -> Evidence:
    """The evidence of ``utterance``'s pause: ``fresh``, its speculative transcript was asked for every voiced
    frame so far; ``in_flight``, that transcript is still on its way."""
    if not fresh:
        return Evidence()
    return Evidence(
        utterance.spec_text,
        utterance.spec_score,
        utterance.spec_words,
        text_pending=utterance.spec_text is None and in_flight,
        sound_pending=utterance.score_request is not None,
        words_pending=utterance.words_request is not None,
    )


def rescore_due(policy: EndpointPolicy, utterance: Utterance, silence_ms: int, voiced_until_ms: int) -> bool:
    """Time to score the sound of ``utterance``'s pause again (``EndpointPolicy.rescore_ms``), ``silence_ms`` into
    it: its first score is back and the last re-score too, ``rescore_ms`` more of silence has passed since the last,
    fewer than ``rescores`` were asked, and no voice came since (``voiced_until_ms``)."""
    return (
        policy.acoustic
        and policy.rescore_ms > 0
        and utterance.rescores < policy.rescores
        and utterance.spec_voiced_until == voiced_until_ms
        and utterance.score_request is None
        and utterance.spec_score is not None
        and utterance.rescore_request is None
        and silence_ms >= utterance.rescored_at_ms + policy.rescore_ms
    )


def reads_words(policy: EndpointPolicy, text: str, language: str) -> bool:
    """The text model is worth asking about the transcript ``text``: the policy uses it, and its score can change
    the wait (there are words, and they do not trail off by the rules, which wait longest anyway)."""
    if not policy.words or not normalise_phrase(text, language=language):
        return False
    return completeness(text, language=language) is not Completeness.TRAILING
