"""The reply's audio on its way to the caller: the ledger of a turn's frames and the notices around them.

One reason to change: how a turn's audio is accounted for and announced. Each frame of synthesized audio is
counted against its sentence in the turn's ``Playback`` (what was sent; from the clock and the client's marks,
what was heard) and sent on as ``AudioChunk``; the first one sent is preceded by ``AudioStart``, and ``AudioEnd``
follows once synthesis is over and all of it was sent. Frames carry their place in the turn's audio
(``SpeechAudio.offset``): a frame goes to the caller only when it is the next one due and the turn is not paused
for the caller (``agent.core.yielding``) nor prepared ahead of the end of turn (``agent.core.preemption``); while
it is, and while the runtime sends the audio again from the position heard (or from the start, once a prepared
reply is released: ``ResendSpeech``), frames are only counted, and the runtime's copy of them is what is sent. The
runtime posts every frame after waiting for room in the outbound queue, so all reply audio, sent the first time
or again, meets the same backpressure. Pure: no I/O, no clock.
"""

from __future__ import annotations

from agent.core.events import AudioChunk, AudioEnd, AudioStart, Effect, Notify
from agent.core.policies import SessionConfig
from agent.core.turn_state import Turn


def bytes_per_ms(config: SessionConfig) -> float:
    """Bytes of reply audio (PCM16 at the output rate) per millisecond."""
    return config.output_sample_rate * 2 / 1000.0


def send(turn: Turn, pcm: bytes, sentence: int, offset: int | None, config: SessionConfig, now: float) -> list[Effect]:
    """One frame of ``turn``'s audio (of its ``sentence``, at ``offset`` bytes; ``None``: the next one) goes to
    the caller if it is the one due, and is counted if it is new."""
    if not pcm or turn.audio_ended:
        return []
    begin = turn.audio_bytes if offset is None else offset
    end_at = begin + len(pcm)
    per_ms = bytes_per_ms(config)
    if end_at > turn.audio_bytes:  # new audio (a frame sent again was counted the first time)
        if not turn.audio_started:
            turn.first_audio_at = now
        turn.playback.add_audio(sentence, (end_at - max(begin, turn.audio_bytes)) / per_ms)
        turn.audio_bytes = end_at
    if turn.withheld or begin != turn.sent_bytes:
        return []  # waits: it is sent again from where the caller stops hearing, in order
    effects = start(turn, config)
    turn.sent_bytes = end_at
    turn.playback.send_until(end_at / per_ms, now)
    effects.append(Notify(AudioChunk(turn=turn.number, pcm=pcm)))
    return effects + ended(turn)


def start(turn: Turn, config: SessionConfig) -> list[Effect]:
    """``audio.start``, once per turn, before its first frame is sent."""
    if turn.announced:
        return []
    turn.announced = True
    return [Notify(AudioStart(turn=turn.number, sample_rate=config.output_sample_rate))]


def synthesized(turn: Turn, now: float | None = None) -> list[Effect]:
    """Synthesis of ``turn`` is over (the caller may still be hearing it): ``audio.end`` once all was sent.
    ``now``: when (kept for a trace of the turn)."""
    if not turn.reply_finished or turn.speech_finished:
        return []
    turn.speech_finished = True
    turn.speech_done_at = now
    return ended(turn)


def all_sent(turn: Turn) -> bool:
    """Everything synthesized of ``turn`` went to the client (none of it waits to be sent again)."""
    return not turn.withheld and turn.sent_bytes >= turn.audio_bytes


def ended(turn: Turn) -> list[Effect]:
    """``audio.end`` once synthesis is over and its last frame was sent."""
    return end(turn) if turn.speech_finished and all_sent(turn) else []


def end(turn: Turn) -> list[Effect]:
    """``audio.end``, once, if ``audio.start`` was sent."""
    if not turn.announced or turn.audio_ended:
        return []
    turn.audio_ended = True
    return [Notify(AudioEnd(turn=turn.number))]
