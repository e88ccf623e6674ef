"""Answering the server's tool calls on protocol v1 (``/ws``): the tools a client declares, read from a file, and a
command that runs each call.

``load_tools`` reads a JSON file of function declarations (sent as ``session.start``'s ``tools``).
``ToolCommand`` runs one ``tool.call`` as a subprocess: the call as JSON on its stdin (``{"name", "call_id",
"arguments"}``), its stdout back as the ``tool.result``'s ``output`` (exit status 0), or its stderr as the
``error`` (any other status), within a time bound. ``ToolAnswers`` runs the calls of a session as they come,
each aside, and sends their results. docs/protocol.md ("Function calling") is the contract.

Reason to change: how the client declares and answers tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from clients.conversation import Message
from clients.session_state import EventCallback

ToolHandler = Callable[[Message], Awaitable[Message]]
"""Answers one ``tool.call`` message with its ``tool.result`` message."""

MAX_RESULT_BYTES = 60_000
"""A ``tool.result`` stays under the server's 64 KiB message limit: larger output is sent as an error."""
_READ_CHUNK = 65_536


def load_tools(path: Path) -> list[Message]:
    """The function declarations in ``path``: a JSON list of them, or an object with a ``tools`` list (an OpenAI
    session's shape). Each is an object; the server checks the rest. Raises ``ValueError`` saying what is
    wrong, ``OSError`` when the file cannot be read."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    tools = loaded.get("tools") if isinstance(loaded, dict) else loaded
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise ValueError(f"{path} must hold a JSON list of tool objects, or an object with a 'tools' list")
    return tools


def result(call_id: object, *, output: str | None = None, error: str | None = None) -> Message:
    """A ``tool.result`` message: ``output``, or ``error`` when it is given."""
    body: Message = {"type": "tool.result", "call_id": call_id}
    if error is not None:
        body["error"] = error
    else:
        body["output"] = output or ""
    return body


class ToolCommand:
    """Runs each ``tool.call`` as ``command`` (split like a shell command line, not run by a shell).

    The call goes to its stdin as one JSON object: ``{"name", "call_id", "arguments"}`` (``arguments`` as the
    server sent it: a JSON object, or the model's text when it was not one). Exit status 0: its stdout,
    stripped of surrounding white space, is the ``output``. Any other status: its stderr (or the status) is
    the ``error``. A command that is still running after ``timeout_s`` is killed (with whatever it started)
    and the call answered with an error, as is one that cannot be started or writes more than fits in a
    message. Never raises (but is cancelled like any coroutine)."""

    def __init__(self, command: str, timeout_s: float) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("the tool command is empty")
        self.timeout_s = timeout_s

    async def __call__(self, call: Message) -> Message:
        call_id = call.get("call_id")
        stdin = json.dumps({"name": call.get("name"), "call_id": call_id, "arguments": call.get("arguments")})
        try:
            process = await _start(self.argv)
        except OSError as exc:
            return result(call_id, error=f"cannot run the tool command {self.argv[0]!r}: {exc.strerror or exc}")
        finished = False
        try:
            async with asyncio.timeout(self.timeout_s):
                out, err, status = await _communicate(process, stdin.encode())
            finished = True
        except TimeoutError:
            return result(call_id, error=f"the tool command did not finish within {self.timeout_s:g} s")
        finally:
            if not finished:  # timed out or cancelled: end it, and whatever it started
                _kill(process)
                await process.wait()
                await _close_pipes(process)
        if status != 0:
            said = err.decode("utf-8", "replace").strip()
            return _bounded(result(call_id, error=said or f"the tool command exited with status {status}"))
        return _bounded(result(call_id, output=out.decode("utf-8", "replace").strip()))


async def _communicate(process: asyncio.subprocess.Process, stdin: bytes) -> tuple[bytes, bytes, int]:
    """Write ``stdin``, read stdout and stderr (each kept up to ``MAX_RESULT_BYTES``, the rest drained), wait."""
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        process.stdin.write(stdin)
        await process.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a command that reads nothing, and is gone
    finally:
        process.stdin.close()
    out, err = await asyncio.gather(_read(process.stdout), _read(process.stderr))
    return out, err, await process.wait()


async def _read(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(_READ_CHUNK):
        kept += chunk[: MAX_RESULT_BYTES + 1 - len(kept)]
    return bytes(kept)


async def _start(argv: list[str]) -> asyncio.subprocess.Process:
    """Start the command in a process group of its own (a timeout kills what it started too). Cancelled while it
    starts, the command is ended all the same (else it would run on, its pipes left to the garbage collector)."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            process = await starting
            _kill(process)
            await process.wait()
            await _close_pipes(process)
        raise


async def _close_pipes(process: asyncio.subprocess.Process) -> None:
    """Read what is left of a killed command's output to its end, which closes the pipes (left to the garbage
    collector, they are closed with a ResourceWarning, in whatever code runs then)."""
    streams = [stream for stream in (process.stdout, process.stderr) if stream is not None]
    with contextlib.suppress(Exception):
        async with asyncio.timeout(2.0):  # the group is dead: the ends come at once
            await asyncio.gather(*(stream.read() for stream in streams))


def _kill(process: asyncio.subprocess.Process) -> None:
    """End the command's process group (itself and what it started), if it is still there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _bounded(message: Message) -> Message:
    if len(json.dumps(message, ensure_ascii=False).encode("utf-8")) <= MAX_RESULT_BYTES:
        return message
    field = "error" if "error" in message else "output"
    return result(message["call_id"], error=f"the tool command's {field} is over {MAX_RESULT_BYTES} bytes")


class ToolAnswers:
    """A session's tool calls, each answered aside as it comes (several may run at once).

    ``on_message`` is the session's event callback: it hands each server message to ``on_event`` and answers
    each ``tool.call`` with ``handler``; the ``tool.result`` is sent with ``send`` and handed to ``on_event``
    too. ``close`` stops the answers still running."""

    def __init__(
        self, handler: ToolHandler, send: Callable[[str], Awaitable[None]], on_event: EventCallback | None = None
    ) -> None:
        self._handler = handler
        self._send = send
        self._on_event = on_event
        self._running: set[asyncio.Task[None]] = set()

    def on_message(self, message: Message) -> None:
        if message.get("type") == "tool.call":
            task = asyncio.create_task(self._answer(message))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
        if self._on_event is not None:
            self._on_event(message)

    async def _answer(self, call: Message) -> None:
        answer = await self._handler(call)
        if self._on_event is not None:
            self._on_event(answer)
        with contextlib.suppress(ConnectionClosed):  # the session has ended: nobody waits for it any more
            await self._send(json.dumps(answer, ensure_ascii=False))

    async def close(self) -> None:
        for task in list(self._running):
            task.cancel()
        for task in list(self._running):
            with contextlib.suppress(asyncio.CancelledError):
                await task
