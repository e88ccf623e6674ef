"""Yield and resume: the reply stops the moment the caller makes a sound over it, and plays on if they did not
mean to take the floor.

One reason to change: how a reply yields to the caller (``BargeInPolicy.pause``, for a client that can pause).
At the caller's speech onset the active turn's audio stops where it was heard (``PlaybackPause``), and the runtime
posts no more of it (``HoldSpeech``). When the sound does not take the floor (a cough, an acknowledgement) the
turn resumes from exactly that position: the runtime sends the audio it kept again from there (``ResendSpeech``),
frame by frame as the client takes it, like any reply audio (``agent.core.reply_audio``); when it does, the turn
is interrupted and the history keeps what was heard. Each pause ends in a ``YieldOutcome`` for the
metrics. Which sounds take the floor is decided by the listening side and the session. Pure: no I/O, no clock.
"""

from __future__ import annotations

from agent.core import reply_audio
from agent.core.events import Effect, HoldSpeech, Notify, PlaybackPause, ResendSpeech, YieldOutcome
from agent.core.policies import SessionConfig
from agent.core.turn_state import Turn


def pause(turn: Turn | None, config: SessionConfig, now: float) -> list[Effect]:
    """The caller started speaking over ``turn`` (the active one): its audio stops at once where it was heard
    (``playback.pause``) and waits, until ``resume`` or an interruption (``BargeInPolicy.pause``). A reply not
    heard yet waits for every client, one that cannot pause too: nothing starts over a caller who is speaking."""
    if turn is None or turn.paused:
        return []
    if not turn.announced:  # nothing is playing yet: its audio just waits, whatever the client can do
        turn.paused = True
        return [HoldSpeech(turn.number)]
    if not config.barge_in.pause:
        return []
    playback = turn.playback
    if turn.speech_finished and reply_audio.all_sent(turn) and playback.played_ms(now) >= playback.total_ms:
        return []  # all of it has been heard: the turn is only waiting out the client's buffer
    turn.paused = True
    played = playback.pause(now, config.barge_in.pause_overrun_ms, config.output_frame_ms)
    turn.audio_ended = False  # ``audio.end`` comes (again) when the resumed audio is complete
    return [HoldSpeech(turn.number), Notify(PlaybackPause(turn.number, round(played)))]


def resume(turn: Turn | None, config: SessionConfig, now: float) -> list[Effect]:
    """The sound did not take the floor: the paused ``turn`` plays on from exactly where it paused (the start of
    the frame the caller was hearing, so the reply goes on in whole frames). The runtime sends its audio again
    from there (``ResendSpeech``), each frame as the client takes it, and the ledger (``agent.core.reply_audio``)
    lets each one through in order."""
    if turn is None or not turn.paused:
        return []
    turn.paused = False
    effects: list[Effect] = [YieldOutcome(turn.number, resumed=True)] if turn.playback.paused else []
    position = turn.playback.resume(now)
    start = min(int(position * reply_audio.bytes_per_ms(config)) // 2 * 2, turn.audio_bytes)
    turn.sent_bytes = start
    if start < turn.audio_bytes and not turn.announced:
        turn.first_audio_at = now  # the caller's first audio, not the synthesizer's
    effects.append(ResendSpeech(turn.number, start))
    return effects + reply_audio.ended(turn)


def interrupted(turn: Turn) -> list[Effect]:
    """``turn`` is being interrupted: if it was paused, the pause ended without a resume."""
    return [YieldOutcome(turn.number, resumed=False)] if turn.playback.paused else []
