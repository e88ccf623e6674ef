"""The tools file (``AGENT_TOOLS__FILE``): each tenant's server-side tools, the hosts they may reach, and the
secrets their requests carry. ``config/tools.example.toml`` documents the format.

Reason to change: the tools file gains or loses a key, or a check of it.

TOML (``tomllib``), or JSON when the name ends in ``.json``. Unknown keys are refused (a misspelt key is an error,
not a tool silently left out). A header value ``env:NAME`` is read from the environment and ``file:PATH`` from
a file (a mounted secret; relative to the tools file) when the file is loaded, here and nowhere else; any other
value is sent as written. Secrets are kept as ``SecretStr``, and no message here shows one. Every URL must pass
the host rules (``agent.config.tool_hosts``) at load time; the adapters check again at each connection.

An HTTP tool's ``parameters`` must be a schema ``agent.config.tool_schema`` can check (a valid JSON Schema whose
check is bounded). The keys of its URL's query are fixed by the operator (``fixed_keys``): the schema may not
declare one (refused at load), and a call that sets one is refused (never merged, never repeated). Keys are
compared as servers commonly read them (``parameter_key``): without case, ``a.b`` and ``a b`` as ``a_b``, ``a[]``
as ``a``.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agent.config.tenants import is_valid_tenant
from agent.config.tool_hosts import HostPolicy
from agent.config.tool_schema import schema_problem
from agent.errors import ConfigError

CLOCK_TOOL = "get_time"
"""The built-in tool's name (``agent.adapters.clock_tools``): reserved while the clock is on."""
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The function names every model API accepts (OpenAI's rule; Bedrock's is the same)."""
MAX_DESCRIPTION_CHARS = 1024
MAX_SCHEMA_CHARS = 16_000
MAX_TIMEOUT_S = 60.0
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_RESERVED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "upgrade"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def parameter_key(name: str) -> str:
    """``name`` as a server reading a query or a form is likely to: lower case, ``.`` and spaces as ``_`` (PHP),
    ``[...]`` dropped (``a[]`` is ``a``)."""
    return name.split("[", 1)[0].strip().lower().replace(".", "_").replace(" ", "_")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _secret(value: object, where: str, info: ValidationInfo) -> SecretStr:
    """A header value: ``env:NAME`` from the environment, ``file:PATH`` from a file, else as written."""
    if not isinstance(value, str):
        raise ValueError(f"{where}: must be a string")
    context = info.context or {}
    if value.startswith("env:"):
        name = value[4:]
        if _ENV_NAME.fullmatch(name) is None:
            raise ValueError(f"{where}: {name!r} is not an environment variable name")
        environ: Mapping[str, str] = context.get("environ", {})
        text = environ.get(name, "")
        if not text.strip():
            raise ValueError(f"{where}: the environment variable {name} is not set (or is empty)")
    elif value.startswith("file:"):
        base: Path = context.get("base", Path("."))
        path = base / Path(value[5:]).expanduser()
        try:
            text = path.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise ValueError(f"{where}: cannot read the secret file {str(path)!r} ({exc.strerror})") from None
        if not text.strip():
            raise ValueError(f"{where}: the secret file {str(path)!r} is empty")
    else:
        text = value
    if any(c in text for c in "\r\n\0"):
        raise ValueError(f"{where}: a header value may not hold a line break")
    return SecretStr(text)


def _headers(value: object, info: ValidationInfo) -> dict[str, SecretStr]:
    if not isinstance(value, Mapping):
        raise ValueError("headers must be a table of header names to values")
    headers: dict[str, SecretStr] = {}
    for name, raw in value.items():
        if not isinstance(name, str) or _HEADER_NAME.fullmatch(name) is None:
            raise ValueError(f"{name!r} is not a header name")
        if name.lower() in _RESERVED_HEADERS:
            raise ValueError(f"the {name} header is set by the client, not the tools file")
        headers[name] = _secret(raw, f"header {name}", info)
    return headers


def _timeout(value: float | None) -> float | None:
    if value is not None and not 0 < value <= MAX_TIMEOUT_S:
        raise ValueError(f"timeout_s must be above 0 and at most {MAX_TIMEOUT_S:g}")
    return value


class HttpTool(_Strict):
    """An HTTP endpoint the model may call: GET puts the arguments in the query string, POST sends them as a
    JSON object. The answer's body (bounded) is the tool's output."""

    name: str
    description: str = Field("", max_length=MAX_DESCRIPTION_CHARS)
    method: Literal["GET", "POST"] = "GET"
    url: str
    parameters: dict[str, Any] = Field(default_factory=lambda: dict(EMPTY_SCHEMA))
    timeout_s: float | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if TOOL_NAME.fullmatch(value) is None:
            raise ValueError(f"{value!r}: a tool name is 1-64 letters, digits, '_' or '-'")
        return value

    @field_validator("method", mode="before")
    @classmethod
    def _method(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("parameters")
    @classmethod
    def _schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object":
            raise ValueError('the arguments\' JSON schema must be an object schema ({"type": "object", ...})')
        if len(json.dumps(value)) > MAX_SCHEMA_CHARS:
            raise ValueError(f"the arguments' JSON schema is longer than {MAX_SCHEMA_CHARS} characters")
        problem = schema_problem(value)
        if problem is not None:
            raise ValueError(f"the arguments' JSON schema cannot be used: {problem}")
        return value

    @model_validator(mode="after")
    def _unfixed(self) -> HttpTool:
        declared = self.parameters.get("properties", {})
        fixed = self.fixed_keys
        for name in declared if isinstance(declared, dict) else ():
            if parameter_key(name) in fixed:
                raise ValueError(
                    f"the argument {name!r} is fixed in the URL's query, so the model may not set it: rename it, "
                    "or take it out of the URL"
                )
        return self

    @property
    def fixed_keys(self) -> frozenset[str]:
        """The keys of the URL's query (as ``parameter_key`` writes them): the operator's, never the model's."""
        return frozenset(parameter_key(key) for key, _ in parse_qsl(urlsplit(self.url).query, keep_blank_values=True))

    _timeout = field_validator("timeout_s")(_timeout)
    _headers = field_validator("headers", mode="before")(_headers)

    @property
    def parameters_json(self) -> str:
        """The schema as the JSON text a ``ToolSpec`` holds."""
        return json.dumps(self.parameters, separators=(",", ":"))


