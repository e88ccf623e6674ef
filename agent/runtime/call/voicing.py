"""How one session speaks: its voice, the fallback voice, its fixed phrases, and each reply's retry budget."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agent.core.language_text import phrase_text
from agent.ports import TextToSpeech
from agent.runtime.call.fidelity import FidelitySampler
from agent.runtime.call.phrases import PhraseBook, voice_owner
from agent.work.resilience import RetryBudget

APOLOGY = "Sorry, I couldn't say that. Please try again."


@dataclass(frozen=True, slots=True)
class Fallback:
    """The voice to speak in when the main voice fails or its endpoint's breaker is open (the local voice)."""

    tts: TextToSpeech
    voice: str


@dataclass(frozen=True, slots=True)
class Voicing:
    """Everything a turn's ``TurnSpeech`` needs besides the wire. Built once per session."""

    tts: TextToSpeech
    voice: str
    """The handle ``tts.resolve_voice`` returned."""
    fallback: Fallback | None = None
    phrases: PhraseBook | None = None
    """Where fixed phrases are kept; ``None``: they are synthesized every time."""
    apology_text: str = APOLOGY
    """What is said after the voice failed: its stored recording in the session's voice when there is one,
    else the fallback voice; empty = nothing is said (the failure is still reported)."""
    depth: int = 2
    """Sentences synthesized ahead of the one playing."""
    turn_retries: int = 4
    """Retries one reply may spend, all its sentences together."""
    warm_texts: Mapping[str, str] = field(default_factory=dict)
    """Phrase key → text to prepare at session start (``warm``); empty = nothing to prepare."""
    fidelity: FidelitySampler | None = None
    """Where a spoken reply sentence is offered for scoring against its voice (``None``: off)."""

    def budget(self) -> RetryBudget:
        """A fresh retry budget for one reply."""
        return RetryBudget(self.turn_retries)

    def warm_phrases(self, language: str) -> None:
        """Start synthesizing and keeping the session's fixed phrases in ``language`` that are not kept yet, in
        the background (call it at session start and when the call's language changes, on the loop). Only for a
        voice kept in a store (a cloned voice): a local voice synthesizes a phrase in ~100 ms."""
        if self.phrases is not None and self.warm_texts and voice_owner(self.voice) is not None:
            texts = {key: phrase_text(key, text, language) for key, text in self.warm_texts.items()}
            self.phrases.warm_soon(self.tts, self.voice, texts, language)
