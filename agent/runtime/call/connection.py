"""One connection, from the upgrade to the close: the asyncio loop around one call's session core.

Its one reason to change is how a call's tasks run and end. It knows no protocol (it runs any ``Wire``,
``agent.runtime.call.wire``); what a call is made of is ``agent.runtime.call.setup``'s, and how the core's
decisions are carried out ``agent.runtime.call.effects``'s.

Lifecycle. The outbox and its writer task exist from the upgrade, so everything the server says leaves in
order through one writer. First the path's ``Opening`` (``agent.runtime.call.prestart``) fixes who is calling
and waits for the opening message; then a reader task decodes client frames and hands them to the session core
at once, the turns' tasks (``agent.runtime.call.turn_tasks``) post their results to the inbox, which the loop
hands over in turn, and the writer drains the outbox to the socket. Leaving the loop cancels every task.

Nothing can wedge it:

- every send has a deadline (``server.send_timeout_s``): a client that stops reading is closed 1008
  ``client is not reading`` and its slot freed (the outbox wakes whatever waited for room);
- caller audio faster than real time is dropped (``error`` ``rate_limited``) and a flood closed 1008
  (``agent.runtime.call.rate_limit``);
- stage tasks never raise (``agent.runtime.call.stages``), and the core gives each stage a deadline;
- a client leaving at any moment ends the connection with one INFO line, never a traceback.

Drain (``drain``, the server is shutting down): the session is handed ``Drain`` as soon as it runs; it
finishes the reply in progress, says goodbye and closes 1001 (``agent.core.closing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable

from websockets.exceptions import ConnectionClosed

from agent.config import Settings
from agent.core.events import SHUTTING_DOWN, CloseSession, CommitInput, Drain, ErrorNotice, Event, Tick
from agent.errors import ProtocolError
from agent.runtime.call.effects import Effects, Occupant
from agent.runtime.call.outbox import Outbox
from agent.runtime.call.prestart import Credentials, Opened, Opening, PreStart, display_name
from agent.runtime.call.rate_limit import InputRateLimiter, Verdict, carried_audio_ms
from agent.runtime.call.report import RefusalLog, SessionReport
from agent.runtime.call.setup import CallSetup, server_tools
from agent.runtime.call.socket import CallSocket, reset_on_close
from agent.runtime.call.speech import TurnSpeech
from agent.runtime.call.tracing import start_call
from agent.runtime.call.turn_tasks import Stamped, TurnTasks
from agent.runtime.call.wire import Aside, Reconfigure, SideChannel, SideChannels, Wire
from agent.runtime.components import Components
from agent.runtime.metrics.server import ServerMetrics
from agent.security.auth import Principal

log = logging.getLogger(__name__)

_WAKE = object()
Inbox = asyncio.Queue[Event | Stamped | bytes | CloseSession | object]
NOT_READING = CloseSession(1008, "client is not reading")
SERVER_FULL = CloseSession(1013, "server is at its session limit")
FLOODING = CloseSession(1008, "audio faster than real time")
INTERNAL_ERROR = CloseSession(1011, "internal error")
SHUTTING_DOWN_NOW = CloseSession(1001, SHUTTING_DOWN)
TICK_S = 0.25
"""Longest time the core's timers wait for an event while the client sends nothing."""
_clock = time.perf_counter
"""The session core's clock (``now`` of every event; ``Drain.deadline``)."""


