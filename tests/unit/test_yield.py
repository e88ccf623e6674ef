"""Yield at once, resume if it was not an interruption: the session core with ``BargeInPolicy.pause``.

The caller starts speaking over a reply: it stops at once (``playback.pause``) where it was heard. The sound
ends after a short silence and its transcript decides: a cough or an "uh-huh" does not take the floor, and
the reply goes on from exactly that position, its audio sent again; real words do (even a short "wait"), and
the barge-in keeps in the history only what was heard before the pause. Only speech that goes on takes the
floor before its transcript is known.
"""

from __future__ import annotations

import struct

from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioFrame,
    AudioStart,
    CancelTurn,
    Effect,
    GenerateReply,
    HoldSpeech,
    PlaybackClear,
    PlaybackMark,
    PlaybackPause,
    ReplyDelta,
    ReplyEnded,
    ResendSpeech,
    SpeechAudio,
    SpeechEnded,
    Tick,
    TranscriptReady,
    TurnMetrics,
    YieldOutcome,
)
from tests.session_driver import FRAME, Driver, events, of, requests, utter

BYTES_PER_MS = 48  # 24 kHz PCM16
REPLY = "Hello there my friend. How are you today?"


def reply_audio(chunks: int = 20) -> list[bytes]:
    """100 ms chunks of a ramp, so that every byte says where in the reply it comes from."""
    samples = [i % 30000 for i in range(chunks * 2400)]
    pcm = struct.pack(f"<{len(samples)}h", *samples)
    return [pcm[i : i + 4800] for i in range(0, len(pcm), 4800)]


def start_turn(d: Driver) -> int:
    (req,) = requests(utter(d))
    d.at(0.1, TranscriptReady(req, "hello", language="en"))
    turn = d.session.active_turn
    assert turn is not None
    d.at(0.01, ReplyDelta(turn, REPLY))
    d.at(0.01, ReplyEnded(turn))
    return turn


