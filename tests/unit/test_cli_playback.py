"""The clients' side of ``playback.pause`` (protocol v1 with the ``playback.pause`` capability), without a server
or a sound device: the live client's jitter buffer and message handling (``clients/playback.py``,
``clients/mic.py``), the protocol client's session state (``clients/session_state.py``), and ``converse`` over a
real socket against a scripted fake server that pauses and resumes a reply.
"""

from __future__ import annotations

import json

import pytest

from clients.conversation import Conversation
from clients.mic import on_server_message
from clients.playback import CAPABILITIES, PlaybackBuffer
from clients.session_state import SessionState

RATE = 24000
MS = RATE * 2 // 1000  # bytes per millisecond of PCM16 mono at 24 kHz


def _audio(ms: int, value: int) -> bytes:
    """``ms`` of a constant sample ``value``, so that where a byte came from can be told."""
    return value.to_bytes(2, "little", signed=True) * (ms * RATE // 1000)


def _turn(buffer: PlaybackBuffer, turn: int, ms: int, value: int = 100) -> None:
    buffer.start_turn(turn)
    buffer.push(_audio(ms, value))


# --- the live client's buffer ------------------------------------------------------------------------------


def test_buffer_plays_in_order_and_marks_the_turns_position() -> None:
    buffer = PlaybackBuffer(RATE)
    assert buffer.mark() is None  # nothing to report before the first audio.start
    _turn(buffer, 1, 500)
    assert buffer.read(100 * MS) == _audio(100, 100)
    assert buffer.position_ms() == 100
    assert buffer.mark() == {"type": "playback.mark", "turn": 1, "played_ms": 100}
    assert len(buffer.read(1000 * MS)) == 400 * MS  # the rest; the device pads the shortfall
    assert buffer.read(20 * MS) == b""
    assert buffer.mark() == {"type": "playback.mark", "turn": 1, "played_ms": 500}


def test_pause_drops_the_buffer_and_puts_the_turn_at_played_ms() -> None:
    buffer = PlaybackBuffer(RATE)
    _turn(buffer, 3, 2000)
    buffer.read(600 * MS)
    assert buffer.pause(3, 450)  # the server's position, behind what the device took
    assert buffer.paused
    assert buffer.buffered_ms == 0
    assert buffer.read(20 * MS) == b""  # silence at once
    assert buffer.position_ms() == 450
    assert buffer.mark() == {"type": "playback.mark", "turn": 3, "played_ms": 450}


def test_resumed_audio_plays_and_marks_continue_from_played_ms() -> None:
    buffer = PlaybackBuffer(RATE)
    _turn(buffer, 3, 2000, value=100)
    buffer.read(600 * MS)
    buffer.pause(3, 450)
    assert buffer.push(_audio(300, 200))  # the first audio after a pause resumes the turn
    assert not buffer.paused
    assert not buffer.push(_audio(200, 300))
    assert buffer.read(300 * MS) == _audio(300, 200)  # the resumed audio, none of what was dropped
    assert buffer.mark() == {"type": "playback.mark", "turn": 3, "played_ms": 750}
    assert buffer.read(1000 * MS) == _audio(200, 300)
    assert buffer.mark() == {"type": "playback.mark", "turn": 3, "played_ms": 950}


def test_a_turn_paused_and_resumed_several_times() -> None:
    buffer = PlaybackBuffer(RATE)
    _turn(buffer, 2, 1000)
    buffer.read(400 * MS)
    buffer.pause(2, 400)
    buffer.push(_audio(600, 200))
    buffer.read(100 * MS)
    assert buffer.pause(2, 480)
    assert buffer.push(_audio(520, 300))
    assert buffer.read(520 * MS) == _audio(520, 300)
    assert buffer.position_ms() == 1000


def test_pause_of_another_turn_changes_nothing() -> None:
    buffer = PlaybackBuffer(RATE)
    assert not buffer.pause(1, 100)  # before any audio.start
    _turn(buffer, 2, 500)
    buffer.read(100 * MS)
    assert not buffer.pause(1, 50)
    assert not buffer.paused
    assert buffer.buffered_ms == 400 and buffer.position_ms() == 100


def test_clear_drops_the_buffer_and_keeps_the_position() -> None:
    buffer = PlaybackBuffer(RATE)
    _turn(buffer, 1, 800)
    buffer.read(200 * MS)
    buffer.pause(1, 150)
    buffer.clear()  # barge-in after the pause
    assert not buffer.paused and buffer.buffered_ms == 0
    assert buffer.mark() == {"type": "playback.mark", "turn": 1, "played_ms": 150}


def test_a_new_turn_starts_at_zero_without_the_old_turns_audio() -> None:
    buffer = PlaybackBuffer(RATE)
    _turn(buffer, 1, 800, value=100)
    buffer.read(200 * MS)
    _turn(buffer, 2, 100, value=200)
    assert buffer.read(200 * MS) == _audio(100, 200)
    assert buffer.mark() == {"type": "playback.mark", "turn": 2, "played_ms": 100}


def test_audio_before_any_audio_start_is_dropped() -> None:
    buffer = PlaybackBuffer(RATE)
    assert not buffer.push(_audio(100, 1))
    assert buffer.buffered_ms == 0


# --- the live client's handling of the server's messages ----------------------------------------------------


def test_live_client_prints_paused_resumed_and_interrupted() -> None:
    buffer = PlaybackBuffer(RATE)
    lines: list[str | None] = []
    script: list[str | bytes] = [
        json.dumps({"type": "audio.start", "turn": 1, "sample_rate": RATE}),
        _audio(1000, 100),
        json.dumps({"type": "audio.end", "turn": 1}),
        json.dumps({"type": "playback.pause", "turn": 1, "played_ms": 300}),
        _audio(200, 200),
        _audio(200, 200),
        json.dumps({"type": "audio.end", "turn": 1}),
        json.dumps({"type": "playback.pause", "turn": 1, "played_ms": 400}),
        json.dumps({"type": "playback.clear", "turn": 1}),
        json.dumps({"type": "playback.pause", "turn": 7, "played_ms": 10}),  # not the current turn: ignored
        json.dumps({"type": "transcript", "turn": 2, "text": "wait"}),
    ]
    for message in script:
        lines.append(on_server_message(buffer, message))
    assert [line for line in lines if line] == [
        "  (paused)",
        "  (resumed)",
        "  (paused)",
        "  (interrupted)",
        "you: wait",
    ]
    assert buffer.buffered_ms == 0
    assert buffer.mark() == {"type": "playback.mark", "turn": 1, "played_ms": 400}


def test_live_client_asks_for_the_capability() -> None:
    assert CAPABILITIES == ("playback.pause",)


# --- the protocol client's session state ---------------------------------------------------------------------


def _state() -> SessionState:
    return SessionState(Conversation(url="ws://test/ws", input_sample_rate=16000), None)


def _text(state: SessionState, now: float, **msg: object) -> None:
    state.on_text(json.dumps(msg), now)


def test_session_state_cuts_a_paused_turn_back_and_appends_the_resume() -> None:
    state = _state()
    _text(state, 0.0, type="audio.start", turn=1, sample_rate=RATE)
    state.on_audio(_audio(2000, 100), 0.0)
    _text(state, 0.0, type="audio.end", turn=1)
    assert state.playback_end == pytest.approx(2.0)
    _text(state, 0.5, type="playback.pause", turn=1, played_ms=500)
    turn = state.conv.turns_by_id[1]
    assert bytes(turn.audio) == _audio(500, 100)
    assert turn.pauses == [500.0] and turn.paused and not turn.audio_ended
    assert state.playback_end == pytest.approx(0.5)  # the simulated player stopped at once
    assert state.settled(0.6, playback=True, ignore_speaking=True)

    state.on_audio(_audio(300, 200), 0.7)  # the resume: the same turn, no new audio.start
    assert bytes(turn.audio) == _audio(500, 100) + _audio(300, 200)
    assert turn.resumes == 1 and not turn.paused
    assert turn.starved_ms == 0.0  # a resume after a pause is not a gap in the reply
    assert state.playback_end == pytest.approx(1.0)
    _text(state, 0.7, type="audio.end", turn=1)
    assert turn.audio_ended


def test_session_state_counts_how_long_a_reply_ran_dry_between_its_frames() -> None:
    state = _state()
    _text(state, 0.0, type="audio.start", turn=1, sample_rate=RATE)
    state.on_audio(_audio(200, 1), 5.0)  # the wait for the first frame is not a gap
    state.on_audio(_audio(200, 1), 5.1)  # ahead of the player (it plays until 5.2)
    state.on_audio(_audio(200, 1), 5.7)  # the player ran dry at 5.4: a 300 ms gap
    turn = state.conv.turns_by_id[1]
    assert turn.starved_ms == pytest.approx(300.0)
    assert state.playback_end == pytest.approx(5.9)


def test_session_state_ignores_a_pause_for_an_older_turn() -> None:
    state = _state()
    _text(state, 0.0, type="audio.start", turn=1, sample_rate=RATE)
    state.on_audio(_audio(100, 1), 0.0)
    _text(state, 0.0, type="audio.end", turn=1)
    _text(state, 0.0, type="audio.start", turn=2, sample_rate=RATE)
    state.on_audio(_audio(100, 2), 0.0)
    _text(state, 0.1, type="playback.pause", turn=1, played_ms=50)
    assert bytes(state.conv.turns_by_id[1].audio) == _audio(100, 1)
    assert state.conv.turns_by_id[1].pauses == []


# --- converse over a real socket ---------------------------------------------------------------------------------
