"""The ToolBox with no network: what a tenant is offered, the built-in clock through the port, a call's mistakes
(refused before any tool runs, the check named in the audit line), the output bound and the audit line."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.adapters.tool_box import CUT_MARK, ToolBox, ToolRefused, bounded, build_tool_runner, parse_arguments
from agent.config.tool_file import parse_tools
from agent.config.tools import ToolSettings
from agent.errors import ToolFailed
from agent.ports import ToolCall, ToolRunner

NOW = datetime(2026, 12, 5, 14, 5, 7, tzinfo=UTC)
CATALOG = parse_tools({"tenants": {"quiet": {"clock": False}}}, environ={}, base=Path("."))


class Ticks:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def box(settings: ToolSettings | None = None) -> ToolBox:
    return ToolBox(settings or ToolSettings(), CATALOG, now=lambda: NOW, monotonic=Ticks())


async def test_every_tenant_gets_the_clock_unless_it_is_turned_off() -> None:
    assert [spec.name for spec in await box().tools("default")] == ["get_time"]
    assert [spec.name for spec in await box().tools("any-tenant")] == ["get_time"]
    assert await box().tools("quiet") == ()
    assert await box(ToolSettings(clock=False)).tools("default") == ()


async def test_the_clock_through_the_port() -> None:
    runner: ToolRunner = box()
    output = await runner.run("default", ToolCall("call-1", "get_time", '{"timezone": "Europe/Paris"}'))
    assert json.loads(output)["time"] == "15:05"
    assert json.loads(await runner.run("default", ToolCall("call-2", "get_time", "")))["timezone"] == "UTC"
    with pytest.raises(ToolFailed, match="no such tool"):
        await runner.run("quiet", ToolCall("call-3", "get_time", "{}"))


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [("{", "not valid JSON"), ("[1, 2]", "must be a JSON object"), ('"Paris"', "must be a JSON object")],
)
async def test_arguments_that_are_no_object_fail(arguments: str, detail: str) -> None:
    with pytest.raises(ToolFailed, match=detail):
        await box().run("default", ToolCall("call-1", "get_time", arguments))


async def test_an_unknown_tool_fails_and_is_audited(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    with pytest.raises(ToolFailed) as caught:
        await box().run("default", ToolCall("call-9", "launch_rocket", '{"target": "Moon"}'))
    assert caught.value.provider == "launch_rocket" and caught.value.detail == "no such tool"
    [line] = [r.getMessage() for r in caplog.records if r.name == "agent.tools.audit"]
    assert line == (
        "tool call tenant=default tool=launch_rocket source=unknown call_id=call-9 duration_ms=0 outcome=failed "
        "output_chars=0"
    )


async def test_the_audit_line_holds_no_argument_values_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    await box().run("acme", ToolCall("call-1", "get_time", '{"timezone": "Asia/Tokyo"}'))
    [record] = [r for r in caplog.records if r.name == "agent.tools.audit"]
    assert record.levelno == logging.INFO
    assert "Asia/Tokyo" not in record.getMessage()
    assert "tenant=acme tool=get_time source=clock call_id=call-1" in record.getMessage()
    assert "outcome=ok output_chars=" in record.getMessage()
    caplog.clear()
    caplog.set_level(logging.DEBUG, logger="agent.tools.audit")
    await box().run("acme", ToolCall("call-2", "get_time", '{"timezone": "Asia/Tokyo"}'))
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(debug) == 1 and "Asia/Tokyo" in debug[0]


async def test_a_tools_file_setting_builds_a_runner(tmp_path: Path) -> None:
    path = tmp_path / "tools.toml"
    path.write_text("[tenants.quiet]\nclock = false\n", encoding="utf-8")
    runner = build_tool_runner(ToolSettings(file=str(path)), environ={})
    assert await runner.tools("quiet") == ()
    assert [spec.name for spec in await runner.tools("default")] == ["get_time"]
    await runner.aclose()


def test_output_is_cut_with_a_mark() -> None:
    assert bounded("short", 100) == "short"
    cut = bounded("x" * 500, 100)
    assert len(cut) == 100 and cut.endswith(CUT_MARK)


def test_arguments_parse() -> None:
    assert parse_arguments(ToolCall("c", "t", ' {"a": 1} ')) == {"a": 1}
    assert parse_arguments(ToolCall("c", "t", "")) == {}
    with pytest.raises(ToolFailed, match="too long"):
        parse_arguments(ToolCall("c", "t", '{"a": "' + "x" * 70_000 + '"}'))


@pytest.mark.parametrize(
    ("arguments", "reason", "detail"),
    [
        ("{", "arguments", "the arguments are not valid JSON"),
        ('{"timezone": ["Europe/Paris"]}', "schema", "the arguments do not match the tool's schema: $.timezone: must"),
        ('{"zone": "Europe/Paris"}', "schema", "$: keys the schema does not declare are not allowed: zone"),
    ],
)
async def test_a_refused_call_says_why_and_its_audit_line_names_the_check(
    caplog: pytest.LogCaptureFixture, arguments: str, reason: str, detail: str
) -> None:
    caplog.set_level(logging.INFO, logger="agent.tools.audit")
    with pytest.raises(ToolRefused) as caught:
        await box().run("default", ToolCall("call-4", "get_time", arguments))
    assert detail in caught.value.detail and caught.value.reason == reason
    [line] = [r.getMessage() for r in caplog.records if r.name == "agent.tools.audit"]
    assert line == (
        "tool call tenant=default tool=get_time source=clock call_id=call-4 duration_ms=0 outcome=refused "
        f"output_chars=0 reason={reason}"
    )
    assert "Europe" not in line
