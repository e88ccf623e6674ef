"""The server's ``ToolRunner``: per tenant, the built-in clock, the tools file's HTTP tools and its MCP servers'
tools, behind one port; and the audit line every call leaves.

Reason to change: how the tool sources are put together (what a tenant is offered, how a call finds its tool,
the output bound, the audit line). How each source calls its tool is its adapter's (``clock_tools``,
``http_tools``, ``mcp_tools``).

``tools(tenant)``: the clock (unless turned off), the tenant's HTTP tools, then each MCP server's tools, listed
at once and kept ``mcp_list_ttl_s``; a server that cannot be listed is left out, with a warning, and asked again
after ``FAILED_RETRY_S`` (not at every turn). A name offered twice keeps its first source. ``run`` finds the
call's tool by name (an MCP tool by its server's last listing; an unknown name is a ``ToolFailed``), parses its
arguments (a JSON object), runs it within its timeout and cuts its output to ``max_output_chars`` (marked). Tool
output is untrusted data for the model: bounded here, and never made into instructions by anyone.

Audit: one INFO line per call on ``agent.tools.audit``: tenant, tool, source, call id, duration in ms, outcome
(``ok``, ``failed``, ``timeout``, ``cancelled``) and the output's size; never the arguments' values, nor a
failure's detail (an error may echo them), which a DEBUG line holds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agent.adapters.clock_tools import ClockTool, utc_now
from agent.adapters.http_tools import HttpTools
from agent.config.tool_file import HttpTool, ToolsFile
from agent.config.tools import ToolSettings
from agent.errors import ProviderTimeout, ToolFailed
from agent.ports import ToolCall, ToolSpec
from agent.security.logsafe import shown

if TYPE_CHECKING:
    from agent.adapters.mcp_tools import McpTools

log = logging.getLogger(__name__)
audit = logging.getLogger("agent.tools.audit")

FAILED_RETRY_S = 10.0
"""An MCP server that could not be listed is left out this long before it is asked again."""
CUT_MARK = " [output cut]"
MAX_ARGUMENTS_CHARS = 64_000


def bounded(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending with ``CUT_MARK`` when it was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(CUT_MARK))] + CUT_MARK


def parse_arguments(call: ToolCall) -> dict[str, object]:
    """The call's arguments (JSON text written by the model) as an object; ``{}`` for empty text."""
    text = call.arguments.strip()
    if not text:
        return {}
    if len(text) > MAX_ARGUMENTS_CHARS:
        raise ToolFailed(call.name, "the arguments are too long")
    try:
        value = json.loads(text)
    except ValueError:
        raise ToolFailed(call.name, "the arguments are not valid JSON") from None
    if not isinstance(value, dict):
        raise ToolFailed(call.name, "the arguments must be a JSON object")
    return value


@dataclass(slots=True)
class _Listing:
    """What an MCP server offered at its last listing (``None`` after a failure) and until when it holds."""

    specs: tuple[ToolSpec, ...] | None
    expires: float


@dataclass(frozen=True, slots=True)
class _Tenant:
    clock: bool
    http: dict[str, HttpTool]
    http_specs: tuple[ToolSpec, ...]
    mcp: tuple[McpTools, ...]


