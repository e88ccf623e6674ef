"""The start of a protocol v1 call (``/ws``): read the client's messages until a valid ``session.start``.

Its one reason to change is what protocol v1 allows before ``session.start``. Every other message before it is
answered through the connection's outbox: ``error`` for a refusal (``unauthorized`` and ``forbidden`` then close
1008); ``voice.enroll.*`` and ``voices.*`` go to the connection's side channel (``PreStart.aside``, served by
``agent.wires.browser.enrollment``). A bad ``Authorization`` header was let through the upgrade
(``agent.runtime.server.upgrade.deferred``) so that it is explained here, in the protocol's own words.
"""

from __future__ import annotations

from agent.core.events import CloseSession, ErrorNotice, ToolResult
from agent.errors import ProtocolError, UnknownVoice
from agent.runtime.call.prestart import Opened, PreStart, heard_language
from agent.wires.browser import codec as browser
from agent.wires.browser.wire import BrowserWire


async def open_browser(pre: PreStart) -> Opened | None:
    """Protocol v1: wait for a valid ``session.start``. ``None``: no session (see ``PreStart.close``)."""
    if pre.credentials.refused is not None:
        _refuse(pre, pre.credentials.refused)
        return None
    while (message := await pre.next("session.start not received in time")) is not None:
        try:
            opened = await _message(pre, message)
        except ProtocolError as exc:
            _refuse(pre, exc)
            opened = None
        if opened is not None or pre.close is not None:
            return opened
    return None


def _refuse(pre: PreStart, exc: ProtocolError) -> None:
    pre.refused("refused a message before session.start", exc.code)
    pre.send(browser.encode(ErrorNotice(code=exc.code, message=exc.message)))
    if exc.code in ("unauthorized", "forbidden"):  # forbidden: only session.start raises it here
        pre.close = CloseSession(1008, exc.code)


async def _message(pre: PreStart, message: str | bytes) -> Opened | None:
    if isinstance(message, bytes):
        raise ProtocolError("not_started", "send session.start before any audio")
    request = browser.decode_text(message)
    match request:
        case browser.SessionStart():
            return await _session_start(pre, request)
        case browser.SessionEnd():
            pre.close = CloseSession(1000, "session ended")
        case browser.PlaybackMarkMessage() | ToolResult():
            pass  # nothing is playing, and no tool was called, before the session starts
        case _:
            token: str | None = getattr(request, "token", None)
            await pre.aside(pre.credentials.check(token), request)
    return None


async def _session_start(pre: PreStart, start: browser.SessionStart) -> Opened:
    principal = pre.credentials.check(start.token)
    if not principal.allows("call"):
        raise ProtocolError("forbidden", "these credentials may not start a session (scope 'call')")
    settings, components = pre.settings, pre.components
    try:
        voice = await components.tts.resolve_voice(start.voice or settings.tts.default_voice, principal.tenant)
    except UnknownVoice as exc:
        raise ProtocolError("unknown_voice", f"{exc}; see the voices this server offers") from None
    rate = start.output_sample_rate or settings.audio.output_sample_rate
    audio = settings.audio
    language = heard_language(start.language, components.stt.languages)
    wire = BrowserWire(start, rate, audio.output_frame_ms, audio.max_input_frame_ms)
    return Opened(wire, voice, principal, language=language, tools=start.tools)
