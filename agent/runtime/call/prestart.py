"""Before the session: who is calling, what they ask for until they start, and the start itself.

``Credentials`` fixes the connection's ``Principal`` once: from the upgrade's ``Authorization: Bearer``
header, or else from the ``token`` of the first message that needs one (``session.start``,
``voice.enroll.begin``, ``voices.list``, ``voices.remove``). Tokens in later messages are ignored (the
principal does not change during a connection). Missing or invalid credentials while auth is on:
``ProtocolError("unauthorized")``, which ends the connection (``error`` then close 1008).

``PreStart`` reads the client's messages until the opening one (``session.start`` on ``/ws``, the phone
gateway's start on ``/twilio``, ``/telnyx`` and ``/vonage``: ``open_call``), answering everything else
through ``send`` (the connection's outbox): ``error`` for refusals, the enrollment channel's answers. The
start deadline (``server.start_timeout_s``) counts from the upgrade and no message restarts it, so a socket
cannot hold a session slot by sending refused (or any other) messages; only while the server itself is
working on an enrollment the connection asked for (``EnrollmentChannel.busy``) is it held open past the
deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from websockets.exceptions import ConnectionClosed

from agent.config import Settings
from agent.core.events import CloseSession, ErrorNotice
from agent.errors import ProtocolError, UnknownVoice
from agent.languages import LANGUAGES, parse_language
from agent.runtime.call.outbox import Payload
from agent.runtime.call.report import RefusalLog
from agent.runtime.call.socket import CallSocket
from agent.runtime.call.wire import BrowserWire, Wire
from agent.runtime.components import Components
from agent.security.auth import Authenticator, Principal
from agent.security.logsafe import shown
from agent.wires.browser import codec as browser
from agent.wires.phone.telephony import HungUp, PhoneStart, StartDecoder, TelephonyWire
from agent.wires.phone.telnyx.gateway import telnyx_start
from agent.wires.phone.twilio.gateway import twilio_start
from agent.wires.phone.vonage.gateway import vonage_start
from agent.wires.realtime import opening as realtime_opening

log = logging.getLogger(__name__)

Enroll = Callable[[Principal, browser.EnrollmentMessage], Awaitable[None]]
"""Hands an enrollment message to the connection's channel (made for ``principal`` on first use)."""
Busy = Callable[[], bool]


class Credentials:
    def __init__(self, auth: Authenticator, header: Principal | None, refused: ProtocolError | None = None) -> None:
        self._auth = auth
        self._principal = header
        self._refused = refused

    @property
    def principal(self) -> Principal | None:
        return self._principal

    @property
    def refused(self) -> ProtocolError | None:
        """Why the upgrade's header was refused (answered at once: ``error`` then close 1008)."""
        return self._refused

    def check(self, token: str | None) -> Principal:
        """The connection's principal, fixed by the header or by this first ``token``. Raises ``ProtocolError``."""
        if self._refused is not None:
            raise self._refused  # a bad header token: never overridden by a message
        if self._principal is None:
            self._principal = self._auth.from_token(token)
        return self._principal


@dataclass(frozen=True, slots=True)
class Opened:
    wire: Wire
    voice: str
    """The voice handle ``resolve_voice`` returned (``tenant/name`` for cloned voices)."""
    principal: Principal
    telephony: bool = False
    """A phone call (no echo cancellation at the far end: the echo gate listens, ``runtime.call.caller_audio``)."""
    parting: CloseSession | None = None
    """A call that cannot be served: ``voice`` is the fallback voice, which says ``turn.no_voice_text`` and then
    the call is closed with this (rather than leave the caller in dead air)."""
    language: str | None = None
    """The language the caller gave (an ``agent.languages`` code); ``None``: the server's, or detected."""


def display_name(voice: str) -> str:
    """The name a client sees for a voice handle: the part after its tenant."""
    return voice.rsplit("/", 1)[-1]