class Connection:
    """Runs one connection until the client ends it, goes away, or is closed for misbehaving."""

    def __init__(
        self,
        ws: CallSocket,
        settings: Settings,
        components: Components,
        credentials: Credentials,
        metrics: ServerMetrics | None = None,
        *,
        opening: Opening,
        side: SideChannels | None = None,
        occupant: Occupant | None = None,
    ) -> None:
        """``opening``: how the path's session starts (``agent.wires.<protocol>.opening``); ``side``: makes the
        path's side channel (protocol v1's voice enrollment; ``None``: the path has none); ``occupant``: told
        when the session starts (it may be refused: the server is full) and while the caller speaks
        (admission's forecast of work to come)."""
        self.id = uuid.uuid4().hex[:12]
        self._ws = ws
        self._settings = settings
        self._components = components
        self._credentials = credentials
        self._metrics = metrics if metrics is not None else ServerMetrics()
        self._opening = opening
        self._log = logging.LoggerAdapter(log, {"session": self.id})
        self._refusals = RefusalLog(self._log, self._metrics)
        self._report = SessionReport(self._log, self._metrics, self._refusals)
        server = settings.server
        self._outbox_limit = server.max_outbox_bytes
        self._outbox = Outbox(audio_high_water=1, max_bytes=server.max_outbox_bytes, on_overflow=self._overflowed)
        self._inbox: Inbox = asyncio.Queue(maxsize=256)
        self._wire: Wire | None = None
        self._close: CloseSession | None = None
        self._gone = False  # the socket can no longer be written to (closed, or the client stopped reading)
        self._side: SideChannel | None = (
            None if side is None else side(components, settings, self._outbox.put, self._log)
        )
        self._drain: Drain | None = None  # asked for, not yet handed to the session
        self._occupant = occupant
        self._call: CallSetup | None = None  # set when the session starts, before anything is delivered
        self._turns: TurnTasks  # likewise
        self._effects: Effects  # likewise
        self._delivered_at = 0.0  # _clock() of the last event handed to the session

    def drain(self, finish_within_s: float) -> None:
        """The server is shutting down: finish the reply in progress within ``finish_within_s``, say goodbye,
        close 1001. Before the session has started, it is handed over when it does."""
        self._drain = Drain(_clock() + finish_within_s)
        self._stop(None)  # wake the loop

    def close_now(self) -> None:
        """The server is closing: end the session at once and close 1001 (a connection still opening is
        closed by the listener)."""
        self._stop(SHUTTING_DOWN_NOW, force=True)

    async def run(self) -> None:
        writer = asyncio.create_task(self._write(), name=f"writer-{self.id}")
        opened: Opened | None = None
        try:
            pre = PreStart(
                self._ws,
                self._settings,
                self._components,
                self._credentials,
                self._outbox.put,
                self._aside,
                lambda: self._side is not None and self._side.busy,
                self._refusals,
            )
            opened = await self._opening(pre)
            self._stop(pre.close)
            if opened is not None and self._occupant is not None and not self._occupant.started():
                self._log.info("refused a session: the server is at its session limit")
                self._metrics.refused("full")
                self._stop(SERVER_FULL)
                opened = None
            if opened is not None and not self._gone:
                await self._converse(opened)
        except Exception:  # a bug: logged once here, and the client is told no more than this
            self._log.exception("connection %s failed", self.id)
            self._close = INTERNAL_ERROR
        finally:
            await self._shutdown(writer, opened)

    # ------------------------------------------------------------------------------------- the session

    async def _converse(self, opened: Opened) -> None:
        wire = self._wire = opened.wire
        self._fit_outbox(wire)
        tenant = opened.principal.tenant
        tools = await server_tools(self._components, tenant, self._log) if opened.server_tools else ()
        call = self._call = CallSetup(self._settings, self._components, opened, self._log, tools)
        language = call.session.language
        tracer = start_call(self._components.tracing, _clock(), self.id, wire, tenant, language, opened.voice)
        post = self._inbox.put
        self._turns = TurnTasks(self._components, self._settings, post, self._speech, self._log, tenant, tracer)
        self._effects = Effects(wire, self._outbox, self._turns, self._report, call, self._occupant, self._stop, tracer)
        for payload in wire.opening(self.id, display_name(opened.voice)):
            self._outbox.put(payload)
        self._log.info(
            "session %s started: input %d Hz, voice %s, tenant %s, caller %s",
            self.id,
            wire.input_rate,
            display_name(opened.voice),
            opened.principal.tenant,
            opened.principal.subject,
        )
        self._effects.apply(call.session.open(_clock()))
        if opened.parting is not None:
            parting = Drain(_clock(), opened.parting.code, opened.parting.reason)
            self._effects.apply(call.session.handle(parting, _clock()))
        reader = asyncio.create_task(self._read(wire), name=f"reader-{self.id}")
        ticker = asyncio.create_task(self._tick(), name=f"ticker-{self.id}")
        if not call.session.config.detect_language or len(self._components.stt.languages) == 1:
            call.voicing.warm_phrases(call.session.language)  # else once the first turn says which
        try:
            while self._close is None and not self._gone:
                item = await self._inbox.get()
                if isinstance(item, CloseSession):
                    self._stop(item)
                elif isinstance(item, Stamped):
                    event = self._turns.fresh(item)
                    if event is not None:
                        self._deliver(event)
                elif item is not _WAKE:
                    self._deliver(item)  # type: ignore[arg-type]
                if self._drain is not None:
                    drain, self._drain = self._drain, None
                    self._log.info("draining: the session ends after its reply in progress")
                    self._effects.apply(call.session.handle(drain, _clock()))
        finally:
            for task in (reader, ticker):
                task.cancel()
            await self._turns.close()
            await asyncio.gather(reader, ticker, return_exceptions=True)
            if tracer is not None:
                tracer.end({"call.language": call.session.language})

    def _fit_outbox(self, wire: Wire) -> None:
        """Hold ``audio.outbound_buffer_ms`` of reply audio at the wire's output rate of the moment."""
        rate = wire.output_rate
        self._outbox.set_audio_high_water(rate * 2 * self._settings.audio.outbound_buffer_ms // 1000)

    def _speech(self, turn: int, post: Callable[[Event], Awaitable[None]]) -> TurnSpeech:
        """A turn's speech, in the session's voice and output rate of the moment."""
        wire, call = self._wire, self._call
        assert wire is not None and call is not None
        # Every client: a paused turn's audio is sent again from where it was heard, a prepared reply's from its
        # start once released, and a reply held before its first audio (the caller spoke again) from its start.
        room = self._outbox.wait_for_room
        return TurnSpeech(
            turn, call.voicing, wire.output_rate, wire.frame_ms, post, room, language=call.session.language, keep=True
        )

    async def _reconfigure(self, change: Reconfigure) -> None:
        """The client changes its session (Realtime ``session.update``): voice, audio formats, turn-taking rules."""
        wire, call = self._wire, self._call
        assert wire is not None and call is not None
        payloads = await call.reconfigure(change, wire)
        self._fit_outbox(wire)
        for payload in payloads:
            self._outbox.put(payload)

    async def _tick(self) -> None:
        """Let the core's timers (deadlines, playback end, hold, idle) run even when the client sends nothing.

        The core runs them on every event, so while the caller's audio flows (50 frames a second) no tick is
        needed: one is posted only when nothing was delivered for ``TICK_S``."""
        while True:
            await asyncio.sleep(TICK_S)
            if _clock() - self._delivered_at >= TICK_S:
                await self._inbox.put(Tick())

    async def _read(self, wire: Wire) -> None:
        limiter = InputRateLimiter(self._settings.server.max_input_rate, self._settings.server.input_rate_window_s)
        try:
            async for message in self._ws:
                try:
                    item = wire.decode(message)
                except ProtocolError as exc:
                    self._refuse(exc)
                    continue
                audio_ms = carried_audio_ms(item, wire.input_rate)  # the rate of the moment (a client may change it)
                if audio_ms is not None:
                    verdict = limiter.admit(audio_ms, time.monotonic())
                    if verdict is Verdict.CLOSE:
                        self._log.info("closing: audio keeps arriving faster than real time")
                        await self._inbox.put(FLOODING)
                        return
                    if verdict is not Verdict.ADMIT:
                        if verdict is Verdict.WARN or isinstance(item, CommitInput):  # a whole item: always said
                            self._refuse(ProtocolError("rate_limited", "audio faster than real time is dropped"))
                        continue
                if isinstance(item, Reconfigure):
                    try:
                        await self._reconfigure(item)
                    except ProtocolError as exc:
                        self._refuse(exc)
                elif isinstance(item, Aside):
                    principal = self._credentials.principal
                    assert principal is not None  # fixed before the session started
                    await self._aside(principal, item.request)
                elif item is not None:
                    self._deliver(item)
        except ConnectionClosed:
            pass
        except Exception:
            self._log.exception("reading the client's messages failed")
            await self._inbox.put(INTERNAL_ERROR)
            return
        self._gone = True
        await self._inbox.put(_WAKE)

    def _deliver(self, item: bytes | Event) -> None:
        """Hand caller audio or an event to the session core now and carry out what it decides.

        The reader calls it for what the client sends, without a queue in between (at 50 audio frames a second
        per caller, a hop through the inbox and a second task's wake-up cost as much as the rest of the frame's
        way); stage results, ticks and wake-ups come through the inbox. Both run on the loop, never at once."""
        if self._close is not None or self._gone:
            return  # the session is ending: what arrives now is not part of it
        self._delivered_at = _clock()
        call = self._call
        assert call is not None
        session, apply = call.session, self._effects.apply
        if isinstance(item, bytes):
            for frame in call.audio.push(item, _clock()):
                apply(session.handle(frame, _clock()))
        else:
            apply(session.handle(item, _clock()))

    async def _aside(self, principal: Principal, request: object) -> None:
        """Hand a request to the side channel (none on this path: a wire never decodes one for it)."""
        if self._side is not None:
            await self._side.handle(principal, request)

    def _refuse(self, exc: ProtocolError) -> None:
        self._refusals.refused("bad client message", exc.code)
        wire = self._wire
        if wire is not None:
            for payload in wire.encode(ErrorNotice(code=exc.code, message=exc.message)):
                self._outbox.put(payload)

    # ------------------------------------------------------------------------------------ the socket

    async def _write(self) -> None:
        timeout = self._settings.server.send_timeout_s
        try:
            while (item := await self._outbox.get_item()) is not None:
                turn, payload = item
                wire = self._wire
                sending = self._ws.send(payload) if wire is None else wire.send(self._ws, turn, payload)
                await asyncio.wait_for(sending, timeout)
                if self._call is not None and wire is not None and turn is not None and isinstance(payload, bytes):
                    self._call.played(payload, wire.output_rate, _clock())  # reply audio on its way to play
        except TimeoutError:
            self._log.info("closing: the client took no message for %g s", timeout)
            self._gone = True
            self._stop(NOT_READING, force=True)
        except ConnectionClosed:
            self._gone = True
            self._stop(None)

    def _overflowed(self) -> None:
        """The outbox let go of more than ``max_outbox_bytes`` the client did not take: close it as not reading."""
        self._log.info("closing: over %d bytes queued for a client that does not read", self._outbox_limit)
        self._metrics.error("not_reading")
        self._gone = True
        self._stop(NOT_READING, force=True)

    def _stop(self, close: CloseSession | None, *, force: bool = False) -> None:
        """End the connection (with ``close``, unless another close was decided first) and wake the loop."""
        if close is not None and (self._close is None or force):
            self._close = close
        if force:
            self._outbox.close()  # and wake whatever waits for room in it
        with contextlib.suppress(asyncio.QueueFull):  # a full inbox: the loop checks after each item anyway
            self._inbox.put_nowait(_WAKE)

    async def _shutdown(self, writer: asyncio.Task[None], opened: Opened | None) -> None:
        if self._side is not None:
            self._side.close()
        self._outbox.close()
        close = self._close
        if close is not None and not self._gone:
            # Let what is queued (the last events, an error) reach the client, but not for ever.
            await asyncio.wait({writer}, timeout=self._settings.server.send_timeout_s)
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
        if close is not None:
            await self._close_socket(close)
        what = "session" if opened is not None else "connection"
        how = f"closed {close.code} ({close.reason})" if close is not None else "closed by the client"
        self._log.info("%s %s %s", what, self.id, how)
        refused = self._refusals.summary()
        if refused is not None:
            self._log.info("%s %s: %s", what, self.id, refused)
        summary = self._wire.summary() if self._wire is not None else None
        if summary is not None:
            self._log.info("%s", summary)

    async def _close_socket(self, close: CloseSession) -> None:
        """Close with ``close``; a client that does not read cannot even take the close frame: drop it, and what it
        left unread goes with it (a reset: the kernel must not keep it for a peer that never takes it)."""
        if close is NOT_READING:
            reset_on_close(self._ws.transport)
        try:
            await asyncio.wait_for(self._ws.close(close.code, close.reason), self._settings.server.close_timeout_s)
        except TimeoutError:
            reset_on_close(self._ws.transport)
            self._ws.transport.abort()