def synthesize(d: Driver, turn: int, chunks: list[bytes], *, end: bool = True) -> list[Effect]:
    effects: list[Effect] = []
    for i, pcm in enumerate(chunks):
        effects += d.at(0.001, SpeechAudio(turn, pcm, 0 if i < len(chunks) // 2 else 1))
    if end:
        effects += d.at(0.001, SpeechEnded(turn))
    return effects


def sent_audio(effects: list[Effect]) -> bytes:
    return b"".join(e.pcm for e in events(effects) if isinstance(e, AudioChunk))


def resent(d: Driver, effects: list[Effect], chunks: list[bytes], *, frame: int = 40 * BYTES_PER_MS) -> list[Effect]:
    """``effects`` and what follows when the runtime does as ``ResendSpeech`` asks: it posts the audio it kept
    (``chunks``, as they were posted) again from the start given, in whole frames from there."""
    asked = of(effects, ResendSpeech)
    if not asked:
        return effects
    (resend,) = asked
    kept = b"".join(chunks)
    out = list(effects)
    position = resend.start
    while position < len(kept):
        end = min(position + frame, len(kept))
        out += d.at(0.0, SpeechAudio(resend.turn, kept[position:end], 0, position))
        position = end
    return out


def test_a_cough_pauses_at_once_and_the_reply_resumes_from_the_frame_where_it_was_heard() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    chunks = reply_audio()
    synthesize(d, turn, chunks)
    d.at(0.4, PlaybackMark(turn, 500))  # the client has played 500 ms
    effects = d.audio("SS")  # onset (40 ms of voice) 40 ms after the mark
    (pause,) = of(effects, PlaybackPause)
    assert pause == PlaybackPause(turn, 520)  # heard 540 ms: the start of the 40 ms frame it was in
    assert HoldSpeech(turn) in effects  # the runtime posts no more of it
    assert not of(effects, CancelTurn)
    # the cough goes on a little, then silence: nothing plays meanwhile, however much time passes
    effects = d.audio("SSS" + "." * 9)
    assert not sent_audio(effects) and not of(effects, TurnMetrics)
    assert d.at(0.001, PlaybackMark(turn, 1900)) == []  # a mark sent before the pause reached the client
    (final,) = requests(d.audio("."))  # 200 ms of silence: the sound is over, what was it?
    effects = d.at(0.05, TranscriptReady(final, "Uh...", language="en"))  # no words: it was not an interruption
    assert YieldOutcome(turn, resumed=True) in effects
    assert of(effects, ResendSpeech) == [ResendSpeech(turn, 520 * BYTES_PER_MS)]  # from the paused position
    assert not sent_audio(effects) and not of(effects, AudioEnd)  # it comes as the runtime posts it again
    effects = resent(d, effects, chunks)
    full = b"".join(chunks)
    assert sent_audio(effects) == full[520 * BYTES_PER_MS :]  # exactly from the paused position, nothing lost
    assert not of(effects, AudioStart)  # the same turn goes on
    assert events(effects)[-1] == AudioEnd(turn)  # again, after the last frame: the client dropped its buffer
    assert {len(e.pcm) for e in of(effects, AudioChunk)} == {40 * BYTES_PER_MS}  # whole frames of the wire
    # the turn ends once the rest has been heard, with the whole reply in the history
    (metrics,) = of(d.at(0.1, PlaybackMark(turn, 2000)), TurnMetrics)
    assert metrics.interrupted is False
    assert d.session.history.snapshot()[-1].text == REPLY


def test_the_clock_counts_on_from_the_resumed_position() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    d.at(0.3, Tick())
    (pause,) = of(d.audio("SS"), PlaybackPause)
    paused_at = pause.played_ms
    (final,) = requests(d.audio("." * 10))  # over after 200 ms of silence
    assert sent_audio(resent(d, d.at(0.0, TranscriptReady(final, "", language="en")), reply_audio()))  # resumed
    d.at(0.5, Tick())  # ~0.5 s more heard
    effects = d.audio("SS")  # another sound: paused again, 500 ms (+ 40 ms) further on
    (second,) = of(effects, PlaybackPause)
    assert 500 <= second.played_ms - paused_at <= 560 and second.played_ms % 40 == 0
    (final,) = requests(d.audio("." * 10))
    effects = resent(d, d.at(0.0, TranscriptReady(final, "Ha!", language="en")), reply_audio())
    assert sent_audio(effects) == b"".join(reply_audio())[second.played_ms * BYTES_PER_MS :]


def test_real_words_after_a_pause_barge_in_and_the_history_keeps_what_was_heard_before_it() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    d.at(0.01, PlaybackMark(turn, 1500))  # half of the second sentence played
    effects = d.audio("SS")
    (pause,) = of(effects, PlaybackPause)
    assert pause.played_ms == 1520
    assert not requests(d.audio("S" * 8))  # no quick look at the first syllables: the agent is not talking
    (final,) = requests(d.audio("." * 20))  # as long as a turn's pause: the caller may go on
    d.at(0.5, Tick())  # however long it took, what was heard is what played before the pause
    effects = d.at(0.01, TranscriptReady(final, "Wait, no.", language="en"))  # real words take the floor
    assert CancelTurn(turn) in effects and PlaybackClear(turn) in events(effects)
    assert YieldOutcome(turn, resumed=False) in effects
    (metrics,) = of(effects, TurnMetrics)
    assert metrics.interrupted is True and metrics.heard_ms == 1520
    assert d.session.history.snapshot()[-2].text == "Hello there my friend. How are…"
    assert of(effects, GenerateReply)[0].history[-1].text == "Wait, no."  # and they are the next turn


def test_a_short_word_is_heard_and_takes_the_floor() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    assert of(d.audio("SS"), PlaybackPause)
    (final,) = requests(d.audio("S" + "." * 10))  # 60 ms of voice: shorter than a turn's minimum, still heard
    effects = d.at(0.05, TranscriptReady(final, "Stop.", language="en"))
    assert CancelTurn(turn) in effects and YieldOutcome(turn, resumed=False) in effects


def test_speech_that_goes_on_takes_the_floor_before_its_transcript() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    effects = d.audio("S" * 29)
    assert of(effects, PlaybackPause) and not of(effects, CancelTurn)
    effects = d.audio("S")  # 600 ms (backchannel_max_ms): whatever it says, the caller has the floor
    assert CancelTurn(turn) in effects and PlaybackClear(turn) in events(effects)


def test_an_acknowledgement_pauses_then_resumes() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    d.at(0.2, Tick())
    effects = d.audio("S" * 12)  # 240 ms: over the minimum
    assert of(effects, PlaybackPause) and not requests(effects)
    (final,) = requests(d.audio("." * 20))
    effects = resent(d, d.at(0.05, TranscriptReady(final, "Uh-huh.", language="en")), reply_audio())
    assert YieldOutcome(turn, resumed=True) in effects and sent_audio(effects)
    assert not of(effects, CancelTurn) and d.session.active_turn == turn


def test_a_sound_before_the_reply_audio_holds_it_back_until_the_sound_is_over() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)  # reply text known, no audio yet
    effects = d.audio("SS")
    assert not of(effects, PlaybackPause)  # nothing is playing: nothing to stop
    assert HoldSpeech(turn) in effects  # but its audio waits
    effects = synthesize(d, turn, reply_audio(4), end=False)  # (frames posted before the hold took effect)
    assert not events(effects)  # the audio waits
    (final,) = requests(d.audio("SSSS" + "." * 10))
    effects = d.at(0.0, TranscriptReady(final, "You", language="en"))  # Whisper's word for a noise
    assert ResendSpeech(turn, 0) in effects
    effects = resent(d, effects, reply_audio(4))
    assert of(effects, AudioStart) == [AudioStart(turn, 24000)]
    assert sent_audio(effects) == b"".join(reply_audio(4))
    assert not of(effects, YieldOutcome)  # the caller never heard it stop
    effects = synthesize(d, turn, [b"\x00\x00" * 2400])  # from now on it flows as usual
    assert sent_audio(effects) and AudioEnd(turn) in events(effects)


def test_without_the_capability_a_reply_not_heard_yet_still_waits_for_a_sound_to_be_over() -> None:
    # Nothing has been played, so nothing needs the client to stop: a reply does not start over a caller who is
    # speaking again, on any wire (a Realtime client, a /ws client that cannot pause).
    d = Driver()
    turn = start_turn(d)  # reply text known, no audio yet
    effects = d.audio("SS")
    assert HoldSpeech(turn) in effects and not of(effects, PlaybackPause)
    assert not events(synthesize(d, turn, reply_audio(4), end=False))  # the audio waits
    (quick,) = requests(d.audio("SSSS"))  # without the capability the first syllables are looked at at once
    assert not d.at(0.0, TranscriptReady(quick, "You", language="en"))  # Whisper's word for a noise
    effects = d.audio("." * 15)
    assert ResendSpeech(turn, 0) in effects
    effects = resent(d, effects, reply_audio(4))
    assert of(effects, AudioStart) == [AudioStart(turn, 24000)]
    assert sent_audio(effects) == b"".join(reply_audio(4))


def test_without_the_capability_words_before_the_reply_audio_take_the_floor_unheard() -> None:
    d = Driver()
    turn = start_turn(d)
    assert HoldSpeech(turn) in d.audio("SS")
    synthesize(d, turn, reply_audio(4), end=False)
    (quick,) = requests(d.audio("SSSS"))
    effects = d.at(0.0, TranscriptReady(quick, "Wait, I also need", language="en"))
    effects += d.audio("S" * 10)
    assert of(effects, CancelTurn) and not of(effects, AudioStart) and not sent_audio(effects)


def test_synthesis_ending_during_the_pause_sends_audio_end_after_the_resumed_audio() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    chunks = reply_audio()
    synthesize(d, turn, chunks[:10], end=False)
    d.at(0.2, Tick())
    assert of(d.audio("SS"), PlaybackPause)
    effects = synthesize(d, turn, chunks[10:])
    assert not events(effects)  # neither audio nor audio.end while paused
    (final,) = requests(d.audio("." * 10))
    effects = resent(d, d.at(0.0, TranscriptReady(final, "Mm.", language="en")), chunks)
    notices = events(effects)
    assert isinstance(notices[-1], AudioEnd) and len(of(effects, AudioEnd)) == 1


def test_without_the_capability_nothing_pauses() -> None:
    d = Driver()
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    effects = d.audio("SS" + "." * 20)
    assert not of(effects, PlaybackPause) and not of(effects, AudioChunk)
    assert d.session.active_turn == turn


def test_a_reply_that_has_all_been_heard_is_not_paused() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio(2))
    d.at(0.01, PlaybackMark(turn, 200))  # all played; the turn waits out the client's buffer margin
    effects = d.audio("SS")
    assert not of(effects, PlaybackPause)


