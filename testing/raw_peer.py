"""A WebSocket client written at the byte level, which reads only when told to, and what the kernel still holds
of its connection.

A client made with ``websockets`` reads the socket and answers pings by itself, whatever the test does, so a peer
that really stops reading (and never answers a ping) has to be written by hand: ``RawPeer`` sends the upgrade and
masked frames over a plain TCP socket with a small receive buffer, and reads only in ``read_until``, where it
behaves (it answers pings), so that only its silence afterwards is under test.
``server_side_states`` reads ``/proc/net/tcp`` (Linux) to say whether the server's kernel still holds the
connection (an orphan in FIN-WAIT-1 keeps what the peer never took). It changes when tests need another way to
misbehave below the WebSocket library. Every wait is bounded and fails loudly.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import struct
from collections.abc import Iterable
from pathlib import Path

WAIT_S = 30.0
"""The default bound on one wait: only against a hang."""
PROC_TCP = Path("/proc/net/tcp")
TCP_STATES = {
    "01": "ESTABLISHED",
    "02": "SYN_SENT",
    "03": "SYN_RECV",
    "04": "FIN_WAIT1",
    "05": "FIN_WAIT2",
    "06": "TIME_WAIT",
    "07": "CLOSE",
    "08": "CLOSE_WAIT",
    "09": "LAST_ACK",
    "0A": "LISTEN",
    "0B": "CLOSING",
}


def frame(opcode: int, payload: bytes) -> bytes:
    """One final, masked client frame (RFC 6455 5.2)."""
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


class RawPeer:
    """A WebSocket client that reads only in ``read_until``: between calls it takes nothing, pings included."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._received = b""
        self._port = 0

    @classmethod
    async def connect(
        cls, port: int, path: str = "/ws", *, headers: Iterable[str] = (), receive_buffer: int = 4096
    ) -> RawPeer:
        """Open ``path`` on 127.0.0.1:``port`` with a ``receive_buffer``-byte kernel receive buffer (so the
        server's sends stop being taken soon after the peer stops reading). Raises ``AssertionError`` unless the
        server answers 101."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        peer = cls(sock)
        try:
            await asyncio.wait_for(peer._loop.sock_connect(sock, ("127.0.0.1", port)), WAIT_S)
            peer._port = int(sock.getsockname()[1])
            key = base64.b64encode(os.urandom(16)).decode()
            lines = [
                f"GET {path} HTTP/1.1",
                f"Host: 127.0.0.1:{port}",
                "Upgrade: websocket",
                "Connection: Upgrade",
                f"Sec-WebSocket-Key: {key}",
                "Sec-WebSocket-Version: 13",
                *headers,
            ]
            await peer._loop.sock_sendall(sock, ("\r\n".join(lines) + "\r\n\r\n").encode())
            async with asyncio.timeout(WAIT_S):
                while b"\r\n\r\n" not in peer._received:
                    await peer._receive()
            head, peer._received = peer._received.split(b"\r\n\r\n", 1)
            status = head.split(b"\r\n", 1)[0]
            assert status.startswith(b"HTTP/1.1 101"), status
        except BaseException:
            peer.abort()
            raise
        return peer

    @property
    def port(self) -> int:
        """The peer's own TCP port."""
        return self._port

    async def send_text(self, text: str) -> None:
        await asyncio.wait_for(self._loop.sock_sendall(self._sock, frame(0x1, text.encode())), WAIT_S)

    async def read_until(self, marker: bytes, wait_s: float = WAIT_S) -> bytes:
        """Read messages, answering pings, until a text message holding ``marker`` has come; that message.
        ``AssertionError`` if the server closes first or it does not come within ``wait_s``."""
        try:
            async with asyncio.timeout(wait_s):
                while True:
                    opcode, payload = await self._next_frame()
                    if opcode == 0x9:
                        await self._loop.sock_sendall(self._sock, frame(0xA, payload))
                    elif opcode == 0x8:
                        raise AssertionError(f"the server closed before {marker!r}: {payload!r}")
                    elif opcode == 0x1 and marker in payload:
                        return payload
        except TimeoutError:
            raise AssertionError(f"no {marker!r} within {wait_s} s") from None

    async def _next_frame(self) -> tuple[int, bytes]:
        """The next frame from the server (unmasked, RFC 6455 5.2): its opcode and payload."""
        head = await self._take(2)
        opcode, size = head[0] & 0x0F, head[1] & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", await self._take(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", await self._take(8))
        return opcode, await self._take(size)

    async def _take(self, size: int) -> bytes:
        while len(self._received) < size:
            await self._receive()
        data, self._received = self._received[:size], self._received[size:]
        return data

    async def _receive(self) -> None:
        data = await self._loop.sock_recv(self._sock, 65536)
        assert data, "the server closed the connection"
        self._received += data

    def server_side_states(self, server_port: int) -> list[str]:
        """The TCP states of this connection's socket on the server's side that the kernel still keeps (none
        once it has let go; TIME_WAIT holds no data and is left out)."""
        states = []
        for line in PROC_TCP.read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state = int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16), fields[3]
            if (local, remote) == (server_port, self.port) and state != "06":
                states.append(TCP_STATES.get(state, state))
        return states

    def abort(self) -> None:
        """Drop the connection at once (a reset: what the peer never read is thrown away)."""
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self._sock.close()
