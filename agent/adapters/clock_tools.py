"""The built-in ``get_time`` tool: the current time, date and weekday, in the server's time zone or an IANA one.

Reason to change: what the clock tool answers. It needs no network and no account, so the offline demo (the local
responder) and every tenant can call a tool; the clock is injected, so tests are deterministic.

Its output is JSON text: ``{"time": "14:05", "date": "2026-12-05", "weekday": "Saturday", "timezone": "UTC",
"iso": "2026-12-05T14:05:07+00:00"}`` (``time`` is 24-hour ``HH:MM``, ``iso`` has seconds and the offset).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent.errors import ToolFailed
from agent.ports import ToolSpec

NAME = "get_time"
_MAX_ZONE = 64
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PARAMETERS = json.dumps(
    {
        "type": "object",
        "properties": {
            "timezone": {
                "type": "string",
                "description": "An IANA time zone such as Europe/Paris or America/New_York; omit it for the "
                "server's own (where the caller most likely is).",
            }
        },
    },
    separators=(",", ":"),
)


def utc_now() -> datetime:
    """The real clock (aware, UTC)."""
    return datetime.now(UTC)


class ClockTool:
    """``get_time``: ``run`` answers for ``now()`` (an aware datetime; default the system clock, in UTC)."""

    def __init__(self, now: Callable[[], datetime] = utc_now) -> None:
        self._now = now
        self.spec = ToolSpec(
            name=NAME,
            description="The current time, date and weekday, here or in a given IANA time zone.",
            parameters=PARAMETERS,
            runs_on="server",
            timeout_s=1.0,
        )

    def run(self, arguments: Mapping[str, object]) -> str:
        """The time as JSON text; raises ``ToolFailed`` for a time zone that is not a known IANA name."""
        zone_name = arguments.get("timezone")
        if zone_name is None or zone_name == "":
            now = self._now().astimezone()  # the server's own zone (a laptop's local time; UTC on most servers)
            label = now.tzname() or "local"
        elif isinstance(zone_name, str):
            now = self._now().astimezone(_zone(zone_name))
            label = zone_name
        else:
            raise ToolFailed(NAME, "timezone must be a string such as Europe/Paris")
        return json.dumps(
            {
                "time": now.strftime("%H:%M"),
                "date": now.strftime("%Y-%m-%d"),
                "weekday": _WEEKDAYS[now.weekday()],  # not %A: that one follows the process locale
                "timezone": label,
                "iso": now.isoformat(timespec="seconds"),
            }
        )


def _zone(name: str) -> tzinfo:
    if name.upper() == "UTC":
        return UTC
    try:
        if len(name) > _MAX_ZONE:
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        # ValueError: a key that is no zone name at all (an absolute path, '..', too long).
        shown = name[:_MAX_ZONE]
        raise ToolFailed(NAME, f"unknown time zone {shown!r}; use an IANA name such as Europe/Paris") from None