def test_an_acknowledgement_known_from_the_speculative_transcript_resumes_after_the_short_silence() -> None:
    d = Driver(pause=True, speculative_ms=100)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    assert of(d.audio("S" * 20), PlaybackPause)  # 400 ms: longer than the minimum
    (spec,) = requests(d.audio("." * 5))  # the speculative transcript, taken as for any turn
    assert d.at(0.0, TranscriptReady(spec, "Uh-huh.", language="en")) == []
    effects = resent(d, d.audio("." * 5), reply_audio())  # 200 ms of silence (not a turn's 400): an acknowledgement
    assert YieldOutcome(turn, resumed=True) in effects and sent_audio(effects) and not requests(effects)


def test_real_words_in_a_pause_of_the_callers_speech_take_the_floor_and_their_reply_is_prepared() -> None:
    d = Driver(pause=True, speculative_ms=100, preemption="llm")
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    assert of(d.audio("S" * 16), PlaybackPause)  # 320 ms of speech: more than a barge-in needs
    (spec,) = requests(d.audio("." * 5))
    effects = d.at(0.0, TranscriptReady(spec, "Stop, what time is it?", language="en"))
    assert CancelTurn(turn) in effects and PlaybackClear(turn) in events(effects)  # before the utterance ends
    (ask,) = of(effects, GenerateReply)  # the caller's words are being answered already, output held
    assert ask.history[-1].text == "Stop, what time is it?" and not of(effects, AudioStart)


