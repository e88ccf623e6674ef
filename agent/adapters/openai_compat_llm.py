"""``LanguageModel`` on any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp server).

``POST {base_url}/chat/completions`` with ``"stream": true``; the answer is server-sent events whose
``data:`` lines hold chat-completion chunks, ending with ``data: [DONE]``. ``choices[0].delta.content`` is
yielded as it arrives; ``reasoning_content`` (and ``reasoning``) is skipped; the model's tool calls
(``delta.tool_calls`` fragments) are yielded as ``ToolCall``s once the choice finishes (its ``finish_reason``,
whichever it is: a named ``tool_choice`` finishes with ``stop``) or at ``[DONE]``. The request's shapes (messages,
tools, tool_choice) are ``agent.adapters.openai_chat_wire``'s. HTTP errors, ``error`` objects inside the stream,
malformed chunks and streams that break before ``[DONE]`` become ``ProviderError`` / ``ProviderTimeout`` /
``ProviderUnavailable``. The API key is a ``SecretStr`` and appears only in the ``Authorization`` header.

One ``aiohttp`` session (one connection pool) is kept per event loop. When the consumer stops iterating,
the response is closed, not drained: the connection drops and the server stops generating.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

import aiohttp

from agent.adapters import trace_context
from agent.adapters.aiohttp_pool import LoopSession
from agent.adapters.openai_chat_wire import ToolCallFragments, chat_messages, tool_fields
from agent.config import LlmSettings
from agent.errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import ChatMessage, ToolCall, ToolChoice, ToolSpec

log = logging.getLogger(__name__)

PROVIDER = "openai"
_MAX_ERROR_BODY = 500


def _error_detail(status: int, body: bytes) -> str:
    """The server's error message from an OpenAI-style ``{"error": {...}}`` body, else its start."""
    text = body[:_MAX_ERROR_BODY].decode("utf-8", "replace").strip()
    try:
        data = json.loads(body)
    except ValueError:
        return f"HTTP {status}: {text}" if text else f"HTTP {status}"
    message = _stream_error(data) if isinstance(data, dict) else None
    return f"HTTP {status}: {message or text}"


def _stream_error(chunk: dict[str, Any]) -> str | None:
    """The message of an error object (``{"error": {...}}`` or vLLM's ``{"object": "error", ...}``), or None."""
    error = chunk.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or error)
    if isinstance(error, str):
        return error
    if chunk.get("object") == "error":
        return str(chunk.get("message") or "error")
    return None


def _status_error(status: int, detail: str) -> ProviderError:
    if status in (408, 504):
        return ProviderTimeout(PROVIDER, detail)
    if status in (429, 502, 503):
        return ProviderUnavailable(PROVIDER, detail)
    return ProviderError(PROVIDER, detail)


async def _sse_data(content: aiohttp.StreamReader) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event (multi-line data joined by newlines; comments skipped)."""
    data: list[str] = []
    async for raw in content:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:  # a final event without its blank line
        yield "\n".join(data)


class OpenAICompatLLM:
    """Streams replies from ``{base_url}/chat/completions``. Call ``aclose`` when done to close the pool."""

    def __init__(self, settings: LlmSettings) -> None:
        if not settings.model.strip():
            raise ConfigError("llm.model is required for the openai backend")
        if not settings.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"llm.base_url must be an http(s) URL, got {settings.base_url!r}")
        self._settings = settings
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=settings.connect_timeout_s, sock_read=settings.read_timeout_s
        )
        self._headers = {"Accept": "text/event-stream"}
        if settings.api_key is not None and settings.api_key.get_secret_value():
            self._headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        self._pool = LoopSession(lambda: aiohttp.ClientSession(timeout=self._timeout, headers=self._headers))

    def _http(self) -> aiohttp.ClientSession:
        return self._pool.get()

    async def aclose(self) -> None:
        """Close the connection pool (on the loop that made it)."""
        await self._pool.aclose()

    def _request(
        self, history: Sequence[ChatMessage], tools: Sequence[ToolSpec], tool_choice: ToolChoice
    ) -> dict[str, Any]:
        return {
            "model": self._settings.model,
            "messages": chat_messages(history, self._settings.system_prompt),
            "stream": True,
            "max_tokens": self._settings.max_tokens,
            "temperature": self._settings.temperature,
            **tool_fields(tools, tool_choice),
        }

    async def stream_reply(
        self,
        history: Sequence[ChatMessage],
        *,
        language: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> AsyncGenerator[str | ToolCall, None]:
        """Yield the reply's text deltas as they arrive, and its tool calls once complete (in the model's order).
        ``language`` is not sent as such: the history's system message already tells the model which language to
        answer in (``agent.core.language_text``). ``tools`` and ``tool_choice`` are sent only when tools are
        offered.

        Raises ``ProviderError`` (HTTP 4xx/5xx, an error object in the stream, a broken or malformed stream, a
        malformed tool call, a tool whose parameters are no JSON object), ``ProviderUnavailable`` (unreachable,
        429/502/503) or ``ProviderTimeout`` (408/504, a stalled stream), possibly after some deltas.
        """
        body = self._request(history, tools, tool_choice)
        calls = ToolCallFragments()
        response: aiohttp.ClientResponse | None = None
        finished = False
        try:
            try:
                response = await self._http().post(self._url, json=body, headers=trace_context.headers())
                if response.status != 200:
                    raise _status_error(response.status, _error_detail(response.status, await response.read()))
                async for data in _sse_data(response.content):
                    if data.strip() == "[DONE]":
                        for call in calls.finish():
                            yield call
                        finished = True
                        break
                    choice = _first_choice(data)
                    if choice is None:
                        continue
                    delta = choice.get("delta") or {}
                    if not isinstance(delta, dict):
                        raise ProviderError(PROVIDER, f"malformed stream chunk: {data[:80]!r}")
                    text = delta.get("content")
                    if isinstance(text, str) and text:
                        yield text
                    calls.feed(delta.get("tool_calls"))
                    if choice.get("finish_reason") is not None:
                        for call in calls.finish():
                            yield call
            except (aiohttp.ClientConnectorError, aiohttp.ServerDisconnectedError) as exc:
                raise ProviderUnavailable(PROVIDER, f"cannot reach {self._url} ({type(exc).__name__})") from exc
            except TimeoutError as exc:  # aiohttp.ServerTimeoutError is one
                raise ProviderTimeout(PROVIDER, "no answer in time") from exc
            except (aiohttp.ClientError, UnicodeDecodeError) as exc:
                raise ProviderError(PROVIDER, f"broken stream ({type(exc).__name__}: {exc})") from exc
            if not finished:
                raise ProviderError(PROVIDER, "the stream ended before [DONE]")
        finally:
            if response is not None:
                if finished:
                    response.release()
                else:
                    # Drop the connection instead of draining it, so the server stops generating.
                    response.close()


def _first_choice(data: str) -> dict[str, Any] | None:
    """The first choice of a chunk (``None`` for a usage-only chunk, which has none). Raises ``ProviderError``
    for a chunk that is no JSON object, an error object, or malformed choices."""
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise ProviderError(PROVIDER, f"malformed stream chunk: {data[:80]!r}") from exc
    if not isinstance(chunk, dict):
        raise ProviderError(PROVIDER, f"malformed stream chunk: {data[:80]!r}")
    message = _stream_error(chunk)
    if message is not None:
        raise ProviderError(PROVIDER, f"error in stream: {message}")
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise ProviderError(PROVIDER, f"malformed stream chunk: {data[:80]!r}")
    return choices[0] if choices else None
