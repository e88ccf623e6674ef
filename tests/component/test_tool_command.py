"""The CLI client's tool answers: ``clients.tool_command`` running real commands (the example tool script among
them) as subprocesses, and a session's calls answered aside."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

from clients.conversation import Message
from clients.tool_command import MAX_RESULT_BYTES, ToolAnswers, ToolCommand

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tool_command.py"


def python(code: str, timeout_s: float = 20.0) -> ToolCommand:
    return ToolCommand(shlex.join([sys.executable, "-c", code]), timeout_s)


def call(name: str, arguments: object = None, call_id: str = "call_1") -> Message:
    return {"type": "tool.call", "turn": 1, "call_id": call_id, "name": name, "arguments": arguments or {}}


async def test_the_example_script_answers_its_tools() -> None:
    example = ToolCommand(shlex.join([sys.executable, str(EXAMPLE)]), 20.0)
    weather = await example(call("get_weather", {"city": "Paris"}))
    assert weather["type"] == "tool.result" and weather["call_id"] == "call_1" and "error" not in weather
    assert json.loads(weather["output"])["city"] == "Paris"
    order = json.loads((await example(call("lookup_order", {"order_id": " A1234 "}, call_id="c2")))["output"])
    assert (order["order_id"], order["status"]) == ("A1234", "shipped")
    assert await example(call("get_weather", {})) == {
        "type": "tool.result",
        "call_id": "call_1",
        "error": "get_weather needs a city",
    }
    assert (await example(call("book_table")))["error"] == "no tool named 'book_table'"


async def test_the_call_is_on_stdin_and_stdout_is_the_output() -> None:
    echo = python("import sys; sys.stdout.write('\\n ' + sys.stdin.read() + ' \\n')")
    answer = await echo(call("get_weather", {"city": "Paris"}, call_id="c9"))
    assert set(answer) == {"type", "call_id", "output"}
    assert json.loads(answer["output"]) == {"name": "get_weather", "call_id": "c9", "arguments": {"city": "Paris"}}
    text = await echo({"type": "tool.call", "call_id": "c3", "name": "f", "arguments": '{"broken'})
    assert json.loads(text["output"])["arguments"] == '{"broken'


async def test_a_command_that_reads_nothing_still_answers() -> None:
    assert (await python("print('done')")(call("f")))["output"] == "done"
    assert (await python("")(call("f")))["output"] == ""


async def test_a_failing_command_sends_its_stderr_or_its_status_as_the_error() -> None:
    loud = await python("import sys; sys.stderr.write('the booking system is down\\n'); sys.exit(1)")(call("book"))
    assert loud == {"type": "tool.result", "call_id": "call_1", "error": "the booking system is down"}
    quiet = await python("print('half a result'); raise SystemExit(3)")(call("book"))
    assert quiet["error"] == "the tool command exited with status 3"


async def test_a_command_that_cannot_start_is_an_error() -> None:
    answer = await ToolCommand("/nonexistent/tool --x", 5.0)(call("f"))
    assert answer["error"].startswith("cannot run the tool command '/nonexistent/tool'")


async def test_a_command_past_its_time_is_killed_and_the_call_answered() -> None:
    answer = await asyncio.wait_for(python("import time; time.sleep(60)", timeout_s=0.5)(call("slow")), 30)
    assert answer == {
        "type": "tool.result",
        "call_id": "call_1",
        "error": "the tool command did not finish within 0.5 s",
    }


async def test_a_command_whose_child_keeps_its_output_open_is_bounded_too() -> None:
    code = (
        "import subprocess, sys; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); print('partial')"
    )
    answer = await asyncio.wait_for(python(code, timeout_s=1.0)(call("f")), 30)  # not held by the child's pipe
    assert answer["error"] == "the tool command did not finish within 1 s"


async def test_output_too_large_for_a_message_is_an_error() -> None:
    answer = await python(f"print('x' * {MAX_RESULT_BYTES * 3})")(call("f"))
    assert answer["error"] == f"the tool command's output is over {MAX_RESULT_BYTES} bytes"
    fits = await python(f"print('x' * {MAX_RESULT_BYTES - 100})")(call("f"))
    assert len(fits["output"]) == MAX_RESULT_BYTES - 100


async def test_a_sessions_calls_are_answered_aside_and_sent() -> None:
    sent: list[str] = []
    seen: list[Message] = []
    done = asyncio.Event()

    async def send(text: str) -> None:
        sent.append(text)
        if len(sent) == 2:
            done.set()

    answers = ToolAnswers(python("import sys, json; print(json.load(sys.stdin)['call_id'])"), send, seen.append)
    answers.on_message({"type": "reply.delta", "turn": 1, "text": "Let me check."})
    answers.on_message(call("a", call_id="c1"))
    answers.on_message(call("b", call_id="c2"))
    await asyncio.wait_for(done.wait(), 30)
    await answers.close()
    results = sorted((json.loads(text) for text in sent), key=lambda m: str(m["call_id"]))
    assert results == [
        {"type": "tool.result", "call_id": "c1", "output": "c1"},
        {"type": "tool.result", "call_id": "c2", "output": "c2"},
    ]
    assert [m["type"] for m in seen[:3]] == ["reply.delta", "tool.call", "tool.call"]
    assert sorted(m["call_id"] for m in seen[3:]) == ["c1", "c2"]


async def test_closing_stops_the_calls_still_running() -> None:
    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)

    answers = ToolAnswers(python("import time; time.sleep(60)"), send)
    answers.on_message(call("slow"))
    await asyncio.sleep(0)  # the command is starting: closing now must end it all the same
    await asyncio.wait_for(answers.close(), 30)
    assert sent == []
