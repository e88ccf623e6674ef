"""How the server finds a WebSocket peer that is gone or does not read, and lets go of it.

Its one reason to change is that decision and the socket options behind it. Three bounds, each set on every
upgraded socket (``Liveness.tune``) or run beside its handler (``Liveness.watch``), or how it is let go of:

- a small kernel send buffer (``server.send_buffer_bytes``): a client that stops reading blocks the connection's
  next send soon, and the send deadline (``server.send_timeout_s``, the connection's writer) closes it;
- the keepalive: a ping every ``server.ping_interval_s``; a peer whose pong has not come ``server.ping_timeout_s``
  after the ping was due, and which took nothing of what it was sent meanwhile, is closed 1011 if it can take
  the close frame within ``server.close_timeout_s``, and reset either way. (A slow reader's pong waits behind the
  audio it is still reading: while its TCP acknowledges more of it, it is alive.) It replaces ``websockets``' own
  keepalive, which waits for the write buffer to drain before a ping leaves, and again before it gives up, with
  no deadline: while a peer left what the server sent unread, the transport stayed paused, so that keepalive
  never pinged again nor closed it. Here one deadline covers the ping's way out and its pong. A peer dropped this
  way is reset (``SO_LINGER`` 0), not closed gracefully: one that does not read cannot take the FIN either, and a
  graceful close leaves the server's kernel holding what it never took (FIN-WAIT-1) and the peer's side
  ESTABLISHED, for minutes;
- a reset, never a graceful close, for a peer let go of because it does not read (here, and for the send
  deadline's close in ``agent.runtime.call.connection``): the kernel keeps nothing for it. (The kernel's own
  bound, ``TCP_USER_TIMEOUT``, is not used: it also ends a reader that is only slow, whose receive window stays
  closed between its reads for longer than that bound.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.protocol import State

from agent.config import ServerSettings
from agent.runtime.call.socket import reset_on_close

log = logging.getLogger(__name__)

KEEPALIVE_TIMEOUT = "keepalive ping timeout"


def _socket(connection: ServerConnection) -> socket.socket | None:
    sock: socket.socket | None = connection.transport.get_extra_info("socket")
    return sock


_BYTES_ACKED = struct.Struct("=Q")
_BYTES_ACKED_AT = 120
"""Offset of ``tcpi_bytes_acked`` in Linux's ``struct tcp_info`` (since Linux 4.1): data the peer acknowledged."""


def _bytes_acked(connection: ServerConnection) -> int | None:
    """The bytes the peer's TCP has taken so far (``None`` where the system does not say): it takes more only as
    its application reads, once its receive buffer is full."""
    sock, option = _socket(connection), getattr(socket, "TCP_INFO", None)
    if sock is None or option is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, option, 256)
    except OSError:
        return None
    if len(info) < _BYTES_ACKED_AT + _BYTES_ACKED.size:
        return None
    acked: int = _BYTES_ACKED.unpack_from(info, _BYTES_ACKED_AT)[0]
    return acked


async def _ping_pong(connection: ServerConnection) -> None:
    pong = await connection.ping()  # waits while the peer leaves our data unread
    await pong


class Liveness:
    """The bounds of ``server`` settings on one server's WebSocket peers."""

    def __init__(self, server: ServerSettings, on_drop: Callable[[], None] = lambda: None) -> None:
        """``on_drop``: told each time the keepalive gives up on a peer (counted on ``/metrics``)."""
        self._on_drop = on_drop
        self._send_buffer = server.send_buffer_bytes
        self._interval_s = server.ping_interval_s
        self._timeout_s = server.ping_timeout_s
        self._close_timeout_s = server.close_timeout_s

    def tune(self, connection: ServerConnection) -> None:
        """Set the socket's kernel send buffer at the upgrade."""
        sock = _socket(connection)
        if sock is not None and self._send_buffer > 0:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._send_buffer)

    async def watch(self, connection: ServerConnection) -> None:
        """Ping the peer every interval until the connection closes; drop it (``drop``) when a pong does not come
        in time. Run it beside the connection's handler and cancel it when the handler returns."""
        try:
            while True:
                await asyncio.sleep(self._interval_s)
                if connection.state is not State.OPEN:
                    return  # closing: the closing handshake has deadlines of its own
                if not await self._answered(connection):
                    break
        except ConnectionClosed:
            return
        remote = connection.remote_address
        peer = str(remote[0]) if remote else "a peer"
        log.info("closing %s: no pong within %g s (it is gone or does not read)", peer, self._timeout_s)
        self._on_drop()
        await self.drop(connection)

    async def _answered(self, connection: ServerConnection) -> bool:
        """Ping: ``True`` once the pong comes; ``False`` when it has not come within the timeout and the peer took
        none of what it was sent meanwhile. A peer that reads slowly (a client playing the reply as it reads it)
        finds the ping behind the audio still on its way: while it goes on taking that audio (its TCP
        acknowledgements, ``_bytes_acked``), it is alive, and its pong is waited for one more timeout."""
        acked = _bytes_acked(connection)
        pinging = asyncio.ensure_future(_ping_pong(connection))
        try:
            while True:
                done, _ = await asyncio.wait({pinging}, timeout=self._timeout_s)
                if done:
                    pinging.result()  # raises ConnectionClosed when the peer went away meanwhile
                    return True
                now = _bytes_acked(connection)
                if acked is None or now is None or now <= acked:
                    return False
                acked = now
        finally:
            pinging.cancel()

    async def drop(self, connection: ServerConnection) -> None:
        """Send close 1011 and give the closing handshake the close timeout (a peer that does not read cannot take
        even the frame), then reset the connection."""
        reset_on_close(connection.transport)
        try:
            async with asyncio.timeout(self._close_timeout_s):
                await connection.close(CloseCode.INTERNAL_ERROR, KEEPALIVE_TIMEOUT)
        except (TimeoutError, ConnectionClosed):
            pass
        finally:
            connection.transport.abort()
