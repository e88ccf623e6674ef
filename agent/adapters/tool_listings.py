"""A tenant's MCP tools as the server knows them now: each of its MCP servers' last good listing, refreshed in the
background, and the route from each offered name to the one server that runs it.

Reason to change: how the listings are kept (when a server is asked again, how many listings run at once, which
server a name routes to).

- ``offered()`` never waits: it gives the tools of the last good listings (none before a server's first) and, when
  a listing is due, starts one refresh in the background. A listing is due when it was never taken, ``ttl_s``
  after a good one, ``FAILED_RETRY_S`` (at most ``ttl_s``) after a failed one. One refresh per tenant runs at a
  time, however many calls start meanwhile: a stalled server costs no caller a moment, and is asked once.
- A refresh lists every due server at once, each within its own ``timeout_s``. A server that cannot be listed
  keeps its last good listing (a warning says why) until it is asked again.
- Routes follow the current listings: one name, one server. A name two servers offer routes to the first in the
  tools file's order, whose spec is the one offered; the other's tool is left out (a warning at each refresh).
  So is a name the clock or an HTTP tool of the tenant has (``taken``). A tool a server no longer lists has no
  route: calling it fails as no such tool.
- ``refreshed()`` waits for the refresh in flight, or for one started because a listing is due; it never waits
  longer than the slowest due server's ``timeout_s``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.errors import ProviderTimeout, ToolFailed
from agent.ports import ToolSpec
from agent.security.logsafe import shown

if TYPE_CHECKING:
    from agent.adapters.mcp_tools import Listed, McpTools

log = logging.getLogger(__name__)

FAILED_RETRY_S = 10.0
"""An MCP server that could not be listed is asked again after this long (not at every call)."""


@dataclass(frozen=True, slots=True)
class Route:
    """Where a call of an offered name goes: the server, and the tool as it offered it (spec and check)."""

    server: McpTools
    tool: Listed


@dataclass(frozen=True, slots=True)
class _Listing:
    tools: tuple[Listed, ...]
    """The last good listing's tools (none before the first)."""
    expires: float


class McpListings:
    """The MCP servers of ``tenant`` (in the tools file's order), their listings and routes. ``taken``: the names
    the tenant's clock and HTTP tools have. ``monotonic``: the clock the listings expire by."""

    def __init__(
        self,
        tenant: str,
        servers: tuple[McpTools, ...],
        taken: frozenset[str],
        ttl_s: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tenant = tenant
        self._servers = servers
        self._taken = taken
        self._ttl_s = ttl_s
        self._monotonic = monotonic
        self._listings: dict[str, _Listing] = {}
        self._routes: dict[str, Route] = {}
        self._refresh: asyncio.Task[None] | None = None

    @property
    def servers(self) -> tuple[McpTools, ...]:
        return self._servers

    def offered(self) -> tuple[ToolSpec, ...]:
        """The tools the current listings offer, at once; a refresh starts in the background if one is due."""
        self._start()
        return tuple(route.tool.spec for route in self._routes.values())

    def route(self, name: str) -> Route | None:
        """Where a call of ``name`` goes now (``None``: no server offers it)."""
        return self._routes.get(name)

    def due(self) -> bool:
        """Whether some server's listing is due (a refresh would ask it)."""
        return bool(self._due())

    async def refreshed(self) -> None:
        """Wait for the refresh in flight, or for one started now if a listing is due (shielded: a caller that
        gives up does not stop it)."""
        task = self._start()
        if task is not None:
            await asyncio.shield(task)

    async def aclose(self) -> None:
        """Stop the refresh in flight, if it runs on this loop."""
        task, self._refresh = self._refresh, None
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _due(self) -> list[McpTools]:
        now = self._monotonic()
        listings = self._listings
        return [s for s in self._servers if (n := listings.get(s.server.name)) is None or now >= n.expires]

    def _start(self) -> asyncio.Task[None] | None:
        loop = asyncio.get_running_loop()
        task = self._refresh
        if task is not None and not task.done() and task.get_loop() is loop:
            return task
        due = self._due()
        if not due:
            return None
        names = ", ".join(server.server.name for server in due)
        log.debug("tenant %s: refreshing the listings of MCP servers %s", shown(self._tenant), names)
        self._refresh = task = loop.create_task(self._run(due), name=f"mcp-listings-{self._tenant}")
        return task

    async def _run(self, due: list[McpTools]) -> None:
        await asyncio.gather(*(self._list(server) for server in due))
        self._reroute()

    async def _list(self, server: McpTools) -> None:
        name = server.server.name
        known = self._listings.get(name)
        try:
            tools = await server.list()
        except (ToolFailed, ProviderTimeout) as exc:
            reason = exc.detail
        except Exception as exc:  # a bug or an unmapped error: the other servers' listings go on
            log.debug("MCP server %s: listing failed unexpectedly", name, exc_info=True)
            reason = f"the listing failed ({type(exc).__name__})"
        else:
            self._listings[name] = _Listing(tools, self._monotonic() + self._ttl_s)
            return
        kept = "its last good listing kept" if known is not None and known.tools else "left out"
        log.warning("tenant %s: MCP server %s %s: %s", shown(self._tenant), name, kept, shown(reason, 200))
        retry_s = min(FAILED_RETRY_S, self._ttl_s)
        self._listings[name] = _Listing(known.tools if known is not None else (), self._monotonic() + retry_s)

    def _reroute(self) -> None:
        routes: dict[str, Route] = {}
        for server in self._servers:
            listing = self._listings.get(server.server.name)
            for tool in listing.tools if listing is not None else ():
                name = tool.spec.name
                if name in self._taken or name in routes:
                    log.warning("MCP server %s: tool %s left out: the name is taken", server.server.name, name)
                    continue
                routes[name] = Route(server, tool)
        self._routes = routes
