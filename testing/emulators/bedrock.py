"""A local Amazon Bedrock Runtime that speaks ConverseStream's real wire format.

``POST /model/{modelId}/converse-stream`` answers ``application/vnd.amazon.eventstream`` frames (messageStart,
contentBlockDelta, contentBlockStop, messageStop, metadata), errors before the stream as HTTP errors with
``x-amzn-ErrorType`` and a JSON ``message`` (as the service does), and errors inside the stream as
``exception`` frames. It checks what the service checks (a SigV4 ``Authorization`` header, a conversation that
starts with a user message and alternates roles, the inference config's types), records every request, and
plays a script per call so a test can inject faults and latency. The real aiobotocore client points at it
through ``endpoint_url`` and cannot tell the difference.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from testing.emulators import eventstream
from testing.emulators.scripted import Hang, Pause, ScriptedServer, Step

__all__ = ["BedrockEmulator", "Hang", "HttpError", "Pause", "Step"]

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


def text_reply(
    texts: Iterable[str], reasoning: Sequence[str] = (), delay_s: float = 0.0, stop_reason: str = "end_turn"
) -> list[Step]:
    """The frames of a normal reply: optional reasoning block, then one text block, with ``delay_s`` between deltas."""
    steps: list[Step] = [message_start()]
    index = 0
    if reasoning:
        steps += [reasoning_delta(r, index) for r in reasoning]
        steps.append(block_stop(index))
        index += 1
    for text in texts:
        if delay_s:
            steps.append(Pause(delay_s))
        steps.append(text_delta(text, index))
    steps += [block_stop(index), message_stop(stop_reason), metadata()]
    return steps


# ------------------------------------------------------------------------------------------- validation


_MUST_START_WITH_USER = (
    "A conversation must start with a user message. Try again with a conversation that starts with a user message."
)
_MUST_ALTERNATE = (
    "A conversation must alternate between user and assistant roles. "
    "Make sure the conversation alternates between user and assistant roles and try again."
)


def _validation_error(body: Any) -> str | None:
    """The message Bedrock would answer with for an invalid ConverseStream body, or None."""
    if not isinstance(body, dict):
        return "Malformed input request, please reformat your input and try again."
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return _MUST_START_WITH_USER
    expected = "user"
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return "Malformed input request: invalid message role."
        if message["role"] != expected:
            if expected == "user" and message is messages[0]:
                return _MUST_START_WITH_USER
            return _MUST_ALTERNATE
        content = message.get("content")
        if not isinstance(content, list) or not content:
            return "The content field in the Message object is empty. Add a ContentBlock object and try again."
        for block in content:
            if not isinstance(block, dict) or not isinstance(block.get("text"), str) or not block["text"].strip():
                return "The text field in the ContentBlock object is blank. Add text and try again."
        expected = "assistant" if expected == "user" else "user"
    system = body.get("system", [])
    if not isinstance(system, list) or not all(isinstance(s, dict) and isinstance(s.get("text"), str) for s in system):
        return "Malformed input request: system must be a list of text blocks."
    config = body.get("inferenceConfig", {})
    if not isinstance(config, dict):
        return "Malformed input request: inferenceConfig."
    max_tokens = config.get("maxTokens", 1)
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return "The maximum tokens you requested exceeds the model limit."
    temperature = config.get("temperature", 0.0)
    if not isinstance(temperature, int | float) or not 0 <= temperature <= 1:
        return "temperature: must be between 0 and 1"
    return None


# ------------------------------------------------------------------------------------------------ server


class BedrockEmulator(ScriptedServer["HttpError"]):
    """``async with BedrockEmulator() as bedrock:`` then point a client at ``bedrock.url``.

    Queue what the next calls do with ``bedrock.script(steps)`` / ``bedrock.fail(...)``; an unscripted call
    gets ``default_reply``. ``requests`` records each call; ``client_closed`` is set when a client drops a
    stream before it ended.
    """

    def __init__(self, default_reply: Sequence[str] = ("Hello", " from", " Bedrock.")) -> None:
        super().__init__()
        self.default_reply = list(default_reply)
        self.requests: list[RecordedRequest] = []

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
        plan = self.next_plan(text_reply(self.default_reply))
        if isinstance(plan, HttpError):
            return self._error(plan.status, plan.error_type, plan.message)
        invalid = _validation_error(body)
        if invalid is not None:
            return self._error(400, "ValidationException", invalid)
        response = web.StreamResponse(
            status=200,
            headers={"Content-Type": CONTENT_TYPE, "x-amzn-RequestId": "00000000-0000-0000-0000-000000000001"},
        )
        await response.prepare(request)
        await self.play(request, response, plan)
        return response
