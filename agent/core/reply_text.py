"""A reply's text, from the model to speech: asked for in rounds (another after the tools it called have
answered), cut into sentences to synthesize as it streams, ended with an apology when nothing could be said, and
the hold phrase while it waits on a tool.

One reason to change: how the text of a reply becomes speech. The speaking side (``agent.core.speaking``) owns
the turns and hands each one here with what it runs under (``Asking``); the rules of tool calls themselves are
``agent.core.tools``'. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.core import tools
from agent.core.chunker import SentenceChunker
from agent.core.events import (
    APOLOGY_SENTENCE,
    HOLD_SENTENCE,
    Effect,
    FinishSynthesis,
    GenerateReply,
    Notify,
    ReplyText,
    Synthesize,
)
from agent.core.history import in_language
from agent.core.lexicon import abbreviations
from agent.core.policies import Phrases, SessionConfig
from agent.core.turn_state import Turn
from agent.ports import ChatMessage


@dataclass(frozen=True, slots=True)
class Asking:
    """What a reply is asked for and spoken under: the session's rules, the language, the phrases in it."""

    config: SessionConfig
    language: str
    phrases: Phrases


def ask(turn: Turn, asking: Asking, history: tuple[ChatMessage, ...], choice: str | None = None) -> GenerateReply:
    """A round of ``turn``'s reply: the model is asked with ``history`` (the first round's is kept for the next)."""
    turn.chunker = SentenceChunker(abbreviations(asking.language), first_min_chars=asking.config.first_chunk_min_chars)
    if turn.tools.round == 1:
        turn.asked = history
    policy, language = asking.config.tools, asking.language
    return GenerateReply(
        turn.number, in_language(history, language), policy.specs, choice or policy.choice, language=language
    )


def delta(turn: Turn, asking: Asking, text: str, now: float) -> list[Effect]:
    """More reply text: shown to the client, and each sentence it completes synthesized."""
    if turn.reply_finished or not text:
        return []
    if turn.first_text_at is None:
        turn.first_text_at = now
    turn.reply.append(text)
    effects: list[Effect] = [Notify(ReplyText(turn=turn.number, text=text, done=False))]
    return effects + sentences(turn, asking, turn.chunker.push(text), now)


def ended(turn: Turn, asking: Asking, now: float, *, failed: bool = False) -> list[Effect]:
    """No more text in this round; ``failed``: it broke off, and if nothing was said the apology is. A round that
    called tools goes on once they are answered (``after_call``); the reply ends after the last."""
    if turn.reply_finished:
        return []
    rounds = turn.tools
    speak = sentences(turn, asking, turn.chunker.flush(), now)
    if rounds.round_calls and not rounds.round_ended and not failed:
        rounds.round_ended = True
        if tools.next_round(rounds, asking.config.tools) is not False:
            return speak + after_call(turn, asking, now)
    turn.reply_finished = True
    turn.reply_done_at = now
    if (failed or rounds.failed) and not turn.playback.sentences and asking.phrases.apology:
        # Nothing of the reply was said (the model failed, or a tool did and the model said nothing of it): the
        # caller hears an apology instead of silence.
        text = asking.phrases.apology
        speak = [phrase(turn, asking, text, APOLOGY_SENTENCE, "apology", now)]
    else:
        text = "".join(turn.reply).strip()
    return [Notify(ReplyText(turn=turn.number, text=text, done=True)), *speak, FinishSynthesis(turn.number)]


def after_call(turn: Turn, asking: Asking, now: float) -> list[Effect]:
    """A call of ``turn`` was answered: the next round once the reply waits on nothing more (or its end)."""
    policy = asking.config.tools
    going_on = tools.next_round(turn.tools, policy)
    if going_on is None:
        return []
    if not going_on:
        return ended(turn, asking, now)
    choice = tools.begin_round(turn.tools, policy)
    turn.began_at = now  # the model's deadlines count from its new request
    if turn.reply and not turn.reply[-1].endswith((" ", "\n")):
        turn.reply.append(" ")
    return [ask(turn, asking, (*turn.asked, *turn.tools.exchange("".join(turn.reply).strip())), choice)]


def waiting(turn: Turn, asking: Asking, now: float) -> list[Effect]:
    """``turn`` waits on tools: the calls that timed out are answered so (and the reply goes on), and the hold
    phrase plays once when the wait is long and nothing was said."""
    late = tools.timed_out(turn.tools, now)
    if late:
        return tools.timeout_effects(turn.number, late) + after_call(turn, asking, now)
    hold, said = asking.phrases.hold, turn.first_synthesis_at is not None
    if turn.held or not hold or not tools.filler_due(turn.tools, asking.config.tools, now, said=said):
        return []
    turn.held = True
    return [phrase(turn, asking, hold, HOLD_SENTENCE, "hold", now)]


def sentences(turn: Turn, asking: Asking, texts: list[str], now: float) -> list[Effect]:
    """Synthesize each of ``texts``, the reply's next sentences."""
    if texts and turn.first_synthesis_at is None:
        turn.first_synthesis_at = now
    language = asking.language
    return [Synthesize(turn.number, text, turn.playback.add_sentence(text), language=language) for text in texts]


def phrase(turn: Turn, asking: Asking, text: str, sentence: int, name: str, now: float) -> Synthesize:
    """A fixed phrase ``name`` outside the reply's text (its audio is not part of what the history keeps)."""
    if turn.first_synthesis_at is None:
        turn.first_synthesis_at = now
    return Synthesize(turn.number, text, sentence, phrase=name, language=asking.language)
