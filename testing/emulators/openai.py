"""A local OpenAI-compatible chat-completions server that streams like vLLM / Ollama / llama.cpp.

``POST /v1/chat/completions`` with ``"stream": true`` answers ``text/event-stream``: ``data: {chunk}`` events
(``chat.completion.chunk`` objects whose ``choices[0].delta`` holds ``role``, ``content`` or
``reasoning_content``), a final chunk with ``finish_reason``, then ``data: [DONE]``. Errors before the stream are
HTTP errors with an ``{"error": {...}}`` body; errors inside it are ``data: {"error": {...}}`` events. The
server checks the bearer token (when one is set) and the body, records each request, and plays a script per
call so a test can inject faults, latency and broken connections. Unscripted calls get the default reply, or one
made from the request (``reply``), paced like a model (``first_token_delay_s``, ``token_delay_s``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from testing.emulators.scripted import Disconnect, Hang, Pause, ScriptedServer, Step

__all__ = ["Disconnect", "Hang", "HttpError", "OpenAIEmulator", "Pause", "Step"]


@dataclass(frozen=True, slots=True)
class HttpError:
    status: int
    message: str
    error_type: str = "BadRequestError"


@dataclass(slots=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)


def sse(data: str) -> bytes:
    return f"data: {data}\n\n".encode()


def chunk(delta: dict[str, Any], finish_reason: str | None = None, model: str = "test-model") -> bytes:
    body = {
        "id": "chatcmpl-emulator",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    return sse(json.dumps(body))


def content(text: str) -> bytes:
    return chunk({"content": text})


def reasoning(text: str) -> bytes:
    return chunk({"reasoning_content": text})


def stream_error(message: str, code: int = 500) -> bytes:
    return sse(json.dumps({"error": {"message": message, "type": "InternalServerError", "code": code}}))


DONE = sse("[DONE]")


def text_reply(
    texts: Iterable[str],
    reasoning_texts: Sequence[str] = (),
    delay_s: float = 0.0,
    first_delay_s: float | None = None,
) -> list[Step]:
    """A streamed reply of ``texts`` (one chunk each), ``delay_s`` before each; ``first_delay_s`` (if given)
    replaces the delay before the first one (a model's time to first token)."""
    steps: list[Step] = [chunk({"role": "assistant", "content": ""})]
    steps += [reasoning(r) for r in reasoning_texts]
    for i, text in enumerate(texts):
        pause = first_delay_s if i == 0 and first_delay_s is not None else delay_s
        if pause:
            steps.append(Pause(pause))
        steps.append(content(text))
    usage = {"id": "chatcmpl-emulator", "object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 9}}
    steps += [chunk({}, finish_reason="stop"), sse(json.dumps(usage)), DONE]
    return steps


def _invalid(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "Expected a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            return "invalid message role"
        if not isinstance(m.get("content"), str):
            return "message content must be a string"
    if body.get("stream") is not True:
        return "this emulator only streams"
    return None


Replier = Callable[[dict[str, Any]], Sequence[str]]
"""Makes the reply's chunks from a valid request body (e.g. from its last user message)."""


class OpenAIEmulator(ScriptedServer["HttpError"]):
    """``async with OpenAIEmulator() as server:``; ``server.base_url`` ends in ``/v1``.

    Queue behaviour with ``script(steps)`` / ``fail(status, message)``; unscripted calls get ``default_reply``,
    or ``reply(body)`` when given (for valid bodies), with ``first_token_delay_s`` before the first chunk and
    ``token_delay_s`` before each later one (both 0 by default). ``api_key`` (if set) must arrive as
    ``Authorization: Bearer <key>``. ``client_closed`` is set when a client drops a stream before it ended.
    """

    def __init__(
        self,
        default_reply: Sequence[str] = ("Hello", " from", " vLLM."),
        api_key: str | None = None,
        *,
        reply: Replier | None = None,
        first_token_delay_s: float = 0.0,
        token_delay_s: float = 0.0,
    ) -> None:
        super().__init__()
        self.default_reply = list(default_reply)
        self.api_key = api_key
        self.reply = reply
        self.first_token_delay_s = first_token_delay_s
        self.token_delay_s = token_delay_s
        self.requests: list[RecordedRequest] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def fail(self, status: int, message: str, error_type: str = "BadRequestError") -> None:
        self._plans.append(HttpError(status, message, error_type))

    async def __aenter__(self) -> OpenAIEmulator:
        await super().__aenter__()
        return self

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._completions)

    def _unscripted(self, body: Any) -> list[Step]:
        texts = self.reply(body) if self.reply is not None and _invalid(body) is None else self.default_reply
        return text_reply(texts, delay_s=self.token_delay_s, first_delay_s=self.first_token_delay_s)

    @staticmethod
    def _error(status: int, message: str, error_type: str) -> web.Response:
        return web.json_response({"error": {"message": message, "type": error_type, "code": status}}, status=status)

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._error(401, "Incorrect API key provided", "AuthenticationError")
        try:
            body = json.loads(await request.read())
        except ValueError:
            body = None
        self.requests.append(
            RecordedRequest(request.path, dict(request.headers), body if isinstance(body, dict) else {})
        )
        plan = self.next_plan(self._unscripted(body))
        if isinstance(plan, HttpError):
            return self._error(plan.status, plan.message, plan.error_type)
        invalid = _invalid(body)
        if invalid is not None:
            return self._error(400, invalid, "BadRequestError")
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        await self.play(request, response, plan)
        return response
