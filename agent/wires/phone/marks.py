"""Playback mark names shared by the phone codecs (Twilio and Telnyx ``mark``, Vonage ``notify``).

A name is ``"<turn>:<played_ms>"``, or ``"<turn>:<played_ms>:<segment>"`` once the turn was paused and
resumed: the reply audio of ``turn`` the caller has heard when the far end echoes it. The segment tells the
marks of audio a ``clear`` dropped (echoed by Twilio and Telnyx at the clear) from those sent after it.
Pure functions; anything that is not one of our names parses to ``None``.
"""

from __future__ import annotations

import re

_MARK = re.compile(r"([0-9]{1,9}):([0-9]{1,12})(?::([0-9]{1,6}))?")


def name(turn: int, played_ms: float, segment: int = 0) -> str:
    """The name of a mark placed after ``played_ms`` of ``turn``'s reply audio (rounded to the millisecond)."""
    return f"{turn}:{played_ms:.0f}" + (f":{segment}" if segment else "")


def parse(text: str) -> tuple[int, float, int] | None:
    """``(turn, played_ms, segment)`` from one of our mark names, or ``None`` for a name we did not send."""
    match = _MARK.fullmatch(text)
    if match is None:
        return None
    return int(match[1]), float(match[2]), int(match[3] or 0)
