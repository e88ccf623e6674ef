"""A local OpenAI-compatible chat-completions server that streams like vLLM / Ollama / llama.cpp.

``POST /v1/chat/completions`` with ``"stream": true`` answers ``text/event-stream``: ``data: {chunk}`` events
(``chat.completion.chunk`` objects whose ``choices[0].delta`` holds ``role``, ``content`` or
``reasoning_content``), a final chunk with ``finish_reason``, then ``data: [DONE]``. Errors before the stream are
HTTP errors with an ``{"error": {...}}`` body; errors inside it are ``data: {"error": {...}}`` events. The
server checks the bearer token (when one is set) and the body (``testing.emulators.openai_requests``: tool
messages that answer no call, calls left unanswered, malformed tools, a ``tool_choice`` naming an undeclared
function are 400s), records each request, and plays a script per call so a test can inject faults, latency and
broken connections. Unscripted calls get the default reply, or one made from the request (``reply``), paced like a
model (``first_token_delay_s``, ``token_delay_s``).

Tool calls stream as OpenAI documents them: a call's first ``delta.tool_calls`` fragment carries its ``index``,
``id``, ``type`` and ``function.name`` (with empty ``arguments``), the later ones only the ``index`` and pieces of
``function.arguments``; parallel calls have consecutive indexes; the last chunk has ``finish_reason``
``tool_calls`` (``stop`` when the request named the function in ``tool_choice``, as OpenAI and vLLM do).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from testing.emulators.openai_requests import invalid
from testing.emulators.scripted import Disconnect, Hang, Pause, ScriptedServer, Step
from testing.emulators.tool_calls import Call, Replier, ReplyItem, split

__all__ = ["Call", "Disconnect", "Hang", "HttpError", "OpenAIEmulator", "Pause", "Step"]


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


def tool_call_start(index: int, call_id: str, name: str) -> bytes:
    """A call's first fragment: its index, id, type and name, with empty arguments."""
    fragment = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    return chunk({"tool_calls": [fragment]})


def tool_call_arguments(index: int, piece: str) -> bytes:
    """A later fragment of call ``index``: a piece of its arguments."""
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})


_USAGE = {"id": "chatcmpl-emulator", "object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 9}}


def model_reply(
    items: Iterable[ReplyItem],
    reasoning_texts: Sequence[str] = (),
    delay_s: float = 0.0,
    first_delay_s: float | None = None,
    finish_reason: str | None = None,
    call_ids: Iterator[str] | None = None,
) -> list[Step]:
    """A streamed reply of text pieces (one chunk each) and calls (a start fragment, then their arguments in
    pieces), ``delay_s`` before each text chunk and each call; ``first_delay_s`` (if given) replaces the delay
    before the first one (a model's time to first token). ``finish_reason`` defaults to ``tool_calls`` when the
    reply calls, else ``stop``; calls without an id take the next of ``call_ids`` (default ``call_0…``)."""
    ids = call_ids if call_ids is not None else (f"call_{n:024d}" for n in range(1_000_000))
    steps: list[Step] = [chunk({"role": "assistant", "content": ""})]
    steps += [reasoning(r) for r in reasoning_texts]
    calls = 0
    for i, item in enumerate(items):
        pause = first_delay_s if i == 0 and first_delay_s is not None else delay_s
        if pause:
            steps.append(Pause(pause))
        if isinstance(item, str):
            steps.append(content(item))
            continue
        steps.append(tool_call_start(calls, item.call_id or next(ids), item.name))
        steps += [tool_call_arguments(calls, piece) for piece in split(item.arguments, item.pieces) if piece]
        calls += 1
    finish = finish_reason or ("tool_calls" if calls else "stop")
    steps += [chunk({}, finish_reason=finish), sse(json.dumps(_USAGE)), DONE]
    return steps


def text_reply(
    texts: Iterable[str],
    reasoning_texts: Sequence[str] = (),
    delay_s: float = 0.0,
    first_delay_s: float | None = None,
) -> list[Step]:
    """A streamed reply of ``texts`` (one chunk each), ``delay_s`` before each; ``first_delay_s`` (if given)
    replaces the delay before the first one (a model's time to first token)."""
    return model_reply(texts, reasoning_texts, delay_s, first_delay_s)


def calls_reply(*calls: Call, text: Sequence[str] = (), finish_reason: str | None = None) -> list[Step]:
    """A reply that says ``text`` (if any), then makes ``calls`` (several: parallel calls)."""
    return model_reply([*text, *calls], finish_reason=finish_reason)


class OpenAIEmulator(ScriptedServer["HttpError"]):
    """``async with OpenAIEmulator() as server:``; ``server.base_url`` ends in ``/v1``.

    Queue behaviour with ``script(steps)`` / ``fail(status, message)``; unscripted calls get ``default_reply``,
    or ``reply(body)`` when given (for valid bodies: text pieces and ``Call``s, so a test can answer a request
    holding a tool's result differently from the one before), with ``first_token_delay_s`` before the first chunk and
    ``token_delay_s`` before each later one (both 0 by default). ``api_key`` (if set) must arrive as
    ``Authorization: Bearer <key>``. ``client_closed`` is set when a client drops a stream before it ended.
    """

    def __init__(
        self,
        default_reply: Sequence[ReplyItem] = ("Hello", " from", " vLLM."),
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
        self.refusals: list[str] = []
        """The 400 messages the emulator answered bad bodies with, in order."""
        self._call_ids = (f"call_{n:024d}" for n in range(1_000_000_000))

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
        valid = invalid(body) is None
        items = self.reply(body) if self.reply is not None and valid else self.default_reply
        named = valid and isinstance(body.get("tool_choice"), dict)
        finish = "stop" if named and any(isinstance(item, Call) for item in items) else None
        return model_reply(
            items,
            delay_s=self.token_delay_s,
            first_delay_s=self.first_token_delay_s,
            finish_reason=finish,
            call_ids=self._call_ids,
        )

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
        plan = self._plans.popleft() if self._plans else self._unscripted(body)  # reply() only if unscripted
        if isinstance(plan, HttpError):
            return self._error(plan.status, plan.message, plan.error_type)
        problem = invalid(body)
        if problem is not None:
            self.refusals.append(problem)
            return self._error(400, problem, "BadRequestError")
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        await self.play(request, response, plan)
        return response
