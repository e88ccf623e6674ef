"""A human turn cut into a row (bench/turns/human_turn.py), on synthetic recordings: the labels stay on the same
sound, the lead and the end silence are filled with the recording's own quiet room tone (the end past the longest
wait of the field's sweep), the speech is levelled, and loud "silences" are not labelled."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bench.turns.human_labels import LabelledSilence, TurnSpan
from bench.turns.human_turn import (
    END_MS,
    LEAD_MS,
    LEVEL_DBFS,
    LOUD_END,
    QUIET_DB,
    RATE,
    Audio,
    cut,
    joined,
    looped,
    room_tone,
)

MS = RATE // 1000


def recording(speech: list[tuple[float, float]], total_ms: float, seed: int = 1) -> Audio:
    """Room noise at -60 dBFS with a 300 Hz tone (-20 dBFS) where ``speech`` says."""
    rng = np.random.default_rng(seed)
    audio = (1e-3 * rng.standard_normal(int(total_ms * MS))).astype(np.float32)
    t = np.arange(audio.size) / RATE
    for a, b in speech:
        audio[int(a * MS) : int(b * MS)] += (0.1 * np.sin(2 * np.pi * 300 * t[int(a * MS) : int(b * MS)])).astype(
            np.float32
        )
    return audio


def span(speech: list[tuple[float, float]], quiet_until: float | None, **kw: object) -> TurnSpan:
    holds = tuple(LabelledSilence(b, c, "hold", False) for (_, b), (c, _) in itertools.pairwise(speech))
    silences = holds if quiet_until is None else (*holds, LabelledSilence(speech[-1][1], quiet_until, "end", False))
    return TurnSpan("A", speech[0][0], speech[-1][1], quiet_until, silences, **kw)  # type: ignore[arg-type]


def db(x: Audio) -> float:
    return float(10 * np.log10(np.mean(x.astype(np.float64) ** 2) + 1e-20))


def test_a_row_keeps_its_labels_on_the_same_sound_and_pads_its_end_past_the_longest_wait() -> None:
    speech = [(1000.0, 2000.0), (2500.0, 3000.0)]
    audio = recording([*speech, (3800.0, 4500.0)], 6000)
    row = cut(span(speech, 3800.0), audio, room_tone(audio, speech), speech, turn_id="t", source="s", split="dev")
    hold, end = row.silences
    assert (hold.label, end.label) == ("hold", "end")
    assert row.speech_start_ms == pytest.approx(LEAD_MS)  # 300 ms of real lead before 1000 ms
    assert hold.start_ms - row.speech_start_ms == pytest.approx(1000.0)
    assert hold.duration_ms == pytest.approx(500.0)
    assert end.duration_ms == pytest.approx(END_MS, abs=1 / MS)
    assert row.duration_ms == pytest.approx(end.end_ms)
    assert row.real_until_ms == pytest.approx(end.start_ms + 800.0)  # the real silence stops at the next sound
    # Speech where the labels say speech, quiet where they say silence; levelled to LEVEL_DBFS.
    assert db(row.audio[row.speech_mask()]) == pytest.approx(LEVEL_DBFS, abs=0.1)
    assert db(row.audio[int(hold.start_ms * MS) + 80 : int(hold.end_ms * MS) - 80]) < LEVEL_DBFS - 30
    assert db(row.audio[int(end.start_ms * MS) + 80 :]) < LEVEL_DBFS - 30
    again = cut(span(speech, 3800.0), audio, room_tone(audio, speech), speech, turn_id="t", source="s", split="dev")
    assert np.array_equal(row.audio, again.audio)  # the same row on every build


def test_a_lead_shorter_than_lead_ms_is_filled_with_room_tone_not_with_earlier_speech() -> None:
    speech = [(0.0, 500.0), (600.0, 1500.0)]  # the turn starts 100 ms after someone else's speech
    audio = recording(speech, 4000)
    turn = span([(600.0, 1500.0)], 2500.0)
    row = cut(turn, audio, room_tone(audio, speech), speech, turn_id="t", source="s", split="dev")
    assert row.speech_start_ms == pytest.approx(LEAD_MS)
    lead = row.audio[: int((LEAD_MS - 110) * MS)]
    assert db(lead) < LEVEL_DBFS - 30  # 200 ms of room tone, then 100 ms of real silence


def test_an_open_turn_stops_with_its_speech_and_is_not_padded() -> None:
    speech = [(1000.0, 2000.0), (2400.0, 3000.0)]
    audio = recording(speech, 5000)
    row = cut(
        span(speech, None, open_because="x"),
        audio,
        room_tone(audio, speech),
        speech,
        turn_id="t",
        source="s",
        split="dev",
    )
    assert not row.ended and [s.label for s in row.silences] == ["hold"]
    assert row.duration_ms == pytest.approx(LEAD_MS + 2000.0)
    assert row.speech_end_ms == row.duration_ms


def test_a_loud_silence_is_not_labelled_and_a_loud_end_makes_the_turn_open() -> None:
    speech = [(1000.0, 2000.0), (2500.0, 3000.0)]
    audio = recording(speech, 6000)
    rng = np.random.default_rng(2)
    audio[int(2100 * MS) : int(2400 * MS)] += (0.05 * rng.standard_normal(300 * MS)).astype(np.float32)  # a laugh
    audio[int(3100 * MS) : int(3700 * MS)] += (0.05 * rng.standard_normal(600 * MS)).astype(np.float32)  # applause
    row = cut(span(speech, 3800.0), audio, room_tone(audio, speech), speech, turn_id="t", source="s", split="dev")
    assert row.silences == () and row.unlabelled == 1
    assert not row.ended and row.open_because == LOUD_END
    assert QUIET_DB == 10.0


def test_room_tone_is_the_quiet_non_speech_and_leaves_out_loud_noise() -> None:
    audio = recording([(1000.0, 3000.0)], 8000)
    audio[int(5000 * MS) : int(6000 * MS)] += 0.05  # a loud steady hum, not speech
    tone = room_tone(audio, [(1000.0, 3000.0)])
    assert tone.size > 2000 * MS
    assert db(tone) < -55


def test_joined_and_looped_are_as_long_as_asked_and_click_free() -> None:
    a, b = np.ones(1000, np.float32), np.ones(1000, np.float32)
    out = joined([a, b])
    assert out.size == 2000 - 10 * MS and np.allclose(out, 1.0)  # a crossfade of equals is seamless
    tone = np.ones(500, np.float32)
    assert looped(tone, 5000, 123).size == 5000
    assert np.allclose(looped(tone, 5000, 123), 1.0)
    assert looped(tone, 0, 0).size == 0
