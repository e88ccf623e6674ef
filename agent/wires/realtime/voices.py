"""The voices a Realtime client names: OpenAI's own names stand for the server's default voice.

Apps often hard-code one of OpenAI's voices, so a client that asks for one gets the server's default; any other
name must be a voice enrolled here (or the local one). This module changes when that rule does.
"""

from __future__ import annotations

from agent.errors import ProtocolError, UnknownVoice
from agent.runtime.call.wire import VoiceLookup

OPENAI_VOICES = frozenset({"alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"})
"""OpenAI's own voice names."""


async def find_voice(name: str | None, lookup: VoiceLookup) -> str:
    """The voice handle ``lookup`` gives for ``name`` (``None`` or one of ``OPENAI_VOICES``: the server's default).
    Raises ``ProtocolError`` (``invalid_value``) for a voice that is not here."""
    requested = None if name is None or name.lower() in OPENAI_VOICES else name
    try:
        return await lookup(requested)
    except UnknownVoice as exc:
        raise ProtocolError("invalid_value", f"{exc}; see the voices this server offers") from None
