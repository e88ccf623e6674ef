"""The built-in get_time tool on a fixed clock: its spec, its output's shape, time zones and mistakes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agent.adapters.clock_tools import NAME, ClockTool
from agent.errors import ToolFailed

NOW = datetime(2026, 12, 5, 14, 5, 7, tzinfo=UTC)  # a Saturday


def clock() -> ClockTool:
    return ClockTool(lambda: NOW)


def test_the_spec() -> None:
    spec = clock().spec
    assert spec.name == NAME == "get_time"
    assert spec.runs_on == "server"
    schema = json.loads(spec.parameters)
    assert schema["type"] == "object" and set(schema["properties"]) == {"timezone"}
    assert "required" not in schema


def test_the_servers_own_zone_by_default() -> None:
    here = NOW.astimezone()  # whatever this machine's zone is (UTC on most servers)
    answer = json.loads(clock().run({}))
    assert answer == {
        "time": here.strftime("%H:%M"),
        "date": here.strftime("%Y-%m-%d"),
        "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[here.weekday()],
        "timezone": here.tzname(),
        "iso": here.isoformat(timespec="seconds"),
    }
    assert json.loads(clock().run({"timezone": ""})) == answer
    assert json.loads(clock().run({"timezone": None})) == answer
    assert json.loads(clock().run({"timezone": "UTC"}))["time"] == "14:05"


@pytest.mark.parametrize(
    ("zone", "time", "date", "weekday", "offset"),
    [
        ("Europe/Paris", "15:05", "2026-12-05", "Saturday", "+01:00"),
        ("America/New_York", "09:05", "2026-12-05", "Saturday", "-05:00"),
        ("Pacific/Kiritimati", "04:05", "2026-12-06", "Sunday", "+14:00"),
        ("utc", "14:05", "2026-12-05", "Saturday", "+00:00"),
    ],
)
def test_time_zones(zone: str, time: str, date: str, weekday: str, offset: str) -> None:
    answer = json.loads(clock().run({"timezone": zone}))
    assert (answer["time"], answer["date"], answer["weekday"]) == (time, date, weekday)
    assert answer["timezone"] == zone and answer["iso"].endswith(offset)


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "/etc/passwd", "../../etc/passwd", "x" * 300, 5])
def test_unknown_time_zones_fail_with_a_hint(zone: object) -> None:
    with pytest.raises(ToolFailed) as caught:
        clock().run({"timezone": zone})
    assert caught.value.provider == "get_time"
    assert "Europe/Paris" in caught.value.detail
    assert len(caught.value.detail) < 200
