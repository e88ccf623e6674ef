"""``LanguageModel`` on Amazon Bedrock ConverseStream, through aiobotocore.

Text deltas (``contentBlockDelta.delta.text``) are yielded as they arrive, and each ``toolUse`` content block
as a ``ToolCall`` once it stops (``contentBlockStart`` names it, ``contentBlockDelta.delta.toolUse.input``
pieces make its arguments, ``contentBlockStop`` ends it); reasoning content, citations and images are skipped.
The request's shapes (messages, ``toolConfig``) are ``agent.adapters.bedrock_converse``'s. Every botocore/aiohttp
failure becomes ``ProviderError`` / ``ProviderTimeout`` / ``ProviderUnavailable`` (see ``_map_client_error``);
nothing vendor-typed leaves this module.

One client (one connection pool) is kept per event loop and reused across turns, so a turn does not pay a
new TLS handshake. SDK retries are bounded by ``max_attempts`` (a retry cannot resume a half-read stream, so
it only helps before the first event). When the consumer stops iterating (the turn was cancelled), the HTTP
response is closed at once, which tells Bedrock to stop generating.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack
from typing import Any

import aiohttp
from aiobotocore.config import AioConfig
from aiobotocore.session import AioSession, get_session
from botocore.eventstream import ParserError
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ReadTimeoutError,
)

from agent.adapters import trace_context
from agent.adapters.bedrock_converse import ToolUseBlocks, to_converse, tool_config
from agent.config import LlmSettings
from agent.errors import ConfigError, ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import ChatMessage, ToolCall, ToolChoice, ToolSpec

log = logging.getLogger(__name__)

PROVIDER = "bedrock"

# Error codes (pre-stream ``x-amzn-ErrorType`` names and mid-stream lower-camel exception names, compared
# case-insensitively) by the exception they become.
_UNAVAILABLE = {
    "throttlingexception",
    "serviceunavailableexception",
    "modelnotreadyexception",
    "serviceunavailable",
    "servicequotaexceededexception",
    "internalserverexception",
}
_TIMEOUT = {"modeltimeoutexception", "requesttimeout", "requesttimeoutexception"}
_NORMAL_STOPS = (None, "end_turn", "stop_sequence", "tool_use")


def _map_client_error(exc: ClientError) -> ProviderError:
    error = exc.response.get("Error", {})
    code = str(error.get("Code", "") or "unknown")
    message = str(error.get("Message", "") or "")
    detail = f"{code}: {message}" if message else code
    key = code.lower()
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if key in _UNAVAILABLE or status in (429, 502, 503):
        return ProviderUnavailable(PROVIDER, detail)
    if key in _TIMEOUT or status in (408, 504):
        return ProviderTimeout(PROVIDER, detail)
    return ProviderError(PROVIDER, detail)


def _map_exception(exc: BaseException) -> ProviderError:
    """Translate any vendor exception raised while calling or streaming into our tree."""
    if isinstance(exc, ClientError):  # includes EventStreamError (mid-stream ``exception`` frames)
        return _map_client_error(exc)
    if isinstance(exc, ConnectTimeoutError | ReadTimeoutError | TimeoutError):
        return ProviderTimeout(PROVIDER, f"no answer in time ({type(exc).__name__})")
    if isinstance(exc, EndpointConnectionError | ConnectionClosedError | aiohttp.ClientConnectionError):
        return ProviderUnavailable(PROVIDER, f"cannot reach the service ({type(exc).__name__})")
    if isinstance(exc, NoCredentialsError):
        return ProviderUnavailable(PROVIDER, "no AWS credentials found")
    return ProviderError(PROVIDER, f"{type(exc).__name__}: {exc}")


class BedrockLLM:
    """Streams replies from a Bedrock model with ConverseStream.

    ``session`` is the aiobotocore session to make clients from (default: a new one using the AWS default
    credential chain; tests pass one with fixed credentials). Call ``aclose`` when done to close the pool.
    """

    def __init__(self, settings: LlmSettings, session: AioSession | None = None) -> None:
        if not settings.model.strip():
            raise ConfigError("llm.model (a Bedrock model id) is required for the bedrock backend")
        self._settings = settings
        self._session = session if session is not None else get_session()
        self._config = AioConfig(
            connect_timeout=settings.connect_timeout_s,
            read_timeout=settings.read_timeout_s,
            retries={"mode": "standard", "total_max_attempts": settings.max_attempts},
            user_agent_extra="voice-agent-server",
        )
        self._lock = asyncio.Lock()
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._stack: AsyncExitStack | None = None

    async def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        async with self._lock:
            if self._client is not None and self._client_loop is loop:
                return self._client
            stack = AsyncExitStack()
            kwargs: dict[str, Any] = {"config": self._config}
            if self._settings.region:
                kwargs["region_name"] = self._settings.region
            if self._settings.endpoint_url:
                kwargs["endpoint_url"] = self._settings.endpoint_url
            try:
                client = await stack.enter_async_context(self._session.create_client("bedrock-runtime", **kwargs))
                trace_context.register(client)
            except NoRegionError as exc:
                raise ConfigError("llm.region is empty and the AWS default chain names no region") from exc
            except (BotoCoreError, ValueError) as exc:
                raise ConfigError(f"cannot create the Bedrock client: {exc}") from exc
            # A client made on another (finished) loop cannot be closed from this one; it is dropped.
            self._client, self._client_loop, self._stack = client, loop, stack
            return client

    async def aclose(self) -> None:
        """Close the connection pool (on the loop that made it)."""
        stack, self._stack, self._client, self._client_loop = self._stack, None, None, None
        if stack is not None:
            await stack.aclose()

    def _request(
        self, history: Sequence[ChatMessage], tools: Sequence[ToolSpec], tool_choice: ToolChoice
    ) -> dict[str, Any]:
        config = tool_config(tools, tool_choice)
        system, messages = to_converse(history, tools_offered=config is not None)
        if not system and self._settings.system_prompt.strip():
            system = [{"text": self._settings.system_prompt}]
        request: dict[str, Any] = {
            "modelId": self._settings.model,
            "messages": messages,
            "inferenceConfig": {"maxTokens": self._settings.max_tokens, "temperature": self._settings.temperature},
        }
        if system:
            request["system"] = system
        if config is not None:
            request["toolConfig"] = config
        return request

    async def stream_reply(
        self,
        history: Sequence[ChatMessage],
        *,
        language: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> AsyncGenerator[str | ToolCall, None]:
        """Yield the reply's text deltas as they arrive, and each tool call once its block stops. ``language`` is
        not sent as such: the history's system message already tells the model which language to answer in
        (``agent.core.language_text``). With no tools, or ``tool_choice`` ``none``, the request has no
        ``toolConfig`` and the history's calls and results go as text (``agent.adapters.bedrock_converse``).

        Raises ``ProviderError`` (model/stream errors, validation, access, a malformed or unfinished tool call),
        ``ProviderUnavailable`` (throttling, service unavailable, unreachable) or ``ProviderTimeout``, possibly
        after some deltas.
        """
        request = self._request(history, tools, tool_choice)
        client = await self._get_client()
        blocks = ToolUseBlocks()
        stream: Any = None
        try:
            try:
                response = await client.converse_stream(**request)
                stream = response["stream"]
                async for event in stream:
                    delta = event.get("contentBlockDelta")
                    if delta is not None:
                        body = delta.get("delta", {})
                        text = body.get("text")
                        if text:
                            yield text
                        if "toolUse" in body:
                            blocks.delta(int(delta.get("contentBlockIndex", 0)), body["toolUse"].get("input"))
                        continue
                    start = event.get("contentBlockStart")
                    if start is not None:
                        blocks.start(start)
                        continue
                    stop_block = event.get("contentBlockStop")
                    if stop_block is not None:
                        call = blocks.stop(int(stop_block.get("contentBlockIndex", 0)))
                        if call is not None:
                            yield call
                        continue
                    stop = event.get("messageStop")
                    if stop is not None and stop.get("stopReason") not in _NORMAL_STOPS:
                        log.info("bedrock reply stopped: %s", stop.get("stopReason"))
            except (ClientError, BotoCoreError, ParserError, aiohttp.ClientError, TimeoutError) as exc:
                raise _map_exception(exc) from exc
            if blocks.unfinished:
                raise ProviderError(PROVIDER, "the stream ended inside a tool call")
        finally:
            if stream is not None:
                # Closing an unfinished response drops the connection: Bedrock stops generating.
                stream.close()
