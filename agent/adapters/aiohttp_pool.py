"""One ``aiohttp`` client session (one connection pool) per event loop, for the adapters that speak HTTP with it.

Reason to change: how an HTTP adapter keeps its pool. A session belongs to the loop that made it: one made on
another (finished) loop cannot be used or closed from this one, so it is dropped and a new one made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import aiohttp


class LoopSession:
    """``get()`` the session of the running loop (made by ``make`` when there is none, or it was closed);
    ``aclose()`` closes it, on the loop that made it."""

    def __init__(self, make: Callable[[], aiohttp.ClientSession]) -> None:
        self._make = make
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            self._session, self._loop = self._make(), loop
        return self._session

    async def aclose(self) -> None:
        session, self._session, self._loop = self._session, None, None
        if session is not None:
            await session.close()
