"""What the listening side of the session core, the speech judge (``agent.core.listening``), returns: its
``SpeechJudgement``s.

One reason to change: what the speech judge tells the session about the caller's speech.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.core.events import CancelTranscriptOrScore, ScoreTurn, ScoreWords, Transcribe
from agent.core.turn_detector import EndOfTurn


@dataclass(frozen=True, slots=True)
class Began:
    audio_ms: int
    unsure: bool = False
    """It may be the agent's own echo (``AudioFrame.echo_unsure``): the agent yields only once it goes on."""


@dataclass(frozen=True, slots=True)
class Yield:
    """A sound that began as possibly the agent's echo has gone on as long as a barge-in needs: yield to it."""


@dataclass(frozen=True, slots=True)
class Interrupt:
    """The caller is taking the floor from the agent. ``continues``: the turn whose words the utterance goes on
    with (``SpeechJudge.continuable``); its audio now comes first in the utterance's."""

    continues: int | None = None


@dataclass(frozen=True, slots=True)
class Ended:
    """An utterance is over.

    ``text`` is its transcript when already known (the speculative one covers it all); otherwise the answer
    to ``request`` will be. ``interrupted``: the utterance already took the floor from the agent.
    """

    end: EndOfTurn
    last_voice_at: float | None
    text: str | None
    request: int
    interrupted: bool


@dataclass(frozen=True, slots=True)
class Guessed:
    """``text`` transcribes the utterance up to ``voiced_until_ms``, and the caller has been silent since."""

    text: str
    voiced_until_ms: int


@dataclass(frozen=True, slots=True)
class Passed:
    """A sound made while the agent held the floor is over and did not take it."""


SpeechJudgement = (
    Began | Yield | Interrupt | Guessed | Ended | Passed | Transcribe | ScoreTurn | ScoreWords | CancelTranscriptOrScore
)
"""What the speech judge decided about the caller's speech: an utterance began, yield, it takes the floor, a guess
of its words, it ended, it passed; or the evidence it asks for (a transcript, a score) and the requests it no longer
wants."""
