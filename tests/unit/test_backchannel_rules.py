"""Sounds over a playing reply on a client that cannot pause (no ``playback.pause``): a misheard "uh-huh" or a
hum must neither clear the reply nor become a turn (simulated clock, no event loop).

The transcripts are what tiny.en wrote for real acknowledgements in ``bench/backchannels.py``: the quick look
at 180 ms of "right" reads "Run!", "sure" reads "Show", and the whole of an "mhm" reads "And may Chen.".
"""

from __future__ import annotations

import pytest

from agent.core.endpointing import claims_floor
from agent.core.events import CancelTurn, GenerateReply, PlaybackClear, SpeechStopped, TranscriptReady
from tests.session_driver import Driver, events, of, requests
from tests.session_driver import answered_turn as playing


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("Wait.", True),
        ("Hello there.", True),  # doubled letters are matched as said ("hello", "sorry", "too")
        ("Sorry, I meant Friday.", True),
        ("Stop!", True),
        ("No, I meant Tuesday.", True),
        ("Yeah, but what about Tuesday", True),  # acknowledgements first, then an interjection
        ("Bread and some butter.", True),  # four words
        ("What about tomorrow?", True),
        ("Run!", False),
        ("Show", False),
        ("And may Chen.", False),
        ("And then, um.", False),
        ("M. H. M. H. M.", False),  # letters are no words
        ("Uh-uh.", False),
        ("Okay, got it.", False),
        ("", False),
    ],
)
def test_what_claims_the_floor(text: str, claims: bool) -> None:
    assert claims_floor(text, language="en") is claims


def test_a_misheard_acknowledgement_does_not_clear_the_reply() -> None:
    d = Driver()  # no pause: the reply plays on while the sound is judged
    turn = playing(d)
    (probe,) = requests(d.audio("S" * 9))
    assert d.at(0.01, TranscriptReady(probe, "Run!", language="en")) == []  # words, but no claim to the floor
    effects = d.audio("S" * 6 + "." * 15)  # 300 ms of speech, then quiet: the sound is over
    assert not of(effects, CancelTurn) and PlaybackClear(turn) not in events(effects)
    (final,) = requests(effects)
    effects = d.at(0.05, TranscriptReady(final, "Right.", language="en"))
    assert not of(effects, CancelTurn) and not of(effects, SpeechStopped)
    assert d.session.active_turn == turn


def test_a_hum_written_as_words_does_not_become_a_turn() -> None:
    d = Driver()
    turn = playing(d)
    (probe,) = requests(d.audio("S" * 9))
    d.at(0.01, TranscriptReady(probe, "And", language="en"))
    effects = d.audio("S" * 12 + "." * 15)  # 420 ms: shorter than backchannel_max_ms (600)
    (final,) = requests(effects)
    effects = d.at(0.05, TranscriptReady(final, "And may Chen.", language="en"))
    assert effects == [] and d.session.active_turn == turn
    assert not of(effects, GenerateReply)


def test_an_interjection_still_interrupts_at_once() -> None:
    d = Driver()
    turn = playing(d)
    (probe,) = requests(d.audio("S" * 9))
    effects = d.at(0.01, TranscriptReady(probe, "Stop.", language="en"))
    effects += d.audio("S")
    assert CancelTurn(turn) in effects and PlaybackClear(turn) in events(effects)


def test_long_speech_takes_the_floor_whatever_it_was_heard_as() -> None:
    d = Driver()
    turn = playing(d)
    (probe,) = requests(d.audio("S" * 9))
    d.at(0.01, TranscriptReady(probe, "Run!", language="en"))
    effects = d.audio("S" * 22)  # 620 ms of speech: past backchannel_max_ms
    assert CancelTurn(turn) in effects


def test_a_short_real_request_is_judged_by_its_whole_transcript() -> None:
    d = Driver()
    turn = playing(d)
    (probe,) = requests(d.audio("S" * 9))
    d.at(0.01, TranscriptReady(probe, "Can", language="en"))  # a word, no claim yet: the reply plays on
    effects = d.audio("S" * 2 + "." * 25)  # 220 ms of speech, then quiet: the sound is over
    assert not of(effects, CancelTurn)
    (final,) = requests(effects)
    effects = d.at(0.05, TranscriptReady(final, "Can you repeat that please?", language="en"))
    assert CancelTurn(turn) in effects
    assert [e.turn for e in of(effects, SpeechStopped)] == [turn + 1]
