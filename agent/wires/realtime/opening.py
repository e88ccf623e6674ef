"""The start of a Realtime session (``/v1/realtime``): at the upgrade, with no opening message.

The caller was checked at the upgrade (``Authorization: Bearer``, ``agent.runtime.server.upgrade``). The session
starts in the server's default voice with PCM16 24 kHz both ways, server turn detection and the server's
system prompt as ``instructions``; ``model`` from the URL is echoed and means nothing else. A client that
connected with ``OpenAI-Beta: realtime=v1`` is answered in the beta shape of the events.
"""

from __future__ import annotations

import uuid
from urllib.parse import parse_qs, urlsplit

from websockets.http11 import Request

from agent.config import Settings
from agent.errors import ProtocolError, UnknownVoice
from agent.languages import parse_language
from agent.runtime.components import Components
from agent.wires.realtime.codec import TurnDetection
from agent.wires.realtime.events import SessionView
from agent.wires.realtime.wire import RealtimeWire

DEFAULT_MODEL = "voice-agent"
OPENAI_VOICES = frozenset({"alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"})
"""OpenAI's own voice names: a client that asks for one gets the server's default voice (apps often hard-code
one); any other name must be a voice enrolled here (or the local one)."""


async def resolve_voice(components: Components, name: str | None, tenant: str, default: str | None) -> str:
    """The voice handle for ``name`` in ``tenant`` (``None``: ``default``, and ``None`` for that: the local voice).
    Raises ``ProtocolError`` for a voice that is not here."""
    requested = default if name is None or name.lower() in OPENAI_VOICES else name
    try:
        return await components.tts.resolve_voice(requested, tenant)
    except UnknownVoice as exc:
        raise ProtocolError("invalid_value", f"{exc}; see the voices this server offers") from None


async def default_voice(components: Components, settings: Settings, tenant: str) -> str:
    """The voice a session starts in: the server's default, or none yet (``""``) when it has none (a cloned-voice
    server without ``AGENT_TTS__DEFAULT_VOICE``): the client names one in ``session.update`` before it asks for
    speech (until then a reply fails with ``tts_failed`` and the fallback voice apologises)."""
    default = settings.tts.default_voice
    try:
        return await resolve_voice(components, default, tenant, default)
    except ProtocolError:
        return ""


def realtime_wire(request: Request | None, settings: Settings, voice: str) -> RealtimeWire:
    """The wire of a new Realtime session, shaped by its upgrade request (``model``, ``OpenAI-Beta``)."""
    query = parse_qs(urlsplit(request.path).query) if request is not None else {}
    model = (query.get("model") or [DEFAULT_MODEL])[0][:64]
    beta = request is not None and "realtime=v1" in (request.headers.get("OpenAI-Beta") or "")
    view = SessionView(
        id=f"sess_{uuid.uuid4().hex[:20]}",
        model=model,
        voice=voice,
        instructions=settings.llm.system_prompt,
        turn_detection=TurnDetection("server_vad", silence_duration_ms=None),
        language=parse_language(settings.asr.language),  # the server's, until session.update says otherwise
    )
    return RealtimeWire(view, settings.audio.output_frame_ms, beta=beta)
