"""The reply's audio on its way to the caller: the ledger of a turn's frames and the notices around them.

One reason to change: how a turn's audio is accounted for and announced. Each frame of synthesized audio is
counted against its sentence in the turn's ``Playback`` (what was sent; from the clock and the client's marks,
what was heard) and sent on as ``AudioChunk``; the first one sent is preceded by ``AudioStart``, and ``AudioEnd``
follows once synthesis is over. While the turn is paused for the caller (``agent.core.yielding``) its frames are
counted as not sent, and wait. Pure: no I/O, no clock.
"""

from __future__ import annotations

from agent.core.events import AudioChunk, AudioEnd, AudioStart, Effect, Notify
from agent.core.policies import SessionConfig
from agent.core.turn_state import Turn


def bytes_per_ms(config: SessionConfig) -> float:
    """Bytes of reply audio (PCM16 at the output rate) per millisecond."""
    return config.output_sample_rate * 2 / 1000.0


def send(turn: Turn, pcm: bytes, sentence: int, config: SessionConfig, now: float) -> list[Effect]:
    """One frame of synthesized audio of ``turn`` (of its ``sentence``) goes to the caller (or waits, while
    the turn is paused)."""
    if not pcm or turn.audio_ended:
        return []
    if not turn.audio_started:
        turn.first_audio_at = now
    if config.barge_in.pause:
        turn.audio.extend(pcm)  # kept to be sent again from where the caller stopped hearing it
    audio_ms = len(pcm) / bytes_per_ms(config)
    if turn.paused:
        turn.playback.add_audio(sentence, audio_ms, now, sent=False)
        return []
    effects = start(turn, config)
    turn.playback.add_audio(sentence, audio_ms, now)
    effects.append(Notify(AudioChunk(turn=turn.number, pcm=pcm)))
    return effects


def start(turn: Turn, config: SessionConfig) -> list[Effect]:
    """``audio.start``, once per turn, before its first frame is sent."""
    if turn.announced:
        return []
    turn.announced = True
    return [Notify(AudioStart(turn=turn.number, sample_rate=config.output_sample_rate))]


def synthesized(turn: Turn) -> list[Effect]:
    """Synthesis of ``turn`` is over (the caller may still be hearing it): ``audio.end`` unless it is paused."""
    if not turn.reply_finished or turn.speech_finished:
        return []
    turn.speech_finished = True
    return [] if turn.paused else end(turn)


def end(turn: Turn) -> list[Effect]:
    """``audio.end``, once, if ``audio.start`` was sent."""
    if not turn.announced or turn.audio_ended:
        return []
    turn.audio_ended = True
    return [Notify(AudioEnd(turn=turn.number))]
