"""Before the session: who is calling, the start deadline, and the messages read until the call opens.

Its one reason to change is the machinery every opening shares; how a protocol's call opens is its own
(``agent.wires.<protocol>.opening``, named by the ``Endpoint`` rows of ``agent.wires.endpoints``).

``Credentials`` fixes the connection's ``Principal`` once: from the upgrade's ``Authorization: Bearer``
header, or else from the ``token`` of the first message that needs one (``session.start``,
``voice.enroll.begin``, ``voices.list``, ``voices.remove``). Tokens in later messages are ignored (the
principal does not change during a connection). Missing or invalid credentials while auth is on:
``ProtocolError("unauthorized")``, which ends the connection (``error`` then close 1008).

``PreStart`` is one connection's life before its session, handed to an ``Opening``: it reads the client's
messages (``next``, or ``first`` for a protocol whose refusals are only counted) until the opening one, and
says how to end the connection when no session starts (``close``). The start deadline
(``server.start_timeout_s``) counts from the upgrade and no message restarts it, so a socket cannot hold a
session slot by sending refused (or any other) messages; only while the server itself is working on an
request the connection asked for (``enrolling``: its side channel is busy) is it held open past the deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from websockets.exceptions import ConnectionClosed

from agent.config import Settings
from agent.core.events import CloseSession
from agent.errors import ProtocolError
from agent.ports import ToolSpec
from agent.runtime.call.outbox import Payload
from agent.runtime.call.report import RefusalLog
from agent.runtime.call.socket import CallSocket
from agent.runtime.call.wire import Wire
from agent.runtime.components import Components
from agent.security.auth import Authenticator, Principal

Aside = Callable[[Principal, Any], Awaitable[None]]
"""Hands a request to the connection's side channel (``agent.runtime.call.wire.SideChannel``: protocol v1's
voice enrollment), to be served as ``principal``."""
Busy = Callable[[], bool]
T = TypeVar("T")


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
    parting: CloseSession | None = None
    """A call that cannot be served: ``voice`` is the fallback voice, which says ``turn.no_voice_text`` and then
    the call is closed with this (rather than leave the caller in dead air)."""
    language: str | None = None
    """The language the caller gave (an ``agent.languages`` code); ``None``: the server's, or detected."""
    tools: tuple[ToolSpec, ...] = ()
    """The tools the client declared and runs itself (``runs_on="client"``); the server's own tools for the
    principal's tenant are added by the runtime."""
    server_tools: bool = True
    """The model is also offered the server's own tools for the tenant (off on the Realtime path: there the
    session's tools are exactly the ones the client declared, as with OpenAI)."""


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


Opening = Callable[["PreStart"], Awaitable["Opened | None"]]
"""How a protocol's session starts (``agent.wires.browser.opening.open_browser``...): ``None`` when none does
(the reason is in ``PreStart.close``)."""


class PreStart:
    """One connection's life before its session. ``close`` says how to end it when no session starts."""

    def __init__(
        self,
        ws: CallSocket,
        settings: Settings,
        components: Components,
        credentials: Credentials,
        send: Callable[[Payload], None],
        aside: Aside,
        enrolling: Busy,
        refusals: RefusalLog,
    ) -> None:
        self._ws = ws
        self._settings = settings
        self._components = components
        self._credentials = credentials
        self._send = send
        self._aside = aside
        self._enrolling = enrolling
        self._refusals = refusals
        self._deadline = time.monotonic() + settings.server.start_timeout_s
        self.close: CloseSession | None = None

    @property
    def socket(self) -> CallSocket:
        """The connection's socket (a WebSocket carries its upgrade ``request``)."""
        return self._ws

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def components(self) -> Components:
        return self._components

    @property
    def credentials(self) -> Credentials:
        return self._credentials

    def send(self, payload: Payload) -> None:
        """Answer the client before the session (through the connection's outbox, in order)."""
        self._send(payload)

    async def aside(self, principal: Principal, request: Any) -> None:
        """Hand ``request`` to the connection's side channel, served as ``principal`` (``Aside``)."""
        await self._aside(principal, request)

    def refused(self, what: str, code: str) -> None:
        """A message before the start was refused with ``code`` (counted; ``what``: a fixed text)."""
        self._refusals.refused(what, code)

    async def next(self, too_late: str) -> str | bytes | None:
        """The next client message before the deadline; ``None`` when the client left or time ran out (then
        ``close`` is set to 1008 ``too_late``)."""
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

    async def first(
        self, decode: Callable[[str | bytes], T], too_late: str, dropped: Counter[str], what: str
    ) -> T | None:
        """Read messages until ``decode`` makes one of them the start (``None``: the client left or time ran out).
        A message it answers ``None`` precedes the start; one it refuses (``ProtocolError``) is counted in
        ``dropped`` and in the refusals (``what``) and skipped: the protocol has no way to answer it."""
        while (message := await self.next(too_late)) is not None:
            try:
                start = decode(message)
            except ProtocolError as exc:
                self.refused(what, exc.code)
                dropped[exc.code] += 1
                continue
            if start is not None:
                return start
        return None