def test_a_speculative_transcript_of_an_acknowledgement_does_not_take_the_floor() -> None:
    d = Driver(pause=True, speculative_ms=100, preemption="llm")
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    d.audio("S" * 16)
    (spec,) = requests(d.audio("." * 5))
    assert not of(d.at(0.0, TranscriptReady(spec, "Okay, got it.", language="en")), CancelTurn)
    assert d.session.active_turn == turn


def test_a_short_sound_that_whisper_makes_a_word_of_is_still_no_interruption() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    assert of(d.audio("SS"), PlaybackPause)
    (final,) = requests(d.audio("SS" + "." * 10))  # 160 ms: shorter than a barge-in needs
    effects = d.at(
        0.05, TranscriptReady(final, "On.", language="en")
    )  # tiny.en's word for a 200 ms cough, seen in the tests
    assert YieldOutcome(turn, resumed=True) in effects and not of(effects, CancelTurn)


def test_a_sound_that_may_be_the_agents_own_echo_is_yielded_to_only_once_it_goes_on() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    d.at(0.2, Tick())

    def unsure(pattern: str) -> list[Effect]:
        out: list[Effect] = []
        for ch in pattern:
            d.now += 0.02
            out += d.session.handle(AudioFrame(FRAME, ch == "S", 20, echo_unsure=True), d.now)
        return out

    assert not of(unsure("S" * 9), PlaybackPause)  # 180 ms: maybe the echo, before the gate knows its path
    (pause,) = of(unsure("S"), PlaybackPause)  # 200 ms (a barge-in's minimum here): not a leak of the echo
    assert pause.turn == turn
    # a short leak while the gate is learning never stops the reply at all
    d2 = Driver(pause=True)
    turn2 = start_turn(d2)
    synthesize(d2, turn2, reply_audio())
    effects: list[Effect] = []
    for ch in "SSSS" + "." * 12:
        d2.now += 0.02
        effects += d2.session.handle(AudioFrame(FRAME, ch == "S", 20, echo_unsure=True), d2.now)
    assert not of(effects, PlaybackPause) and not of(effects, CancelTurn)


