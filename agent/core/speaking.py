"""The speaking side of the session core: what one turn says, and its audio on the way to the caller.

``Speaker`` turns a turn's streamed reply text into sentences to synthesize, adds the fixed phrases the
agent says on its own (apology, hold, greeting, idle prompt: ``Synthesize.phrase``), and accounts for the
reply audio as it goes out (``audio.start``, frames, ``audio.end``, what was sent per sentence). It works on
the ``Turn`` the session hands it; which turn is current, when a turn ends and what the history keeps stay
with the session. Pure: no I/O, no clock.
"""

from __future__ import annotations

from agent.core.chunker import SentenceChunker
from agent.core.events import (
    APOLOGY_SENTENCE,
    HOLD_SENTENCE,
    AudioChunk,
    AudioEnd,
    AudioStart,
    Effect,
    FinishSynthesis,
    GenerateReply,
    Notify,
    ReplyText,
    Synthesize,
)
from agent.core.history import Dialogue
from agent.core.recovery import hold_due
from agent.core.turn_state import SessionConfig, Turn


class Speaker:
    def __init__(self, config: SessionConfig) -> None:
        self._config = config
        self._phrases = config.phrases
        self._bytes_per_ms = config.output_sample_rate * 2 / 1000.0

    def ask(self, turn: Turn, dialogue: Dialogue) -> GenerateReply:
        """Start the reply of ``turn`` (its transcript is in ``dialogue``)."""
        turn.chunker = SentenceChunker(first_min_chars=self._config.first_chunk_min_chars)
        return GenerateReply(turn=turn.number, history=dialogue.snapshot())

    def delta(self, turn: Turn, text: str, now: float) -> list[Effect]:
        if turn.reply_finished or not text:
            return []
        if turn.first_text_at is None:
            turn.first_text_at = now
        turn.reply.append(text)
        effects: list[Effect] = [Notify(ReplyText(turn=turn.number, text=text, done=False))]
        return effects + self._sentences(turn, turn.chunker.push(text), now)

    def ended(self, turn: Turn, now: float, *, failed: bool = False) -> list[Effect]:
        """No more reply text; ``failed``: it broke off, and if nothing was said the apology is."""
        if turn.reply_finished:
            return []
        turn.reply_finished = True
        turn.reply_done_at = now
        speak = self._sentences(turn, turn.chunker.flush(), now)
        if failed and not turn.playback.sentences and self._phrases.apology:
            # Nothing of the reply was said: the caller hears an apology instead of silence.
            text = self._phrases.apology
            speak = [self._phrase(turn, text, APOLOGY_SENTENCE, "apology", now)]
        else:
            text = "".join(turn.reply).strip()
        return [Notify(ReplyText(turn=turn.number, text=text, done=True)), *speak, FinishSynthesis(turn.number)]

    def apologise(self, turn: Turn, now: float) -> list[Effect] | None:
        """End ``turn`` (nothing of a reply was said) with the apology phrase; ``None`` when there is none."""
        if not self._phrases.apology:
            return None
        turn.reply_finished = True
        text = self._phrases.apology
        return [
            Notify(ReplyText(turn=turn.number, text=text, done=True)),
            self._phrase(turn, text, APOLOGY_SENTENCE, "apology", now),
            FinishSynthesis(turn.number),
        ]

    def hold(self, turn: Turn, now: float) -> list[Effect]:
        """ "One moment", once per turn, when the reply is late and nothing has been queued to say yet."""
        phrases = self._phrases
        if not hold_due(turn, now, phrases):
            return []
        turn.held = True
        return [self._phrase(turn, phrases.hold, HOLD_SENTENCE, "hold", now)]

    def own_turn(self, number: int, text: str, phrase: str, now: float, *, remember: bool) -> tuple[Turn, list[Effect]]:
        """A turn the agent starts on its own (no utterance): ``reply.done`` and the phrase's audio.

        ``remember``: the phrase is the turn's reply text, which the history keeps (greeting, idle prompt;
        not an apology).
        """
        turn = Turn(number, 0, None, None, system=True)
        turn.began_at = now
        turn.reply_finished = True
        if remember:
            turn.reply = [text]
            speak = self._phrase(turn, text, turn.playback.add_sentence(text), phrase, now)
        else:
            speak = self._phrase(turn, text, APOLOGY_SENTENCE, phrase, now)
        return turn, [Notify(ReplyText(turn=number, text=text, done=True)), speak, FinishSynthesis(number)]

    def audio(self, turn: Turn, pcm: bytes, sentence: int, now: float) -> list[Effect]:
        """One frame of synthesized audio of ``turn`` (of its ``sentence``) goes to the caller."""
        if not pcm or turn.audio_ended:
            return []
        effects: list[Effect] = []
        if not turn.audio_started:
            turn.first_audio_at = now
            effects.append(Notify(AudioStart(turn=turn.number, sample_rate=self._config.output_sample_rate)))
        turn.playback.add_audio(sentence, len(pcm) / self._bytes_per_ms, now)
        effects.append(Notify(AudioChunk(turn=turn.number, pcm=pcm)))
        return effects

    def audio_done(self, turn: Turn) -> list[Effect]:
        """Synthesis of ``turn`` is over (the caller may still be hearing it)."""
        if not turn.reply_finished or turn.speech_finished:
            return []
        turn.speech_finished = True
        return self.end_audio(turn)

    def end_audio(self, turn: Turn) -> list[Effect]:
        if not turn.audio_started or turn.audio_ended:
            return []
        turn.audio_ended = True
        return [Notify(AudioEnd(turn=turn.number))]

    def _sentences(self, turn: Turn, sentences: list[str], now: float) -> list[Effect]:
        if sentences and turn.first_synthesis_at is None:
            turn.first_synthesis_at = now
        return [Synthesize(turn.number, text, turn.playback.add_sentence(text)) for text in sentences]

    def _phrase(self, turn: Turn, text: str, sentence: int, phrase: str, now: float) -> Synthesize:
        """A fixed phrase outside the reply's text (its audio is not part of what the history keeps)."""
        if turn.first_synthesis_at is None:
            turn.first_synthesis_at = now
        return Synthesize(turn.number, text, sentence, phrase=phrase)
