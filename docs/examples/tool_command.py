"""An example ``--tool-command`` for ``python -m clients.cli ws``: answers the tools of ``tools.json``.

The client runs it once per ``tool.call`` with the call as JSON on stdin, ``{"name", "call_id", "arguments"}``,
and sends what it prints as the result (exit status 0), or what it writes to stderr as the error (any other
status). Run it by hand to try it:

    echo '{"name": "get_weather", "call_id": "c1", "arguments": {"city": "Paris"}}' \
        | python docs/examples/tool_command.py

Reason to change: what the example tools do.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def get_weather(arguments: dict[str, Any]) -> dict[str, Any]:
    city = arguments.get("city")
    if not isinstance(city, str) or not city.strip():
        raise ValueError("get_weather needs a city")
    # An example: a real tool would ask a weather service here.
    return {"city": city.strip(), "sky": "sunny", "temperature_c": 21, "source": "the example tool's made-up data"}


def lookup_order(arguments: dict[str, Any]) -> dict[str, Any]:
    order_id = arguments.get("order_id")
    if not isinstance(order_id, str) or not order_id.strip():
        raise ValueError("lookup_order needs an order_id")
    # An example: a real tool would ask the shop's order system here.
    return {"order_id": order_id.strip(), "status": "shipped", "expected_delivery": "in two days"}


TOOLS = {"get_weather": get_weather, "lookup_order": lookup_order}


def main() -> int:
    call = json.load(sys.stdin)
    tool = TOOLS.get(call.get("name"))
    if tool is None:
        print(f"no tool named {call.get('name')!r}", file=sys.stderr)
        return 1
    arguments = call.get("arguments")
    try:
        answer = tool(arguments if isinstance(arguments, dict) else {})
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
