"""Function calling's settings (``AGENT_TOOLS__*``): the tools file, the built-in clock, and the limits of a turn
that calls tools (output size, time, rounds, when the caller hears "one moment").

Reason to change: function calling gains or loses an option. The tools file's own format is
``agent.config.tool_file``'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from agent.config.policy_fields import core
from agent.config.tool_file import ToolsFile, load_tools_file
from agent.core.policies import ToolPolicy


class ToolSettings(BaseModel):
    """Server-side tools (HTTP endpoints and MCP servers per tenant, the built-in clock) and the limits that
    every tool call keeps to, wherever the tool runs."""

    file: str = Field(
        "",
        description="The tools file (TOML, or JSON for *.json; config/tools.example.toml): each tenant's HTTP "
        "tools and MCP servers and the hosts they may reach; ~ expands. Empty = no file (the clock only).",
    )
    clock: bool = Field(
        True, description="Offer every tenant the built-in get_time tool (the tools file may turn it off for a tenant)."
    )
    max_output_chars: int = Field(
        4000,
        ge=100,
        le=100_000,
        description="A server tool's output is cut to this many characters; an HTTP tool's body is read to 4 times "
        "as many bytes (+1), an MCP call's answers to 8 times as many (+65,536), and no further.",
    )
    default_timeout_s: float = Field(
        5.0, gt=0, le=60, description="A server tool's time limit where the tools file sets none."
    )
    max_rounds: int = core(
        ToolPolicy,
        "max_rounds",
        ge=1,
        le=20,
        description="Model calls in one turn that may call tools; the last is offered none.",
    )
    filler_after_ms: int = core(
        ToolPolicy,
        "filler_after_ms",
        ge=0,
        le=10_000,
        description="A tool still running after this long: the caller hears 'one moment'.",
    )
    client_timeout_s: float = Field(
        10.0, gt=0, le=120, description="How long a turn waits for a tool the client runs (tool.result)."
    )
    mcp_list_ttl_s: float = Field(
        60.0,
        ge=0,
        le=3600,
        description="How long an MCP server's list of tools is kept before it is asked again (in the background: "
        "no call waits for a listing).",
    )

    def load_file(self, environ: Mapping[str, str] | None = None) -> ToolsFile:
        """The tools file, checked, with its secrets read from ``environ`` (default: the process environment);
        an empty ``ToolsFile`` when ``file`` is empty. Raises ``ConfigError``."""
        if not self.file.strip():
            return ToolsFile()
        return load_tools_file(Path(self.file.strip()).expanduser(), os.environ if environ is None else environ)
