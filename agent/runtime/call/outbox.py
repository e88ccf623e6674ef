"""The connection's outbound queue: ordered, bounded in bytes, clearable per turn.

Control messages and audio share one queue so the client sees them in order (``audio.start``, frames,
``audio.end``). ``put`` never blocks (the session loop must not stall); producers of audio call
``wait_for_room`` first, which holds them while more than ``audio_high_water`` bytes of audio are queued.
That is the backpressure from a slow client to synthesis.

Everything else is bounded too: once more than ``max_bytes`` (text and audio alike) beyond the audio high water
are queued, the client is not taking what it is sent (a client that floods requests and never reads their
answers): the queue empties itself, closes, and calls ``on_overflow`` once, so the connection closes it as
not reading. Memory held for one client is never more than that.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

Payload = str | bytes


class Outbox:
    def __init__(
        self, audio_high_water: int, max_bytes: int = 1 << 20, on_overflow: Callable[[], None] | None = None
    ) -> None:
        self._items: deque[tuple[int | None, Payload]] = deque()
        self._audio_bytes = 0
        self._bytes = 0  # everything queued (text counted by characters: JSON is mostly ASCII)
        self._max_bytes = max_bytes
        self._on_overflow = on_overflow
        self._high_water = audio_high_water
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._closed = False

    @property
    def audio_bytes(self) -> int:
        return self._audio_bytes

    @property
    def queued_bytes(self) -> int:
        """Everything queued: audio bytes and text characters."""
        return self._bytes

    def set_audio_high_water(self, audio_high_water: int) -> None:
        """Change the bound (a connection learns its output rate only when its session starts)."""
        self._high_water = audio_high_water
        self._update_room()

    def put(self, payload: Payload, turn: int | None = None) -> None:
        if self._closed:
            return
        self._items.append((turn, payload))
        self._bytes += len(payload)
        if self._bytes > self._max_bytes + self._high_water:
            self._overflow()
            return
        if isinstance(payload, bytes):
            self._audio_bytes += len(payload)
            if self._audio_bytes >= self._high_water:
                self._room.clear()
        self._readable.set()

    async def wait_for_room(self) -> None:
        await self._room.wait()

    def drop_audio(self, turn: int) -> int:
        """Remove queued audio frames of ``turn``; returns the number of bytes dropped."""
        kept: deque[tuple[int | None, Payload]] = deque()
        dropped = 0
        for item in self._items:
            if item[0] == turn and isinstance(item[1], bytes):
                dropped += len(item[1])
                self._bytes -= len(item[1])
            else:
                kept.append(item)
        self._items = kept
        self._audio_bytes -= dropped
        self._update_room()
        return dropped

    async def get(self) -> Payload | None:
        """The next payload, or ``None`` once closed and drained."""
        item = await self.get_item()
        return None if item is None else item[1]

    async def get_item(self) -> tuple[int | None, Payload] | None:
        """The next ``(turn, payload)`` as put, or ``None`` once closed and drained."""
        while not self._items:
            if self._closed:
                return None
            self._readable.clear()
            await self._readable.wait()
        turn, payload = self._items.popleft()
        self._bytes -= len(payload)
        if isinstance(payload, bytes):
            self._audio_bytes -= len(payload)
            self._update_room()
        return turn, payload

    def close(self) -> None:
        """No more puts; ``get`` returns what is queued, then ``None``."""
        self._closed = True
        self._readable.set()
        self._room.set()

    def _overflow(self) -> None:
        """Too much is queued: drop it all (the client is not reading it), close, and say so once."""
        self._items.clear()
        self._bytes = self._audio_bytes = 0
        self.close()
        notify, self._on_overflow = self._on_overflow, None
        if notify is not None:
            notify()

    def _update_room(self) -> None:
        if self._audio_bytes < self._high_water or self._closed:
            self._room.set()
        else:
            self._room.clear()
