"""How finished the caller sounds, judged from a speculative transcript (pure)."""

from __future__ import annotations

import pytest

from agent.core.endpointing import BACKCHANNELS, Completeness, EndpointPolicy, completeness, is_backchannel


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
    assert completeness(text) is expected


def test_one_word_gets_the_default_hangover_not_the_short_one() -> None:
    policy = EndpointPolicy(hangover_min_ms=320, hangover_ms=420, hangover_max_ms=1200)
    assert policy.hangover_for("Wait.") == 420
    assert policy.hangover_for("Wait, what time is it now?") == 320
    assert policy.hangover_for("So") == 1200


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
    ],
)  # fmt: skip
def test_real_acknowledgements_are_backchannels(text: str) -> None:
    assert is_backchannel(text)


@pytest.mark.parametrize(
    "text",
    [
        # the interruptions of the same run, whole and at 180 ms
        "Wait.", "Wait", "Wait...", "When", "Stop.", "Stop!", "stop", "step", "No", "No.", "No, I meant.",
        "No, I meant...", "Hold", "Hold on.", "Hold on...", "Hold it.", "What?", "What about...", "W-",
        "What about tomorrow?", "Welcome out tomorrow",
        # a filler or an acknowledgement that goes on into words
        "uh, wait", "Um, no", "Okay, stop it.", "Okay, dot", "Yeah, but what about Tuesday", "Oh, no.",
        "I want", "So what?", "Thank you.",
        # nothing heard: not a backchannel either (the listener treats it as unknown)
        "", "...",
    ],
)  # fmt: skip
def test_interruptions_are_not_backchannels(text: str) -> None:
    assert not is_backchannel(text)


def test_an_empty_list_turns_acknowledgements_off() -> None:
    assert is_backchannel("Uh-huh.", BACKCHANNELS)
    assert not is_backchannel("Uh-huh.", ())
    assert not is_backchannel("Uh", ())


def test_a_configured_list_still_hears_hums_and_drawn_out_words() -> None:
    assert is_backchannel("Yeahhh.", ("yeah",))
    assert is_backchannel("Mm-hmm.", ("yeah",))
    assert not is_backchannel("Okay.", ("yeah",))
