"""How a human row's silences become the field's scored silences (bench/turns/field_scores.py), without models."""

from __future__ import annotations

import numpy as np

from bench.turns.field import ScoredSilence, Silence
from bench.turns.field_scores import HORIZON_MS, as_utterance, fired, moments
from bench.turns.human_labels import LabelledSilence
from bench.turns.human_turn import RATE, LabelledTurn


def row() -> LabelledTurn:
    """2 s of speech-like audio with a hold at 500-900 ms and an end from 1500 ms to 5500 ms."""
    audio = np.zeros(int(5.5 * RATE), dtype=np.float32)
    silences = (LabelledSilence(500.0, 900.0, "hold", False), LabelledSilence(1500.0, 5500.0, "end", False))
    return LabelledTurn(
        id="r1",
        source="ami",
        speaker="A",
        split="dev",
        audio=audio,
        silences=silences,
        words=None,
        speech_start_ms=100.0,
        real_until_ms=2500.0,
    )


def test_a_silence_is_scored_every_100_ms_from_its_start_and_at_its_end_up_to_the_longest_wait() -> None:
    assert moments(250.0) == [0.0, 100.0, 200.0, 250.0]
    assert moments(300.0) == [0.0, 100.0, 200.0, 300.0]
    long = moments(10_000.0)
    assert long[0] == 0.0 and long[-1] == HORIZON_MS and len(long) == int(HORIZON_MS // 100) + 1


def test_the_servers_ends_fire_the_silence_they_fall_in_at_the_first_of_them() -> None:
    turn = row()
    hold, end = fired(turn, [700.0, 820.0, 1800.0])
    assert hold == ScoredSilence(Silence("hold", 400.0, "r1"), ((200.0, 1.0),))
    assert end == ScoredSilence(Silence("end", 4000.0, "r1"), ((300.0, 1.0),))


def test_a_silence_with_no_end_in_it_never_fires() -> None:
    hold, end = fired(row(), [1600.0 - 200.0])  # inside the speech after the hold: neither silence
    assert hold.scores == () and end.scores == ()


def test_the_row_runs_through_the_pipeline_to_its_end_with_its_holds_as_pauses() -> None:
    turn = row()
    utterance = as_utterance(turn)
    assert utterance.pauses == ((500.0, 900.0),)
    assert utterance.audible_start_ms == 100.0 and utterance.audible_end_ms == turn.duration_ms
    assert len(utterance.pcm) == turn.audio.size * 2 and utterance.source == "human"
    assert utterance.category == "thinking"