class McpServer(_Strict):
    """An MCP server (streamable HTTP) whose tools the model may call: all of them, or those on ``tools``, each
    offered as ``prefix`` + its name."""

    name: str = Field(description="A label for logs and messages.")
    url: str
    tools: tuple[str, ...] | None = None
    prefix: str = ""
    timeout_s: float | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _label(cls, value: str) -> str:
        if TOOL_NAME.fullmatch(value) is None:
            raise ValueError(f"{value!r}: an MCP server's name is 1-64 letters, digits, '_' or '-'")
        return value

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if value and TOOL_NAME.fullmatch(value) is None:
            raise ValueError(f"{value!r}: a prefix is letters, digits, '_' or '-'")
        return value

    _timeout = field_validator("timeout_s")(_timeout)
    _headers = field_validator("headers", mode="before")(_headers)


class TenantTools(_Strict):
    """One tenant's tools. ``clock``: the built-in ``get_time`` (unset: ``tools.clock``)."""

    clock: bool | None = None
    http: tuple[HttpTool, ...] = ()
    mcp: tuple[McpServer, ...] = ()


class ToolsFile(_Strict):
    """The whole file: the hosts every tool may reach, and each tenant's tools."""

    allowed_hosts: tuple[str, ...] = ()
    private_networks: tuple[str, ...] = ()
    tenants: dict[str, TenantTools] = Field(default_factory=dict)
    _policy: HostPolicy = PrivateAttr(default_factory=HostPolicy)

    @model_validator(mode="after")
    def _consistent(self) -> ToolsFile:
        try:
            self._policy = HostPolicy.of(self.allowed_hosts, self.private_networks)
        except ValueError as exc:
            raise ValueError(f"private_networks: {exc}") from None
        for tenant, tools in self.tenants.items():
            if not is_valid_tenant(tenant):
                raise ValueError(f"tenants.{tenant}: not a tenant name (1-64 of a-z 0-9 _ -, lower case)")
            names: set[str] = {CLOCK_TOOL}
            for tool in tools.http:
                if tool.name in names:
                    raise ValueError(f"tenants.{tenant}: the tool name {tool.name!r} is used twice (or reserved)")
                names.add(tool.name)
            labels: set[str] = set()
            for server in tools.mcp:
                if server.name in labels:
                    raise ValueError(f"tenants.{tenant}: the MCP server name {server.name!r} is used twice")
                labels.add(server.name)
            for where, url in [(f"http tool {t.name}", t.url) for t in tools.http] + [
                (f"MCP server {s.name}", s.url) for s in tools.mcp
            ]:
                refusal = self._policy.url_refusal(url)
                if refusal is not None:
                    raise ValueError(f"tenants.{tenant}, {where}: {url!r}: {refusal}")
        return self

    @property
    def policy(self) -> HostPolicy:
        """The host rules every tool's requests keep to."""
        return self._policy

    def tenant(self, tenant: str) -> TenantTools:
        """``tenant``'s tools (none for a tenant the file does not name)."""
        return self.tenants.get(tenant) or TenantTools()


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def parse_tools(data: object, *, environ: Mapping[str, str], base: Path, source: str = "tools file") -> ToolsFile:
    """Validate the parsed contents of a tools file; raises ``ConfigError`` saying where and what is wrong."""
    try:
        return ToolsFile.model_validate(data, context={"environ": environ, "base": base})
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            where = _where(tuple(error["loc"]))
            message = str(error["msg"]).removeprefix("Value error, ")
            problems.append(f"{where}: {message}" if where else message)
        raise ConfigError(f"{source}: " + "; ".join(problems)) from None


def load_tools_file(path: Path, environ: Mapping[str, str]) -> ToolsFile:
    """Read and check the tools file at ``path`` (TOML, or JSON for ``*.json``); raises ``ConfigError``."""
    source = f"tools file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    try:
        data: object = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"{source}: not valid {'JSON' if path.suffix.lower() == '.json' else 'TOML'}: {exc}"
        ) from None
    return parse_tools(data, environ=environ, base=path.parent, source=source)
