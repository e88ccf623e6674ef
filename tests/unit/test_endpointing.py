"""How finished the caller sounds, judged from a speculative transcript (pure)."""

from __future__ import annotations

import pytest

from agent.core.endpointing import (
    Acknowledgements,
    Completeness,
    EndpointPolicy,
    completeness,
    is_backchannel,
    short_bid,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What time do you open tomorrow?", Completeness.COMPLETE),
        ("I need a table for two.", Completeness.COMPLETE),
        ("Stop!", Completeness.COMPLETE),
        ("Yes?", Completeness.COMPLETE),
        # One word with Whisper's period may be an opener before a pause ("Wait, what time is it?").
        ("Wait.", Completeness.UNKNOWN),
        ("Well.", Completeness.UNKNOWN),
        ("I want to go to", Completeness.TRAILING),
        ("and then.", Completeness.TRAILING),
        ("Let me think,", Completeness.TRAILING),
        ("", Completeness.UNKNOWN),
    ],
)
def test_completeness(text: str, expected: Completeness) -> None:
    assert completeness(text, language="en") is expected


def test_one_word_gets_the_default_hangover_not_the_short_one() -> None:
    policy = EndpointPolicy(hangover_min_ms=320, hangover_ms=420, hangover_max_ms=1200)
    assert policy.hangover_for("Wait.", language="en") == 420
    assert policy.hangover_for("Wait, what time is it now?", language="en") == 320
    assert policy.hangover_for("So", language="en") == 1200


# What tiny.en wrote for acknowledgements said over a playing reply (bench/backchannels.py: Piper and espeak-ng
# voices, /ws and /twilio audio), as the quick transcript at 180 ms of speech and as the whole utterance.
@pytest.mark.parametrize(
    "text",
    [
        # "uh-huh": the first syllable, Whisper's spellings of the whole, drawn out
        "Uh", "uh", "Uh...", "Uh.", "Uh-uh", "Uh-uh.", "uh uh", "Uh-huh", "Uh-oh.", "Aha",
        # "mm-hmm", "mm", "hmm": hums
        "M", "M.", "M-", "Mm-", "Mm-mm", "Mmm", "Mmmmm", "mmm", "Emm...", "Em", "um", "Um",
        # "ah", "oh"
        "AHH", "Ah...", "ah", "Oh",
        # several acknowledgements, or one cut short ("okay, got it", "alright", "I see" at 180 ms)
        "Yeah, yeah.", "Right, right.", "Right,", "Okay, got it. Got it", "ok, got it", "Okay, got", "Okay, Got",
        "Okay,", "All", "I",
        # the list itself
        "Yeah.", "Yes.", "Yep.", "Yup", "ok.", "Okay...", "Right.", "Sure", "I see.", "Got it!", "All right.",
        "Alright.",
        # a laugh, and Whisper's words for a noise or a cough over the agent (tests/integration/test_yield.py,
        # bench/backchannels.py with the reply paused: "Thank you." for a short "yeah", "You" for noise)
        "Ha!", "Heh.", "You", "Thank you.",
    ],
)  # fmt: skip
def test_real_acknowledgements_are_backchannels(text: str) -> None:
    assert is_backchannel(text, language="en")


@pytest.mark.parametrize(
    "text",
    [
        # the interruptions of the same run, whole and at 180 ms
        "Wait.", "Wait", "Wait...", "When", "Stop.", "Stop!", "stop", "step", "No", "No.", "No, I meant.",
        "No, I meant...", "Hold", "Hold on.", "Hold on...", "Hold it.", "What?", "What about...", "W-",
        "What about tomorrow?", "Welcome out tomorrow",
        # a filler or an acknowledgement that goes on into words
        "uh, wait", "Um, no", "Okay, stop it.", "Okay, dot", "Yeah, but what about Tuesday", "Oh, no.",
        "I want", "So what?", "Thank you, but no.", "You know what, stop",
        # nothing heard: not a backchannel either (the listener treats it as unknown)
        "", "...",
    ],
)  # fmt: skip
def test_interruptions_are_not_backchannels(text: str) -> None:
    assert not is_backchannel(text, language="en")


def test_the_switch_turns_acknowledgements_off() -> None:
    assert is_backchannel("Uh-huh.", Acknowledgements(), language="en")
    off = Acknowledgements(on=False, extra=("yeah",))
    assert not is_backchannel("Uh-huh.", off, language="en")
    assert not is_backchannel("Uh", off, language="en")
    assert not is_backchannel("Yeah.", off, language="en")  # the operator's own words are off too


def test_the_operators_words_are_added_to_the_tables_and_drawn_out_like_them() -> None:
    mine = Acknowledgements(extra=("jawoll", "roger that"))
    assert is_backchannel("Jawolll.", mine, language="en") and not is_backchannel("Jawoll.", language="en")
    assert is_backchannel("Roger that, okay.", mine, language="en")
    assert is_backchannel("Yeahhh.", mine, language="en")  # English's own table is kept
    assert is_backchannel("Mm-hmm.", mine, language="en")


FRAGMENTS = EndpointPolicy(fragment_words=3, fragment_numbers=True, fragment_ms=700)


@pytest.mark.parametrize(
    ("text", "hangover"),
    [
        # what Whisper makes of a thinking pause (bench/end_of_turn.py): a short fragment with a period
        ("I was thinking.", 700), ("It's 4.", 700), ("It's four.", 700), ("It was like.", 1500),
        ("I need eggs, milk,", 1500),
        # short answers are whole turns; longer sentences are judged as before
        ("Yes.", 420), ("No, thanks.", 320), ("Sure, thank you.", 320), ("Okay.", 420),
        ("Please cancel my order.", 320), ("What time do you open tomorrow?", 320),
        ("The total for the month is 20.", 700), ("Could you remind me to call my sister at 730?", 320),
    ],
)  # fmt: skip
def test_fragments_wait_longer_than_finished_sentences(text: str, hangover: int) -> None:
    assert FRAGMENTS.hangover_for(text, language="en") == hangover


def test_without_the_fragment_rule_a_short_sentence_is_finished() -> None:
    assert EndpointPolicy().hangover_for("It's four.", language="en") == 320
    assert (
        EndpointPolicy(fragment_words=3).hangover_for("That is forty dollars total.", language="en") == 320
    )  # four words
    assert (
        EndpointPolicy(fragment_numbers=True).hangover_for("It's 4.", language="en") == 1500
    )  # fragment_ms 0: the maximum


@pytest.mark.parametrize("text", ["Wait.", "Stop!", "No.", "Hold on", "Sorry,", "What?", "Excuse me", "Hey!", "But"])
def test_short_interjections_ask_to_stop(text: str) -> None:
    assert short_bid(text, language="en")


@pytest.mark.parametrize("text", ["On.", "Ha!", "Uh...", "You", "The", "Nowhere", "Whatever", "Stoppage", ""])
def test_other_short_transcripts_do_not(text: str) -> None:
    assert not short_bid(text, language="en")
