"""The tools file and the tools settings: what loads, and what stops the server with a message saying why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from agent.config.tool_file import ToolsFile, parse_tools
from agent.config.tools import ToolSettings
from agent.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "tools.example.toml"
EXAMPLE_ENV = {"WEATHER_TOKEN": "Bearer w-123", "CRM_MCP_TOKEN": "Bearer c-456", "ACME_WEATHER_TOKEN": "Bearer a-789"}


SOURCE = {"type": "object", "properties": {"city": {"type": "string"}, "Source": {"type": "string"}}}


def weather(**overrides: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": "get_weather",
        "url": "https://api.weather.example/v1/current",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    return tool | overrides


def document(*http: dict[str, Any], mcp: tuple[dict[str, Any], ...] = (), tenant: str = "default") -> dict[str, Any]:
    return {
        "allowed_hosts": ["api.weather.example", "mcp.crm.example"],
        "tenants": {tenant: {"http": list(http), "mcp": list(mcp)}},
    }


def parse(data: object, environ: dict[str, str] | None = None, base: Path = ROOT) -> ToolsFile:
    return parse_tools(data, environ=environ or {}, base=base)


def problem(data: object, environ: dict[str, str] | None = None, base: Path = ROOT) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(data, environ, base)
    return str(caught.value)


def test_the_example_file_loads() -> None:
    catalog = ToolSettings(file=str(EXAMPLE)).load_file(EXAMPLE_ENV)
    default = catalog.tenant("default")
    assert [t.name for t in default.http] == ["get_weather", "book_table"]
    assert default.http[0].headers["Authorization"].get_secret_value() == "Bearer w-123"
    assert default.http[0].timeout_s == 3
    assert default.http[1].method == "POST"
    assert default.mcp[0].tools == ("lookup_order", "order_status") and default.mcp[0].prefix == "crm_"
    assert catalog.tenant("acme").clock is False
    assert catalog.tenant("nobody").http == ()  # a tenant the file does not name has no tools of its own
    assert catalog.policy.url_refusal("http://10.20.0.15:8080/bookings") is None
    assert "Bearer" not in repr(catalog)  # secrets stay SecretStr


def test_a_json_file_loads_and_an_empty_setting_means_no_file(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(document(weather())), encoding="utf-8")
    assert ToolSettings(file=str(path)).load_file({}).tenant("default").http[0].name == "get_weather"
    assert ToolSettings().load_file({}) == ToolsFile()


def test_a_get_parameters_schema_is_kept_as_json_text() -> None:
    tool = parse(document(weather(method="get"))).tenant("default").http[0]
    assert tool.method == "GET"
    assert json.loads(tool.parameters_json) == {"type": "object", "properties": {"city": {"type": "string"}}}
    assert json.loads(
        parse(document({"name": "t", "url": "https://api.weather.example/"})).tenant("default").http[0].parameters_json
    ) == {"type": "object", "properties": {}}


def test_secrets_come_from_the_environment_and_files(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token").write_text("Bearer from-a-file\n", encoding="utf-8")
    data = document(weather(headers={"Authorization": "file:secrets/token", "X-Key": "env:KEY", "Accept": "text/x"}))
    headers = parse(data, {"KEY": "k-1"}, base=tmp_path).tenant("default").http[0].headers
    assert {k: v.get_secret_value() for k, v in headers.items()} == {
        "Authorization": "Bearer from-a-file",
        "X-Key": "k-1",
        "Accept": "text/x",
    }
    assert all(isinstance(v, SecretStr) for v in headers.values())


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (document(weather(colour="blue")), "tenants.default.http[0].colour: Extra inputs are not permitted"),
        (document(weather(name="get weather")), "tenants.default.http[0].name: 'get weather': a tool name is"),
        (document(weather(name="x" * 65)), "a tool name is 1-64"),
        (document(weather(), weather()), "'get_weather' is used twice"),
        (document(weather(name="get_time")), "'get_time' is used twice (or reserved)"),
        (document(weather(method="DELETE")), "tenants.default.http[0].method"),
        (document(weather(url="https://evil.example/")), "http tool get_weather: 'https://evil.example/': host"),
        (document(weather(url="http://169.254.169.254/")), "not on the allowed hosts"),
        (document(weather(parameters={"type": "string"})), "must be an object schema"),
        (document(weather(timeout_s=0)), "timeout_s must be above 0 and at most 60"),
        (document(weather(timeout_s=61)), "timeout_s must be above 0 and at most 60"),
        (document(weather(headers={"Host": "other.example"})), "the Host header is set by the client"),
        (document(weather(headers={"Bad Name": "x"})), "'Bad Name' is not a header name"),
        (document(weather(headers={"X-Key": 5})), "header X-Key: must be a string"),
        (document(weather(headers={"X-Key": "env:9LIVES"})), "'9LIVES' is not an environment variable name"),
        (document(weather(), tenant="Acme Corp"), "tenants.Acme Corp: not a tenant name"),
        (document(mcp=({"name": "crm", "url": "https://mcp.crm.example/mcp", "prefix": "crm."},)), "a prefix is"),
        (document(mcp=({"name": "crm", "url": "https://other.example/mcp"},)), "MCP server crm: 'https://other"),
        (
            document(
                mcp=(
                    {"name": "crm", "url": "https://mcp.crm.example/a"},
                    {"name": "crm", "url": "https://mcp.crm.example/b"},
                )
            ),
            "the MCP server name 'crm' is used twice",
        ),
        (
            document(weather(parameters={"type": "object", "properties": {"city": {"type": "strin"}}})),
            "parameters: the arguments' JSON schema cannot be used: not a valid JSON Schema (Draft202012) at "
            "properties/city/type",
        ),
        (
            document(weather(parameters={"type": "object", "patternProperties": {"^x": {}}})),
            "patternProperties is not supported",
        ),
        (
            document(weather(parameters={"type": "object", "properties": {"a": {"$ref": "https://x.example/s"}}})),
            "$ref points outside the schema",
        ),
        (
            document(weather(url="https://api.weather.example/v1?source=operator&key=k", parameters=SOURCE)),
            "tenants.default.http[0]: the argument 'Source' is fixed in the URL's query, so the model may not set it",
        ),
        ({"private_networks": ["10.0.0.0/33"]}, "private_networks: not an IP address or network"),
        ({"tenants": []}, "tenants: Input should be a valid dictionary"),
    ],
)
def test_mistakes_are_named(data: dict[str, Any], expected: str) -> None:
    message = problem(data)
    assert message.startswith("tools file: ")
    assert expected in message


def test_the_keys_of_a_urls_query_are_the_operators() -> None:
    url = "https://api.weather.example/v1?source=operator&Units=metric&flag&a.b=1&list[]=2"
    tool = parse(document(weather(url=url))).tenant("default").http[0]
    assert tool.fixed_keys == {"source", "units", "flag", "a_b", "list"}
    assert parse(document(weather())).tenant("default").http[0].fixed_keys == frozenset()


def test_a_missing_secret_names_the_variable_and_no_value() -> None:
    data = document(weather(headers={"Authorization": "env:WEATHER_TOKEN"}))
    message = problem(data, {"OTHER": "Bearer secret-value"})
    assert "the environment variable WEATHER_TOKEN is not set" in message
    assert problem(data, {"WEATHER_TOKEN": "  "}).endswith("is not set (or is empty)")


def test_a_secret_with_a_line_break_is_refused_without_showing_it(tmp_path: Path) -> None:
    message = problem(document(weather(headers={"X-Key": "env:KEY"})), {"KEY": "abc\r\nX-Injected: 1"})
    assert "may not hold a line break" in message and "Injected" not in message
    (tmp_path / "empty").write_text("\n", encoding="utf-8")
    assert "is empty" in problem(document(weather(headers={"X-Key": "file:empty"})), base=tmp_path)
    assert "cannot read the secret file" in problem(document(weather(headers={"X-Key": "file:absent"})), base=tmp_path)


def test_unreadable_and_malformed_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be read"):
        ToolSettings(file=str(tmp_path / "absent.toml")).load_file({})
    broken = tmp_path / "broken.toml"
    broken.write_text("[tenants.default\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        ToolSettings(file=str(broken)).load_file({})
    broken_json = tmp_path / "broken.json"
    broken_json.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        ToolSettings(file=str(broken_json)).load_file({})


def test_the_settings_defaults_and_bounds() -> None:
    settings = ToolSettings()
    assert (settings.file, settings.clock, settings.max_rounds, settings.filler_after_ms) == ("", True, 5, 700)
    assert (settings.max_output_chars, settings.default_timeout_s, settings.client_timeout_s) == (4000, 5.0, 10.0)
    for field, value in [
        ("max_rounds", 0),
        ("max_output_chars", 10),
        ("default_timeout_s", 0),
        ("filler_after_ms", -1),
    ]:
        with pytest.raises(ValidationError):
            ToolSettings.model_validate({field: value})