def test_audio_sent_again_goes_out_in_order_and_once() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    chunks = reply_audio(10)
    synthesize(d, turn, chunks[:6], end=False)
    d.at(0.3, PlaybackMark(turn, 300))
    assert of(d.audio("SS"), PlaybackPause)  # at 340 ms
    (final,) = requests(d.audio("." * 10))
    effects = d.at(0.0, TranscriptReady(final, "Hm.", language="en"))
    (resend,) = of(effects, ResendSpeech)
    kept = b"".join(chunks)
    # a frame posted before the pause took effect arrives only now, ahead of the copies: it waits its turn
    late = SpeechAudio(turn, chunks[6], 1, 6 * 4800)
    assert not sent_audio(d.at(0.0, late))
    out = resent(d, effects, chunks[:7])  # the runtime's copies: 340 ms on, through the late frame
    assert sent_audio(out) == kept[resend.start : 7 * 4800]
    assert not sent_audio(d.at(0.0, late))  # a copy that comes twice is sent once
    out = d.at(0.0, SpeechAudio(turn, chunks[7], 1, 7 * 4800))  # and new audio follows as usual
    assert sent_audio(out) == chunks[7]


def test_the_turn_is_not_over_while_its_audio_is_still_being_sent_again() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    chunks = reply_audio(10)
    synthesize(d, turn, chunks)
    d.at(0.2, Tick())
    assert of(d.audio("SS"), PlaybackPause)
    (final,) = requests(d.audio("." * 10))
    effects = d.at(0.0, TranscriptReady(final, "Mm.", language="en"))
    assert of(effects, ResendSpeech)
    # a client that takes the audio slowly: the clock passes the whole reply before its last frames are sent
    out = resent(d, effects, chunks[:5])
    out += d.at(3.0, Tick())
    assert not of(out, TurnMetrics) and not of(out, AudioEnd)  # not heard to the end: it has not all been sent
    kept = b"".join(chunks)
    for position in range(5 * 4800, len(kept), 4800):
        out += d.at(0.0, SpeechAudio(turn, kept[position : position + 4800], 1, position))
    # once all of it was sent the turn ends as usual: the clock says it has been heard by now
    notices = events(out)
    (metrics,) = of(out, TurnMetrics)
    assert notices.index(AudioEnd(turn)) == notices.index(metrics) - 1 and metrics.interrupted is False


def test_a_far_end_that_cannot_drop_what_it_was_sent_resumes_after_the_lead_it_still_plays() -> None:
    d = Driver(pause=True, pause_overrun_ms=100)  # AudioSocket: no clear, 100 ms sent ahead
    turn = start_turn(d)
    synthesize(d, turn, reply_audio())
    d.at(0.5, PlaybackMark(turn, 500))
    (pause,) = of(d.audio("SS"), PlaybackPause)
    assert pause.played_ms == 640  # 540 ms heard by the clock, and the 100 ms lead it plays anyway
    (final,) = requests(d.audio("." * 10))
    assert ResendSpeech(turn, 640 * BYTES_PER_MS) in d.at(0.0, TranscriptReady(final, "Ahem.", language="en"))


def test_a_second_sound_while_the_audio_is_sent_again_pauses_it_where_it_got_to() -> None:
    d = Driver(pause=True)
    turn = start_turn(d)
    chunks = reply_audio()
    synthesize(d, turn, chunks)
    d.at(0.2, Tick())
    (first,) = of(d.audio("SS"), PlaybackPause)
    (final,) = requests(d.audio("." * 10))
    effects = d.at(0.0, TranscriptReady(final, "Hm.", language="en"))
    (resend,) = of(effects, ResendSpeech)
    kept = b"".join(chunks)
    d.at(0.0, SpeechAudio(turn, kept[resend.start : 6 * 4800], 0, resend.start))  # only this much was sent again
    effects = d.at(1.0, Tick()) + d.audio("SS")  # a second after resuming: the clock is past what was sent
    (second,) = of(effects, PlaybackPause)
    assert HoldSpeech(turn) in effects
    assert second.played_ms == 600  # what was sent, not what the clock says
    (final,) = requests(d.audio("." * 10))
    effects = resent(d, d.at(0.0, TranscriptReady(final, "Hm.", language="en")), chunks)
    assert sent_audio(effects) == kept[600 * BYTES_PER_MS :]
    assert first.played_ms < second.played_ms
