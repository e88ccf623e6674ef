"""The start of a Realtime session (``/v1/realtime``): at the upgrade, with no opening message.

Its one reason to change is what a Realtime session starts with. The caller was checked at the upgrade
(``Authorization: Bearer``, ``agent.wires.realtime.credential``). The session
starts in the server's default voice with PCM16 24 kHz both ways, server turn detection and the server's
system prompt as ``instructions``; ``model`` from the URL is echoed and means nothing else. A client that
connected with ``OpenAI-Beta: realtime=v1`` is answered in the beta shape of the events.
"""

from __future__ import annotations

import uuid
from urllib.parse import parse_qs, urlsplit

from websockets.http11 import Request

from agent.config import Settings
from agent.core.events import CloseSession
from agent.errors import ProtocolError
from agent.languages import parse_language
from agent.runtime.call.prestart import Opened, PreStart, display_name
from agent.runtime.components import Components
from agent.wires.realtime.events import SessionView
from agent.wires.realtime.session_update import TurnDetection
from agent.wires.realtime.voices import find_voice
from agent.wires.realtime.wire import RealtimeWire

DEFAULT_MODEL = "voice-agent"


async def default_voice(components: Components, settings: Settings, tenant: str) -> str:
    """The voice a session starts in: the server's default, or none yet (``""``) when it has none (a cloned-voice
    server without ``AGENT_TTS__DEFAULT_VOICE``): the client names one in ``session.update`` before it asks for
    speech (until then a reply fails with ``tts_failed`` and the fallback voice apologises)."""
    default = settings.tts.default_voice

    async def lookup(name: str | None) -> str:
        return await components.tts.resolve_voice(default if name is None else name, tenant)

    try:
        return await find_voice(default, lookup)
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


async def open_realtime(pre: PreStart) -> Opened | None:
    """OpenAI Realtime: the session starts at once, in the default voice; ``None``: no session (see
    ``PreStart.close``: 1008 for a caller who may not call)."""
    try:
        principal = pre.credentials.check(None)
        if not principal.allows("call"):
            raise ProtocolError("forbidden", "these credentials may not start a session (scope 'call')")
        voice = await default_voice(pre.components, pre.settings, principal.tenant)
    except ProtocolError as exc:
        pre.close = CloseSession(1008, exc.message[:120])
        return None
    request = getattr(pre.socket, "request", None)  # a WebSocket's upgrade request
    wire = realtime_wire(request, pre.settings, display_name(voice))
    return Opened(wire, voice, principal, server_tools=False)  # the model has the session's tools, as OpenAI's
