"""The Asterisk AudioSocket listener: TCP connections from your own PBX, run as calls like any other.

Its one reason to change is how AudioSocket's TCP connections are accepted, held and closed.
``AudioSocketListener`` is the AudioSocket endpoint's own listener (``Endpoint.listener``), started by
``running_server`` when ``audiosocket.port`` is set. It shares the server's state: components, admission (a call
refused as any upgrade is, or over the bound of connections still waiting for their UUID, is hung up at once:
AudioSocket cannot say "busy"), metrics, drain and close-all. Each connection is an ``AudioSocketStream`` (the
``CallSocket`` a ``Connection`` runs on) whose session opens with the call's UUID
(``agent.wires.audiosocket.opening``) and then runs on the telephony core.

AudioSocket has no authentication: only peers on loopback or in ``audiosocket.allowed_peers`` are taken; any
other connection is closed before a byte is read (``agent.wires.audiosocket.credential``, whose exposure rule
refuses to start with a network that lets everyone in). Ending a call sends a hangup (``0x00``), after the audio
already sent has played.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator

from websockets.exceptions import ConnectionClosed

from agent.config import Settings
from agent.runtime.call.connection import Connection
from agent.runtime.call.prestart import Credentials, Opened, Opening, PreStart
from agent.runtime.server.forwarded import peer_key
from agent.runtime.server.state import ServerState
from agent.security.auth import DEFAULT_TENANT, Principal
from agent.wires.audiosocket import codec as audiosocket
from agent.wires.audiosocket.credential import peer_allowed

log = logging.getLogger(__name__)

READ_BYTES = 65536
LINGER_S = 2.0
"""After a hangup, time given to the peer to close its side: closing a socket with unread bytes resets it, and
a reset can destroy the hangup before the peer reads it."""


class AudioSocketStream:
    """One AudioSocket TCP connection as a ``CallSocket``: ``recv`` yields whole messages (``Splitter``),
    ``send`` writes bytes, ``close`` sends a hangup once the audio sent has played (at most ``lead_s``)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, lead_s: float) -> None:
        self._reader = reader
        self._writer = writer
        self._lead_s = lead_s
        self._splitter = audiosocket.Splitter()
        self._ended = False  # the peer closed its side (or the socket failed)
        self._closed = False  # we closed ours
        self._sent_at: float | None = None  # time.monotonic() of the last message sent
        self._reading = False  # a recv is waiting for bytes

    @property
    def transport(self) -> asyncio.WriteTransport:
        return self._writer.transport

    async def recv(self) -> bytes:
        while (message := self._splitter.next()) is None:
            if self._ended or self._closed:
                raise ConnectionClosed(None, None)
            self._reading = True
            try:
                data = await self._reader.read(READ_BYTES)
            except OSError:
                data = b""
            finally:
                self._reading = False
            if not data:
                self._ended = True
            self._splitter.feed(data)
        return message

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[bytes]:
        while True:
            try:
                yield await self.recv()
            except ConnectionClosed:
                return

    async def send(self, message: str | bytes, /) -> None:
        if isinstance(message, str):
            return  # AudioSocket has no text messages (nothing the telephony wire sends is one)
        if self._closed or self._writer.is_closing():
            raise ConnectionClosed(None, None)
        try:
            self._writer.write(message)
            await self._writer.drain()
        except OSError:
            self._ended = True
            raise ConnectionClosed(None, None) from None
        self._sent_at = time.monotonic()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Hang up (``0x00``) and close; the audio already sent plays out first (Asterisk ends the call on the
        hangup). ``code`` and ``reason`` have no AudioSocket message: they are logged by the connection."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            if not self._writer.is_closing():
                if self._sent_at is not None:
                    played_out = self._sent_at + self._lead_s + audiosocket.FRAME_MS / 1000
                    await asyncio.sleep(max(0.0, played_out - time.monotonic()))
                self._writer.write(audiosocket.HANGUP)
                if self._writer.can_write_eof():
                    self._writer.write_eof()
                await self._writer.drain()
                await self._until_peer_closes()
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    async def _until_peer_closes(self) -> None:
        """Read and drop what the peer still sends until it closes (Asterisk does on a hangup), at most
        ``LINGER_S``; not while a ``recv`` is waiting (it sees the end itself)."""
        deadline = time.monotonic() + LINGER_S
        while not self._ended and not self._reading and (remaining := deadline - time.monotonic()) > 0:
            try:
                data = await asyncio.wait_for(self._reader.read(READ_BYTES), remaining)
            except TimeoutError:
                return
            self._ended = not data


