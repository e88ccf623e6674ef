"""How finished the caller sounds, judged from a speculative transcript (pure)."""

from __future__ import annotations

import pytest

from agent.core.endpointing import Completeness, EndpointPolicy, completeness


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
