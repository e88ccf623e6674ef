"""A local Amazon Bedrock Runtime that speaks ConverseStream's real wire format.

``POST /model/{modelId}/converse-stream`` answers ``application/vnd.amazon.eventstream`` frames (messageStart,
contentBlockDelta, contentBlockStop, messageStop, metadata), errors before the stream as HTTP errors with
``x-amzn-ErrorType`` and a JSON ``message`` (as the service does), and errors inside the stream as
``exception`` frames. It checks what the service checks (a SigV4 ``Authorization`` header, and the body:
``testing.emulators.bedrock_requests``, from roles that alternate to ``toolResult`` blocks that answer the
``toolUse`` blocks before them and a ``toolConfig`` wherever tool blocks are), records every request, and plays a
script per call so a test can inject faults and latency. The real aiobotocore client points at it through
``endpoint_url`` and cannot tell the difference.

A tool call streams as the service's event stream has it: a ``contentBlockStart`` whose ``start.toolUse`` holds
the ``toolUseId`` and ``name`` at its ``contentBlockIndex`` (after the text block, if the model said something),
``contentBlockDelta`` events whose ``delta.toolUse.input`` are pieces of the input's JSON text, a
``contentBlockStop``; after the last block ``messageStop`` says ``tool_use``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from testing.emulators import eventstream
from testing.emulators.bedrock_requests import validation_error
from testing.emulators.scripted import Hang, Pause, ScriptedServer, Step
from testing.emulators.tool_calls import Call, Replier, ReplyItem, split

__all__ = ["BedrockEmulator", "Call", "Hang", "HttpError", "Pause", "Step"]

CONTENT_TYPE = "application/vnd.amazon.eventstream"


@dataclass(frozen=True, slots=True)
class HttpError:
    """Answer the call with an HTTP error instead of a stream."""

    status: int
    error_type: str
    message: str


@dataclass(slots=True)
class RecordedRequest:
    model_id: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)


# --------------------------------------------------------------------------------------- frame builders


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return eventstream.event(name, json.dumps(payload).encode())


def message_start() -> bytes:
    return _event("messageStart", {"role": "assistant"})


def text_delta(text: str, index: int = 0) -> bytes:
    return _event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}})


def reasoning_delta(text: str, index: int = 0) -> bytes:
    return _event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": text}}})


def tool_use_start(tool_use_id: str, name: str, index: int) -> bytes:
    return _event(
        "contentBlockStart",
        {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}},
    )


def tool_use_delta(partial_json: str, index: int = 0) -> bytes:
    return _event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": partial_json}}})


def block_stop(index: int = 0) -> bytes:
    return _event("contentBlockStop", {"contentBlockIndex": index})


def message_stop(reason: str = "end_turn") -> bytes:
    return _event("messageStop", {"stopReason": reason})


def metadata(input_tokens: int = 10, output_tokens: int = 5, latency_ms: int = 42) -> bytes:
    usage = {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens}
    return _event("metadata", {"usage": usage, "metrics": {"latencyMs": latency_ms}})


def stream_exception(exception_type: str, message: str, **extra: Any) -> bytes:
    """A mid-stream error frame, e.g. ``modelStreamErrorException`` or ``throttlingException``."""
    return eventstream.exception(exception_type, json.dumps({"message": message, **extra}).encode())


def model_reply(
    items: Iterable[ReplyItem],
    reasoning: Sequence[str] = (),
    delay_s: float = 0.0,
    stop_reason: str | None = None,
    tool_use_ids: Iterator[str] | None = None,
) -> list[Step]:
    """The frames of a reply: an optional reasoning block, then a block per run of text pieces and per call (its
    input in pieces), ``delay_s`` before each text delta and each call. ``stop_reason`` defaults to ``tool_use``
    when the reply calls, else ``end_turn``; calls without an id take the next of ``tool_use_ids``."""
    ids = tool_use_ids if tool_use_ids is not None else (f"tooluse_{n:022d}" for n in range(1_000_000))
    steps: list[Step] = [message_start()]
    index = 0
    if reasoning:
        steps += [reasoning_delta(r, index) for r in reasoning]
        steps.append(block_stop(index))
        index += 1
    in_text = calls = False
    for item in items:
        if delay_s:
            steps.append(Pause(delay_s))
        if isinstance(item, str):
            in_text = True
            steps.append(text_delta(item, index))
            continue
        if in_text:
            steps.append(block_stop(index))
            index, in_text = index + 1, False
        steps.append(tool_use_start(item.call_id or next(ids), item.name, index))
        steps += [tool_use_delta(piece, index) for piece in split(item.arguments, item.pieces) if piece]
        steps.append(block_stop(index))
        index, calls = index + 1, True
    if in_text:
        steps.append(block_stop(index))
    steps += [message_stop(stop_reason or ("tool_use" if calls else "end_turn")), metadata()]
    return steps


def text_reply(
    texts: Iterable[str], reasoning: Sequence[str] = (), delay_s: float = 0.0, stop_reason: str = "end_turn"
) -> list[Step]:
    """The frames of a normal reply: optional reasoning block, then one text block, with ``delay_s`` between deltas."""
    return model_reply(texts, reasoning, delay_s, stop_reason)


def calls_reply(*calls: Call, text: Sequence[str] = ()) -> list[Step]:
    """A reply that says ``text`` (if any), then makes ``calls`` (several: parallel calls)."""
    return model_reply([*text, *calls])


# ------------------------------------------------------------------------------------------------ server


class BedrockEmulator(ScriptedServer["HttpError"]):
    """``async with BedrockEmulator() as bedrock:`` then point a client at ``bedrock.url``.

    Queue what the next calls do with ``bedrock.script(steps)`` / ``bedrock.fail(...)``; an unscripted call
    gets ``default_reply``, or ``reply(body)`` when given (for valid bodies: text pieces and ``Call``s).
    ``requests`` records each call, ``refusals`` the ``ValidationException`` messages answered; ``client_closed``
    is set when a client drops a stream before it ended.
    """

    def __init__(
        self, default_reply: Sequence[ReplyItem] = ("Hello", " from", " Bedrock."), *, reply: Replier | None = None
    ) -> None:
        super().__init__()
        self.default_reply = list(default_reply)
        self.reply = reply
        self.requests: list[RecordedRequest] = []
        self.refusals: list[str] = []
        self._tool_use_ids = (f"tooluse_{n:022d}" for n in range(1_000_000_000))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def fail(self, status: int, error_type: str, message: str) -> None:
        self._plans.append(HttpError(status, error_type, message))

    async def __aenter__(self) -> BedrockEmulator:
        await super().__aenter__()
        return self

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/model/{model_id}/converse-stream", self._converse_stream)

    def _unscripted(self, valid_body: dict[str, Any] | None) -> list[Step]:
        items = self.reply(valid_body) if self.reply is not None and valid_body is not None else self.default_reply
        return model_reply(items, tool_use_ids=self._tool_use_ids)

    @staticmethod
    def _error(status: int, error_type: str, message: str) -> web.Response:
        headers = {
            "x-amzn-ErrorType": f"{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/",
            "x-amzn-RequestId": "00000000-0000-0000-0000-000000000000",
        }
        return web.json_response({"message": message}, status=status, headers=headers)

    async def _converse_stream(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 ") or "/bedrock/aws4_request" not in auth:
            return self._error(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        self.requests.append(RecordedRequest(request.match_info["model_id"], dict(request.headers), body or {}))
        invalid = validation_error(body)
        plan = self._plans.popleft() if self._plans else self._unscripted(body if invalid is None else None)
        if isinstance(plan, HttpError):
            return self._error(plan.status, plan.error_type, plan.message)
        if invalid is not None:
            self.refusals.append(invalid)
            return self._error(400, "ValidationException", invalid)
        response = web.StreamResponse(
            status=200,
            headers={"Content-Type": CONTENT_TYPE, "x-amzn-RequestId": "00000000-0000-0000-0000-000000000001"},
        )
        await response.prepare(request)
        await self.play(request, response, plan)
        return response
