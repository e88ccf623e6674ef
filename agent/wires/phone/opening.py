"""The start of a phone call, whatever the provider: wait for its start message, pick the voice, build the wire.

Its one reason to change is how a call on the telephony core (``agent.wires.phone.telephony``) opens. Each
provider's opening (``agent.wires.phone.<provider>.opening``, AudioSocket's too) is ``open_call`` with its
``StartDecoder`` and its lead. A phone stream cannot be answered before its start: messages refused until then
are counted and dropped (``PreStart.first``). A call is never refused for what it asks: an unknown voice falls
back to the default, a language the recogniser cannot hear is dropped (both logged). Only when not even the
default voice can speak is the caller told why, in the fallback voice, and the call closed 1011.
"""

from __future__ import annotations

import logging
from collections import Counter

from agent.core.events import CloseSession
from agent.errors import ProtocolError, UnknownVoice
from agent.languages import LANGUAGES, parse_language
from agent.runtime.call.prestart import Opened, PreStart, heard_language
from agent.security.auth import Principal
from agent.security.logsafe import shown
from agent.wires.phone.telephony import HungUp, PhoneStart, StartDecoder, TelephonyWire

log = logging.getLogger(__name__)


def phone_language(value: str | None, call: str, heard: tuple[str, ...]) -> str | None:
    """The language a phone call's custom parameter gives (``None``: none, or one this server cannot hear, which
    is logged: a call is never refused for it; its language is then the server's, or detected)."""
    try:
        return heard_language(parse_language(value), heard)
    except ValueError:
        log.warning("%s gave language %s, which is not one of %s", call, shown(value, quote=True), LANGUAGES)
    except ProtocolError as exc:
        log.warning("%s: %s", call, exc.message)
    return None


async def open_call(pre: PreStart, first: StartDecoder, lead_ms: int) -> Opened | None:
    """A phone gateway's call: read messages with ``first`` until the start. Messages refused before it are
    counted and dropped; ``None``: no call (see ``PreStart.close``)."""
    dropped: Counter[str] = Counter()  # malformed messages of the call, logged when it ends
    start = await pre.first(
        first, "start not received in time", dropped, "phone stream: dropped a message before start"
    )
    if isinstance(start, HungUp):
        pre.close = CloseSession(1000, "stream stopped")
        return None
    if start is None:
        return None
    return await _call_start(pre, start, lead_ms, dropped)


async def _call_start(pre: PreStart, start: PhoneStart, lead_ms: int, dropped: Counter[str]) -> Opened | None:
    principal = pre.credentials.check(None)
    tts, default = pre.components.tts, pre.settings.tts.default_voice
    requested = start.voice or default
    call = f"{start.gateway.provider} call {shown(start.gateway.call_id)}"
    wire = TelephonyWire(start.gateway, lead_ms, dropped)
    language = phone_language(start.language, call, pre.components.stt.languages)
    try:
        voice = await tts.resolve_voice(requested, principal.tenant)
    except UnknownVoice:
        dropped["unknown_voice"] += 1
        if requested == default:
            return await _no_voice(pre, call, requested, wire, principal)
        log.warning("%s asked for unknown voice %s; using the default", call, shown(requested, quote=True))
        try:
            voice = await tts.resolve_voice(default, principal.tenant)
        except UnknownVoice:
            return await _no_voice(pre, call, default, wire, principal)
    return Opened(wire, voice, principal, language=language)


async def _no_voice(
    pre: PreStart, call: str, voice: str | None, wire: TelephonyWire, principal: Principal
) -> Opened | None:
    """No voice to answer in: the caller hears why in the fallback voice, then the call is closed 1011.
    ``None`` when not even that voice can speak (closed at once)."""
    log.warning("%s refused: no voice to speak in (%s is not enrolled)", call, shown(voice, quote=True))
    close = CloseSession(1011, "no voice to speak in: the default voice is not enrolled")
    fallback = pre.components.fallback
    try:
        parting = fallback.voice if fallback is not None else await pre.components.tts.resolve_voice(None)
    except UnknownVoice:
        parting = None
    if parting is None or not pre.settings.turn.no_voice_text:
        pre.close = close
        return None
    return Opened(wire, parting, principal, parting=close)
