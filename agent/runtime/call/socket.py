"""The socket a ``Connection`` runs on: the small part of a websockets ``ServerConnection`` it uses, and how to let
go of one whose peer does not read (``reset_on_close``).

A WebSocket connection satisfies it as it is; ``agent.wires.audiosocket.listener.AudioSocketStream`` presents
a TCP AudioSocket stream the same way (whole messages in, messages out, a hangup on ``close``). Either raises
``websockets.exceptions.ConnectionClosed`` from ``recv`` and ``send`` once the peer is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from typing import Protocol


class CallSocket(Protocol):
    async def recv(self) -> str | bytes:
        """The next whole message. Raises ``ConnectionClosed`` when the peer has gone."""
        ...

    async def send(self, message: str | bytes, /) -> None:
        """Raises ``ConnectionClosed`` when the peer has gone."""
        ...

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """End the connection politely (a close frame, an AudioSocket hangup)."""
        ...

    def __aiter__(self) -> AsyncIterator[str | bytes]:
        """The messages until the peer leaves."""
        ...

    @property
    def transport(self) -> asyncio.WriteTransport:
        """``abort()`` drops a peer that does not even take the close."""
        ...


def reset_on_close(transport: asyncio.BaseTransport) -> None:
    """Make the socket's close a reset (``SO_LINGER`` 0): what the peer never took is thrown away at once, rather
    than held by the kernel (FIN-WAIT-1) for a peer that does not read, with its side left ESTABLISHED."""
    sock: socket.socket | None = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
