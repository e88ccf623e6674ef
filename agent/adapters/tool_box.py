"""The server's ``ToolRunner``: per tenant, the built-in clock, the tools file's HTTP tools and its MCP servers'
tools, behind one port; the checks every call passes before any tool is asked; and the audit line it leaves.

Reason to change: how the tool sources are put together (what a tenant is offered, how a call finds its tool,
what is checked before it runs, the output bound, the audit line). How each source calls its tool is its
adapter's (``clock_tools``, ``http_tools``, ``mcp_tools``); how MCP listings are kept, ``tool_listings``'.

``tools(tenant)`` never waits on a tool server: the clock (unless turned off), the tenant's HTTP tools, then the
tools of its MCP servers' last good listings (none before the first), in the tools file's order; a listing that is
due is refreshed in the background (``agent.adapters.tool_listings``: one refresh per tenant at a time,
``mcp_list_ttl_s``, ``FAILED_RETRY_S`` after a failure). A call's tools are those of its start; a later call sees
the new listing. A name offered twice keeps its first source, and the call goes to that source.

``run`` checks a call, in order, before any tool is asked, and refuses it (``ToolRefused``, a ``ToolFailed`` the
model is told) when it fails one: the name has a route now (else "no such tool"; a name no current listing has
waits for a refresh only while a listing is due, never longer than the MCP servers' own timeouts); the arguments
are a JSON object of at most ``MAX_ARGUMENTS_CHARS`` (``arguments``); no argument sets a key of an HTTP tool's
URL query (``fixed``: the operator's, never merged nor repeated); the arguments keep to the tool's schema
(``schema``: ``agent.config.tool_schema``, checked in a thread, so no schema holds the event loop). Then it runs
the tool within its timeout and cuts its output to ``max_output_chars`` (marked). Every source bounds its answer
in bytes while reading: HTTP ``4 * max_output_chars + 1``, MCP ``8 * max_output_chars + 65,536``
(``mcp_tools``). Tool output is untrusted data for the model: bounded here, and never made into instructions.

Audit: one INFO line per call on ``agent.tools.audit``: tenant, tool, source, call id, duration in ms, outcome
(``ok``, ``failed``, ``timeout``, ``cancelled``, ``refused``), the output's size and, for a refusal, the check it
failed (``reason=``); never the arguments' values, nor a failure's detail (an error may echo them), which a DEBUG
line holds.
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
from agent.adapters.tool_listings import FAILED_RETRY_S, McpListings
from agent.config.tool_file import HttpTool, ToolsFile, parameter_key
from agent.config.tool_schema import ArgumentsCheck
from agent.config.tools import ToolSettings
from agent.errors import ProviderTimeout, ToolFailed
from agent.ports import ToolCall, ToolSpec
from agent.security.logsafe import shown

if TYPE_CHECKING:
    from agent.adapters.mcp_tools import McpTools

__all__ = ["CUT_MARK", "FAILED_RETRY_S", "ToolBox", "ToolRefused", "build_tool_runner"]

log = logging.getLogger(__name__)
audit = logging.getLogger("agent.tools.audit")

CUT_MARK = " [output cut]"
MAX_ARGUMENTS_CHARS = 64_000
MCP_FRAMING_BYTES = 65_536
"""What an MCP answer may hold besides its output (JSON-RPC and SSE framing, the handshake's answers)."""


class ToolRefused(ToolFailed):
    """A call refused before any tool was asked; ``reason``: the check it failed (``arguments``, ``fixed``,
    ``schema``)."""

    def __init__(self, tool: str, detail: str, reason: str) -> None:
        super().__init__(tool, detail)
        self.reason = reason


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
        raise ToolRefused(call.name, "the arguments are too long", "arguments")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise ToolRefused(call.name, "the arguments are not valid JSON", "arguments") from None
    if not isinstance(value, dict):
        raise ToolRefused(call.name, "the arguments must be a JSON object", "arguments")
    return value


@dataclass(frozen=True, slots=True)
class _Fixed:
    """A tool every call of a tenant finds the same way: the clock or an HTTP tool."""

    spec: ToolSpec
    check: ArgumentsCheck
    http: HttpTool | None = None


@dataclass(frozen=True, slots=True)
class _Tenant:
    fixed: dict[str, _Fixed]
    mcp: McpListings | None


class ToolBox:
    """``ToolRunner`` over the clock, HTTP tools and MCP servers of ``catalog`` (the loaded tools file).

    ``now``: the clock the ``get_time`` tool reads; ``monotonic``: the one the MCP listings expire by and the
    audit lines time with. ``refresh(tenant)`` waits for the tenant's MCP listings (a warm-up, and for tests);
    ``aclose`` stops the refreshes and closes the connection pools."""

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
        self._clock_check = ArgumentsCheck.of_json(self._clock.spec.parameters)
        self._http = HttpTools(catalog.policy, settings.max_output_chars, settings.default_timeout_s)
        self._tenants: dict[str, _Tenant] = {}
        if any(tools.mcp for tools in catalog.tenants.values()):
            # The mcp package takes half a second to import: here, at start-up (not in the event loop at a
            # tenant's first call), and only where the tools file names an MCP server.
            import agent.adapters.mcp_tools  # noqa: F401

    def _tenant(self, tenant: str) -> _Tenant:
        known = self._tenants.get(tenant)
        if known is None:
            tools = self._catalog.tenant(tenant)
            fixed: dict[str, _Fixed] = {}
            if self._settings.clock if tools.clock is None else tools.clock:
                fixed[self._clock.spec.name] = _Fixed(self._clock.spec, self._clock_check)
            for t in tools.http:
                spec = ToolSpec(t.name, t.description, t.parameters_json, "server", self._http.timeout_s(t))
                fixed.setdefault(t.name, _Fixed(spec, ArgumentsCheck(t.parameters), t))
            listings = None
            if tools.mcp:
                from agent.adapters.mcp_tools import McpTools  # imported already, by __init__

                policy, timeout_s = self._catalog.policy, self._settings.default_timeout_s
                answer_bytes = 8 * self._settings.max_output_chars + MCP_FRAMING_BYTES
                servers = tuple(McpTools(server, policy, timeout_s, answer_bytes) for server in tools.mcp)
                ttl_s = self._settings.mcp_list_ttl_s
                listings = McpListings(tenant, servers, frozenset(fixed), ttl_s, self._monotonic)
            known = self._tenants[tenant] = _Tenant(fixed, listings)
        return known

    async def tools(self, tenant: str) -> tuple[ToolSpec, ...]:
        """The tenant's tools now, without waiting on any tool server (see the module's docstring)."""
        known = self._tenant(tenant)
        listed = known.mcp.offered() if known.mcp is not None else ()
        return (*(fixed.spec for fixed in known.fixed.values()), *listed)

    async def warm(self) -> None:
        """Start the listings of every tenant's MCP servers in the background (``ToolRunner.warm``)."""
        for tenant in self._catalog.tenants:
            await self.tools(tenant)

    async def refresh(self, tenant: str) -> tuple[ToolSpec, ...]:
        """Wait for the tenant's MCP listings that are due (or being taken), each within its server's timeout;
        then its tools, as ``tools``."""
        known = self._tenant(tenant)
        if known.mcp is not None:
            await known.mcp.refreshed()
        return await self.tools(tenant)

    async def _find(self, known: _Tenant, name: str) -> tuple[_Fixed | None, McpTools | None, ArgumentsCheck]:
        fixed = known.fixed.get(name)
        if fixed is not None:
            return fixed, None, fixed.check
        if known.mcp is not None:
            route = known.mcp.route(name)
            if route is None and known.mcp.due():  # never listed, or out of date: the name may be new
                await known.mcp.refreshed()
                route = known.mcp.route(name)
            if route is not None:
                return None, route.server, route.tool.check
        raise ToolFailed(name, "no such tool")

    async def run(self, tenant: str, call: ToolCall) -> str:
        start = self._monotonic()
        source, outcome, reason, output, detail = "unknown", "failed", "", "", ""
        try:
            known = self._tenant(tenant)
            fixed, server, check = await self._find(known, call.name)
            http = fixed.http if fixed is not None else None
            source = "http" if http is not None else ("clock" if server is None else f"mcp:{server.server.name}")
            arguments = parse_arguments(call)
            if http is not None and (taken := [k for k in arguments if parameter_key(k) in http.fixed_keys]):
                raise ToolRefused(call.name, f"the argument {shown(taken[0], 40)} is fixed by the operator", "fixed")
            problem = await asyncio.to_thread(check.problem, arguments)
            if problem is not None:
                raise ToolRefused(call.name, f"the arguments do not match the tool's schema: {problem}", "schema")
            if server is not None:
                output = await server.call(call.name, arguments)
            elif http is not None:
                output = await self._http.run(http, arguments)
            else:
                output = self._clock.run(arguments)
            output = bounded(output, self._settings.max_output_chars)
            outcome = "ok"
            return output
        except ProviderTimeout as exc:
            outcome, detail = "timeout", exc.detail
            raise
        except ToolRefused as exc:
            outcome, reason, detail = "refused", exc.reason, exc.detail
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
                "tool call tenant=%s tool=%s source=%s call_id=%s duration_ms=%.0f outcome=%s output_chars=%d%s",
                shown(tenant),
                shown(call.name),
                source,
                shown(call.call_id),
                duration_ms,
                outcome,
                len(output),
                f" reason={reason}" if reason else "",
            )
            if audit.isEnabledFor(logging.DEBUG):
                audit.debug(
                    "tool call %s arguments=%s detail=%s",
                    shown(call.call_id),
                    shown(call.arguments, 2000),
                    shown(detail, 500),
                )

    async def aclose(self) -> None:
        """Stop the MCP listings in flight and close the HTTP and MCP connection pools (on the loop that made
        them)."""
        await self._http.aclose()
        for known in self._tenants.values():
            if known.mcp is not None:
                await known.mcp.aclose()
                for server in known.mcp.servers:
                    await server.aclose()


def build_tool_runner(settings: ToolSettings, environ: Mapping[str, str] | None = None) -> ToolBox:
    """The server's ``ToolRunner`` from its settings: reads the tools file (its secrets from ``environ``, default
    the process environment) and raises ``ConfigError`` when it cannot be used."""
    return ToolBox(settings, settings.load_file(environ))
