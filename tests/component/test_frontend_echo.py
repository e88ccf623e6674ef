"""``CallerAudio`` with the echo guard, as a phone call runs it: reply frames at 8 kHz told to the playout as they
are sent (paced in real time), the caller's μ-law audio pushed as it arrives, on one injected clock."""

from __future__ import annotations

import numpy as np
import pytest

from agent.adapters.webrtc_vad import WebRtcSpeechDetector
from agent.audio import mulaw
from agent.audio.echo import EchoGate, EchoPolicy
from agent.audio.pcm import float_to_pcm16
from agent.audio.playout import Playout
from agent.audio.resample import resample
from agent.config import EchoSettings
from agent.core.events import AudioFrame
from agent.runtime.call.caller_audio import CallerAudio, echo_guard
from testing.echo_audio import RATE, echo_scene

pytestmark = pytest.mark.models  # Piper makes the reply

PHONE = 8000
CHUNK = 160  # 20 ms at 8 kHz
NETWORK_S = 0.015


def call(talk_at_ms: float | None, guarded: bool, echo: bool = True) -> list[bool]:
    """Voiced verdicts, frame by frame, for a call whose caller hears the reply on a speakerphone (-15 dB,
    120 ms, reverberant; ``echo=False``: on headphones), talking over it from ``talk_at_ms``."""
    return [frame.voiced for frame in call_frames(talk_at_ms, guarded, echo)]


def call_frames(talk_at_ms: float | None, guarded: bool, echo: bool = True) -> list[AudioFrame]:
    """The frames of ``call``."""
    scene = echo_scene(-15, 120, talk_at_ms=talk_at_ms, echo=echo)
    far = float_to_pcm16(resample(scene.far, RATE, PHONE))
    near = mulaw.decode(mulaw.encode(float_to_pcm16(resample(scene.near, RATE, PHONE))))
    playout = Playout()
    audio = CallerAudio(PHONE, WebRtcSpeechDetector(3), echo=(playout, EchoGate()) if guarded else None)
    verdicts: list[AudioFrame] = []
    frames = len(near) // (2 * CHUNK)
    sent = 0
    for k in range(frames):
        now = 0.02 * (k + 1) + NETWORK_S  # caller audio k was captured over 20 ms, then on the way
        while sent < frames and 0.02 * sent <= now:  # the pacer sends each reply frame as it is due
            playout.sent(far[2 * CHUNK * sent : 2 * CHUNK * (sent + 1)], PHONE, 0.02 * sent)
            sent += 1
        verdicts += audio.push(near[2 * CHUNK * k : 2 * CHUNK * (k + 1)], now)
    return verdicts


def longest_run(verdicts: list[bool]) -> int:
    run = best = 0
    for voiced in verdicts:
        run = run + 1 if voiced else 0
        best = max(best, run)
    return best


def test_the_echo_of_the_reply_is_not_speech() -> None:
    assert longest_run(call(None, guarded=False)) >= 15  # 300 ms: the agent would interrupt itself
    assert longest_run(call(None, guarded=True)) <= 2  # under the 60 ms onset


def test_talking_over_it_is() -> None:
    verdicts = call(3000, guarded=True)
    alone = call(3000, guarded=False, echo=False)  # the same talk-over with no echo under it
    talk = 3000 // 20
    assert longest_run(verdicts[:talk]) <= 2
    # When 300 ms of speech (a barge-in) has been heard since the talk-over began: as soon as without echo.
    assert barge_in_frame(verdicts, talk) <= barge_in_frame(alone, talk) + 2


def test_only_the_frames_heard_while_the_gate_settles_are_echo_unsure() -> None:
    """Before the lock the prior bounds the echo (a sound it lets through pauses the reply at once); in the
    ``settle_ms`` after it a voiced frame may be a leak of the echo; then the learned gain bounds it."""
    unsure = [frame.echo_unsure for frame in call_frames(None, guarded=True)]
    first = unsure.index(True)
    last = len(unsure) - unsure[::-1].index(True)
    assert first * 20 >= 500 + 1000  # the reply starts at 0.5 s; the lock needs 1 s of it
    assert all(unsure[first:last]) and not any(unsure[:first]) and not any(unsure[last:])
    assert (last - first) * 20 >= EchoPolicy().settle_ms


def barge_in_frame(verdicts: list[bool], start: int) -> int:
    return start + int(np.flatnonzero(np.cumsum(verdicts[start:]) >= 15)[0])


def test_echo_guard_follows_the_settings() -> None:
    assert echo_guard(EchoSettings(mode="off"), twilio=True) is None
    assert echo_guard(EchoSettings(), twilio=False) is None  # browsers cancel echo themselves
    guard = echo_guard(EchoSettings(), twilio=True)
    assert guard is not None and isinstance(guard[0], Playout)
    assert echo_guard(EchoSettings(browser=True), twilio=False) is not None


def test_without_a_reply_nothing_changes() -> None:
    speech = echo_scene(-15, 120, talk_at_ms=0, echo=False, lead_ms=0).near
    pcm = mulaw.decode(mulaw.encode(float_to_pcm16(resample(speech, RATE, PHONE))))
    plain = CallerAudio(PHONE, WebRtcSpeechDetector(3))
    guarded = CallerAudio(PHONE, WebRtcSpeechDetector(3), echo=(Playout(), EchoGate()))
    step = 2 * CHUNK
    a = [f.voiced for k in range(0, len(pcm), step) for f in plain.push(pcm[k : k + step], k / step * 0.02)]
    b = [f.voiced for k in range(0, len(pcm), step) for f in guarded.push(pcm[k : k + step], k / step * 0.02)]
    assert a == b
    assert np.mean(a) > 0.15


@pytest.mark.parametrize("rate", [8000, 24000, 48000])
def test_every_20_ms_chunk_completes_a_detector_frame_at_once(rate: int) -> None:
    """Resampled audio: the filter's look-ahead must not hold each frame back until the next chunk."""
    audio = CallerAudio(rate, WebRtcSpeechDetector(3))
    chunk = bytes(2 * rate // 50)
    assert [len(audio.push(chunk)) for _ in range(10)] == [1] * 10