class ToolBox:
    """``ToolRunner`` over the clock, HTTP tools and MCP servers of ``catalog`` (the loaded tools file).

    ``now``: the clock the ``get_time`` tool reads; ``monotonic``: the one the MCP listings expire by and the
    audit lines time with. ``aclose`` closes the HTTP connection pools."""

    def __init__(
        self,
        settings: ToolSettings,
        catalog: ToolsFile,
        *,
        now: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._catalog = catalog
        self._monotonic = monotonic
        self._clock = ClockTool(now)
        self._http = HttpTools(catalog.policy, settings.max_output_chars, settings.default_timeout_s)
        self._tenants: dict[str, _Tenant] = {}
        self._listings: dict[tuple[str, str], _Listing] = {}
        self._pending: dict[tuple[str, str], asyncio.Task[tuple[ToolSpec, ...] | None]] = {}
        self._routes: dict[tuple[str, str], McpTools] = {}
        """(tenant, offered name) -> the MCP server that offered it at its last good listing."""
        if any(tools.mcp for tools in catalog.tenants.values()):
            # The mcp package takes half a second to import: here, at start-up (not in the event loop at a
            # tenant's first call), and only where the tools file names an MCP server.
            import agent.adapters.mcp_tools  # noqa: F401

    def _tenant(self, tenant: str) -> _Tenant:
        known = self._tenants.get(tenant)
        if known is None:
            tools = self._catalog.tenant(tenant)
            http = {tool.name: tool for tool in tools.http}
            specs = tuple(
                ToolSpec(t.name, t.description, t.parameters_json, "server", self._http.timeout_s(t))
                for t in tools.http
            )
            servers: tuple[McpTools, ...] = ()
            if tools.mcp:
                from agent.adapters.mcp_tools import McpTools  # imported already, by __init__

                policy, timeout_s = self._catalog.policy, self._settings.default_timeout_s
                servers = tuple(McpTools(server, policy, timeout_s) for server in tools.mcp)
            clock = self._settings.clock if tools.clock is None else tools.clock
            known = self._tenants[tenant] = _Tenant(clock, http, specs, servers)
        return known

    async def tools(self, tenant: str) -> tuple[ToolSpec, ...]:
        known = self._tenant(tenant)
        offered: dict[str, ToolSpec] = {}
        if known.clock:
            offered[self._clock.spec.name] = self._clock.spec
        for spec in known.http_specs:
            offered.setdefault(spec.name, spec)
        listings = await asyncio.gather(*(self._listing(tenant, server) for server in known.mcp))
        for server, specs in zip(known.mcp, listings, strict=True):
            for spec in specs or ():
                if spec.name in offered:
                    log.warning("MCP server %s: tool %s left out: the name is taken", server.server.name, spec.name)
                    continue
                offered[spec.name] = spec
        return tuple(offered.values())

    async def _listing(self, tenant: str, server: McpTools) -> tuple[ToolSpec, ...] | None:
        """The server's tools, from the cache while it holds; one listing at a time per server."""
        key = (tenant, server.server.name)
        listing = self._listings.get(key)
        if listing is not None and self._monotonic() < listing.expires:
            return listing.specs
        pending = self._pending.get(key)
        if pending is None or pending.get_loop() is not asyncio.get_running_loop():
            pending = self._pending[key] = asyncio.create_task(self._list(tenant, server))
            pending.add_done_callback(
                lambda task: self._pending.pop(key, None) if self._pending.get(key) is task else None
            )
        # Shielded: a caller that gives up does not cancel the listing the others wait on.
        return await asyncio.shield(pending)

    async def _list(self, tenant: str, server: McpTools) -> tuple[ToolSpec, ...] | None:
        key = (tenant, server.server.name)
        try:
            specs: tuple[ToolSpec, ...] | None = await server.list()
        except (ToolFailed, ProviderTimeout) as exc:
            log.warning("tenant %s: MCP server %s left out: %s", tenant, server.server.name, shown(exc.detail, 200))
            specs = None
        ttl = self._settings.mcp_list_ttl_s if specs is not None else min(FAILED_RETRY_S, self._settings.mcp_list_ttl_s)
        self._listings[key] = _Listing(specs, self._monotonic() + ttl)
        for spec in specs or ():
            self._routes[(tenant, spec.name)] = server
        return specs

    async def _mcp_for(self, tenant: str, name: str) -> McpTools | None:
        server = self._routes.get((tenant, name))
        if server is None and self._tenant(tenant).mcp:
            await self.tools(tenant)  # a name not seen yet: the listings may be out of date
            server = self._routes.get((tenant, name))
        return server

    async def run(self, tenant: str, call: ToolCall) -> str:
        start = self._monotonic()
        source, outcome, output, detail = "unknown", "failed", "", ""
        try:
            known = self._tenant(tenant)
            arguments = parse_arguments(call)
            if call.name == self._clock.spec.name and known.clock:
                source = "clock"
                output = self._clock.run(arguments)
            elif (http := known.http.get(call.name)) is not None:
                source = "http"
                output = await self._http.run(http, arguments)
            elif (server := await self._mcp_for(tenant, call.name)) is not None:
                source = f"mcp:{server.server.name}"
                output = await server.call(call.name, arguments)
            else:
                raise ToolFailed(call.name, "no such tool")
            output = bounded(output, self._settings.max_output_chars)
            outcome = "ok"
            return output
        except ProviderTimeout as exc:
            outcome, detail = "timeout", exc.detail
            raise
        except ToolFailed as exc:
            detail = exc.detail
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception as exc:  # a bug or an unmapped library error: the port promises ToolFailed
            detail = type(exc).__name__
            log.debug("tool %s failed unexpectedly", shown(call.name), exc_info=True)
            raise ToolFailed(call.name, "the tool failed") from None
        finally:
            duration_ms = (self._monotonic() - start) * 1000
            audit.info(
                "tool call tenant=%s tool=%s source=%s call_id=%s duration_ms=%.0f outcome=%s output_chars=%d",
                shown(tenant),
                shown(call.name),
                source,
                shown(call.call_id),
                duration_ms,
                outcome,
                len(output),
            )
            if audit.isEnabledFor(logging.DEBUG):
                audit.debug(
                    "tool call %s arguments=%s detail=%s",
                    shown(call.call_id),
                    shown(call.arguments, 2000),
                    shown(detail, 500),
                )

    async def aclose(self) -> None:
        """Close the HTTP and MCP connection pools (on the loop that made them)."""
        await self._http.aclose()
        for known in self._tenants.values():
            for server in known.mcp:
                await server.aclose()


def build_tool_runner(settings: ToolSettings, environ: Mapping[str, str] | None = None) -> ToolBox:
    """The server's ``ToolRunner`` from its settings: reads the tools file (its secrets from ``environ``, default
    the process environment) and raises ``ConfigError`` when it cannot be used."""
    return ToolBox(settings, settings.load_file(environ))