class AudioSocketListener:
    """The TCP listener; ``start`` it, then ``close`` it after the server's calls were told to close."""

    def __init__(self, settings: Settings, state: ServerState, opening: Opening) -> None:
        """``opening``: how each connection's call starts (``agent.wires.audiosocket.opening``)."""
        self._settings = settings
        self._state = state
        self._open_call = opening
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._opening: set[AudioSocketStream] = set()  # connections waiting for their call's UUID

    @classmethod
    def on(cls, settings: Settings, state: ServerState, opening: Opening) -> AudioSocketListener | None:
        """The listener the settings ask for (``None``: ``audiosocket.port`` is not set)."""
        return cls(settings, state, opening) if settings.audiosocket.port is not None else None

    @property
    def port(self) -> int:
        assert self._server is not None, "start the listener first"
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        cfg = self._settings.audiosocket
        self._server = await asyncio.start_server(self._accept, cfg.host, cfg.port or 0)
        log.info("AudioSocket listening on %s:%d", cfg.host, self.port)

    async def close(self) -> None:
        """Stop listening, hang up connections still waiting for their UUID (the calls were told to close by
        ``LiveCalls.close_all``), and wait for every handler to end."""
        if self._server is not None:
            self._server.close()
        for stream in list(self._opening):
            await stream.close()  # its opening, blocked on recv, ends
        if self._handlers:
            _, pending = await asyncio.wait(self._handlers, timeout=self._settings.server.close_timeout_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._call(reader, writer)
        finally:
            self._handlers.discard(task)

    async def _call(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state, settings = self._state, self._settings
        peer = writer.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) else ""
        if not peer_allowed(host, settings.audiosocket.allowed_peers):
            log.warning("refused an AudioSocket connection from %s: not in AGENT_AUDIOSOCKET__ALLOWED_PEERS", host)
            state.metrics.error("peer_not_allowed")
            writer.transport.abort()
            return
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # 20 ms frames, not Nagle's batches
        stream = AudioSocketStream(reader, writer, settings.audiosocket.lead_ms / 1000)
        components = state.components
        peer = peer_key(host)
        # Only the total bound: an allowed peer is one of our PBXes, and every call it carries comes from its address.
        refused = state.refusal(settings.server) or state.occupancy.refusal_to_open(peer, per_peer=False)
        if refused is not None or components is None:
            reason = refused.reason if refused is not None else "loading"
            log.info("hung up an AudioSocket call from %s: %s", host, reason)
            state.metrics.refused(reason)
            await stream.close()
            return
        occupant = state.occupant(state.seat(stream, peer, per_peer=False))
        try:
            principal = Principal(DEFAULT_TENANT, frozenset({"call"}), f"audiosocket:{host}")
            connection = Connection(
                stream,
                settings,
                components,
                Credentials(state.auth, principal),
                state.metrics,
                opening=lambda pre: self._open(pre, stream),
                occupant=occupant,
            )
            state.calls.add(connection)
            try:
                await connection.run()
            finally:
                state.calls.discard(connection)
        except Exception:
            log.exception("AudioSocket call handler failed")
        finally:
            await stream.close()
            occupant.left()

    async def _open(self, pre: PreStart, stream: AudioSocketStream) -> Opened | None:
        self._opening.add(stream)
        try:
            return await self._open_call(pre)
        finally:
            self._opening.discard(stream)