def heard_language(language: str | None, heard: tuple[str, ...]) -> str | None:
    """``language`` when the recogniser hears it (``None`` stays ``None``); raises ``ProtocolError``
    ``unsupported_language`` otherwise (tiny.en hears English only)."""
    if language is None or language in heard:
        return language
    raise ProtocolError(
        "unsupported_language",
        f"this server's recogniser hears {', '.join(heard)} only, not {language!r} "
        "(the server's AGENT_ASR__MODEL=base hears all ten languages)",
    )


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


Opening = Callable[["PreStart"], Awaitable["Opened | None"]]
"""How a socket path's session starts (``PreStart.open_browser``, ``PreStart.open_twilio``...): ``None`` when
none does (the reason is in ``PreStart.close``)."""


class PreStart:
    """One connection's life before its session. ``close`` says how to end it when no session starts."""

    def __init__(
        self,
        ws: CallSocket,
        settings: Settings,
        components: Components,
        credentials: Credentials,
        send: Callable[[Payload], None],
        enroll: Enroll,
        enrolling: Busy,
        refusals: RefusalLog,
    ) -> None:
        self._ws = ws
        self._settings = settings
        self._components = components
        self._credentials = credentials
        self._send = send
        self._enroll = enroll
        self._enrolling = enrolling
        self._refusals = refusals
        self._deadline = time.monotonic() + settings.server.start_timeout_s
        self.close: CloseSession | None = None

    async def open_browser(self) -> Opened | None:
        """Protocol v1: wait for a valid ``session.start``. ``None``: no session (see ``close``)."""
        if self._credentials.refused is not None:
            self._refuse(self._credentials.refused)
            return None
        while (message := await self._next("session.start not received in time")) is not None:
            try:
                opened = await self._browser_message(message)
            except ProtocolError as exc:
                self._refuse(exc)
                opened = None
            if opened is not None or self.close is not None:
                return opened
        return None

    async def open_realtime(self) -> Opened | None:
        """OpenAI Realtime (``/v1/realtime``): the session starts at once, in the default voice
        (``agent.wires.realtime.opening``); ``None``: no session (see ``close``)."""
        try:
            principal = self._credentials.check(None)
            if not principal.allows("call"):
                raise ProtocolError("forbidden", "these credentials may not start a session (scope 'call')")
            voice = await realtime_opening.default_voice(self._components, self._settings, principal.tenant)
        except ProtocolError as exc:
            self.close = CloseSession(1008, exc.message[:120])
            return None
        request = getattr(self._ws, "request", None)  # a WebSocket's upgrade request
        wire = realtime_opening.realtime_wire(request, self._settings, display_name(voice))
        return Opened(wire, voice, principal)

    async def open_twilio(self) -> Opened | None:
        """Twilio Media Streams: wait for ``start``; ``None``: no call (see ``close``)."""
        return await self.open_call(twilio_start, self._settings.twilio.lead_ms)

    async def open_telnyx(self) -> Opened | None:
        """Telnyx media streaming: wait for ``start``; ``None``: no call (see ``close``)."""
        return await self.open_call(telnyx_start, self._settings.telnyx.lead_ms)

    async def open_vonage(self) -> Opened | None:
        """Vonage Voice API WebSockets: wait for ``websocket:connected``; ``None``: no call (see ``close``)."""
        return await self.open_call(vonage_start, self._settings.vonage.lead_ms)

    async def open_call(self, first: StartDecoder, lead_ms: int) -> Opened | None:
        """A phone gateway's call (``agent.wires.phone.telephony``): read messages with ``first`` until the start.
        Messages refused before it are counted and dropped; ``None``: no call (see ``close``)."""
        dropped: Counter[str] = Counter()  # malformed messages of the call, logged when it ends
        while (message := await self._next("start not received in time")) is not None:
            try:
                start = first(message)
            except ProtocolError as exc:
                self._refusals.refused("phone stream: dropped a message before start", exc.code)
                dropped[exc.code] += 1
                continue
            if isinstance(start, HungUp):
                self.close = CloseSession(1000, "stream stopped")
                return None
            if start is not None:
                return await self._call_start(start, lead_ms, dropped)
        return None

    # ------------------------------------------------------------------------------------------------

    async def _next(self, too_late: str) -> str | bytes | None:
        """The next client message before the deadline; ``None`` when the client left or time ran out."""
        while True:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                if self._enrolling():  # the server is still working for this client: wait for the answer
                    self._deadline = time.monotonic() + self._settings.server.start_timeout_s
                    continue
                self.close = CloseSession(1008, too_late)
                return None
            try:
                return await asyncio.wait_for(self._ws.recv(), remaining)
            except TimeoutError:
                continue
            except ConnectionClosed:
                return None

    def _refuse(self, exc: ProtocolError) -> None:
        self._refusals.refused("refused a message before session.start", exc.code)
        self._send(browser.encode(ErrorNotice(code=exc.code, message=exc.message)))
        if exc.code in ("unauthorized", "forbidden"):  # forbidden: only session.start raises it here
            self.close = CloseSession(1008, exc.code)

    async def _browser_message(self, message: str | bytes) -> Opened | None:
        if isinstance(message, bytes):
            raise ProtocolError("not_started", "send session.start before any audio")
        request = browser.decode_text(message)
        match request:
            case browser.SessionStart():
                return await self._session_start(request)
            case browser.SessionEnd():
                self.close = CloseSession(1000, "session ended")
            case browser.PlaybackMarkMessage():
                pass  # nothing is playing before the session starts
            case _:
                token: str | None = getattr(request, "token", None)
                await self._enroll(self._credentials.check(token), request)
        return None

    async def _session_start(self, start: browser.SessionStart) -> Opened:
        principal = self._credentials.check(start.token)
        if not principal.allows("call"):
            raise ProtocolError("forbidden", "these credentials may not start a session (scope 'call')")
        settings = self._settings
        try:
            voice = await self._components.tts.resolve_voice(
                start.voice or settings.tts.default_voice, principal.tenant
            )
        except UnknownVoice as exc:
            raise ProtocolError("unknown_voice", f"{exc}; see the voices this server offers") from None
        rate = start.output_sample_rate or settings.audio.output_sample_rate
        audio = settings.audio
        language = heard_language(start.language, self._components.stt.languages)
        wire = BrowserWire(start, rate, audio.output_frame_ms, audio.max_input_frame_ms)
        return Opened(wire, voice, principal, language=language)

    async def _call_start(self, start: PhoneStart, lead_ms: int, dropped: Counter[str]) -> Opened | None:
        principal = self._credentials.check(None)
        tts, default = self._components.tts, self._settings.tts.default_voice
        requested = start.voice or default
        call = f"{start.gateway.provider} call {shown(start.gateway.call_id)}"
        wire = TelephonyWire(start.gateway, lead_ms, dropped)
        language = phone_language(start.language, call, self._components.stt.languages)
        try:
            voice = await tts.resolve_voice(requested, principal.tenant)
        except UnknownVoice:
            dropped["unknown_voice"] += 1
            if requested == default:
                return await self._no_voice(call, requested, wire, principal)
            log.warning("%s asked for unknown voice %s; using the default", call, shown(requested, quote=True))
            try:
                voice = await tts.resolve_voice(default, principal.tenant)
            except UnknownVoice:
                return await self._no_voice(call, default, wire, principal)
        return Opened(wire, voice, principal, telephony=True, language=language)

    async def _no_voice(self, call: str, voice: str | None, wire: TelephonyWire, principal: Principal) -> Opened | None:
        """No voice to answer in: the caller hears why in the fallback voice, then the call is closed 1011.
        ``None`` when not even that voice can speak (closed at once)."""
        log.warning("%s refused: no voice to speak in (%s is not enrolled)", call, shown(voice, quote=True))
        close = CloseSession(1011, "no voice to speak in: the default voice is not enrolled")
        fallback = self._components.fallback
        try:
            parting = fallback.voice if fallback is not None else await self._components.tts.resolve_voice(None)
        except UnknownVoice:
            parting = None
        if parting is None or not self._settings.turn.no_voice_text:
            self.close = close
            return None
        return Opened(wire, parting, principal, telephony=True, parting=close)
