"""Cloned voices from Qwen3-TTS-12Hz-1.7B-Base on an Amazon SageMaker real-time endpoint (vLLM-Omni container).

``SageMakerTTS`` is ``CloneTTS`` (voices, sentence pipelining, retries) over ``SageMakerTransport``:
``InvokeEndpoint`` for a WAV per sentence, ``InvokeEndpointWithResponseStream`` for PCM as it is generated,
both with ``CustomAttributes="route=/v1/audio/speech"`` (without it the container answers with its
completions handler and the request fails). The SDK's own retries are off: ``agent.adapters.retry`` retries
once, at sentence level, under a deadline and the reply's retry budget. Credentials come from the standard AWS
chain (environment, profile, instance role); ``endpoint_url`` points the client at another runtime, such as the
emulator in ``testing/emulators/sagemaker.py``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)

from agent.adapters import trace_context
from agent.adapters.clone_tts import CloneTTS
from agent.adapters.tts_requests import SPEECH_ROUTE
from agent.config import TtsSettings
from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import VoiceStore
from agent.work.resilience import CircuitBreaker

log = logging.getLogger(__name__)

PROVIDER = "sagemaker"
CUSTOM_ATTRIBUTES = f"route={SPEECH_ROUTE}"
RETRYABLE_CODES = frozenset(
    {"ServiceUnavailable", "InternalFailure", "ThrottlingException", "ModelNotReadyException", "InternalStreamFailure"}
)
STREAM_ERROR_CODES = frozenset({"ModelStreamError", "InternalStreamFailure"})


def client_config(settings: TtsSettings) -> AioConfig:
    """SDK retries off (exactly one HTTP call per attempt), explicit timeouts, a pool for concurrent sentences."""
    return AioConfig(
        retries={"total_max_attempts": 1},
        connect_timeout=settings.connect_timeout_s,
        read_timeout=settings.read_timeout_s,
        max_pool_connections=settings.max_pool_connections,
    )


def map_error(exc: BaseException) -> ProviderError:
    """A botocore/aiobotocore exception as one of ours: ``ProviderUnavailable`` when a retry may help."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = error.get("Message") or ""
        if code == "ModelError":
            status = exc.response.get("OriginalStatusCode")
            original = exc.response.get("OriginalMessage") or message
            detail = f"ModelError (container status {status}): {original}"
            if isinstance(status, int) and status >= 500:
                return ProviderUnavailable(PROVIDER, detail)
            return ProviderError(PROVIDER, detail)
        detail = f"{code}: {message}" if message else code
        if code in RETRYABLE_CODES or code in STREAM_ERROR_CODES:
            return ProviderUnavailable(PROVIDER, detail)
        return ProviderError(PROVIDER, detail)
    if isinstance(exc, ReadTimeoutError):
        return ProviderTimeout(PROVIDER, "the endpoint stopped answering (read timeout)")
    if isinstance(exc, ConnectTimeoutError | EndpointConnectionError):
        return ProviderUnavailable(PROVIDER, f"cannot reach the endpoint: {exc}")
    if isinstance(exc, NoCredentialsError):
        return ProviderError(
            PROVIDER, "no AWS credentials (set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
        )
    if isinstance(exc, BotoCoreError):
        return ProviderUnavailable(PROVIDER, f"{type(exc).__name__}: {exc}")
    return ProviderError(PROVIDER, f"{type(exc).__name__}: {exc}")


class SageMakerTransport:
    """The two SageMaker runtime calls, one aiobotocore client per event loop (made on first use)."""

    provider = PROVIDER

    def __init__(self, settings: TtsSettings) -> None:
        self._settings = settings
        self.endpoint = f"{PROVIDER}:{settings.endpoint_name}"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._stack: AsyncExitStack | None = None
        self._client: Any = None

    async def client(self) -> Any:
        """The ``sagemaker-runtime`` client for the running loop."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._lock is None:
            self._loop, self._lock, self._client, self._stack = loop, asyncio.Lock(), None, None
        async with self._lock:
            if self._client is None:
                stack = AsyncExitStack()
                self._client = await stack.enter_async_context(
                    get_session().create_client(
                        "sagemaker-runtime",
                        region_name=self._settings.region,
                        endpoint_url=self._settings.endpoint_url,
                        config=client_config(self._settings),
                    )
                )
                trace_context.register(self._client)
                self._stack = stack
            return self._client

    async def invoke(self, body: bytes) -> tuple[bytes, str | None]:
        client = await self.client()
        try:
            response = await client.invoke_endpoint(
                EndpointName=self._settings.endpoint_name,
                Body=body,
                ContentType="application/json",
                Accept="audio/wav",
                CustomAttributes=CUSTOM_ATTRIBUTES,
            )
            async with response["Body"] as stream:
                data: bytes = await stream.read()
        except (ClientError, BotoCoreError) as exc:
            raise map_error(exc) from exc
        return data, response.get("ContentType")

    async def open_stream(self, body: bytes) -> tuple[str | None, AsyncIterator[bytes]]:
        client = await self.client()
        try:
            response = await client.invoke_endpoint_with_response_stream(
                EndpointName=self._settings.endpoint_name,
                Body=body,
                ContentType="application/json",
                Accept="audio/pcm",
                CustomAttributes=CUSTOM_ATTRIBUTES,
            )
        except (ClientError, BotoCoreError) as exc:
            raise map_error(exc) from exc
        return response.get("ContentType"), _payload_parts(response["Body"])

    async def aclose(self) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None and self._loop is asyncio.get_running_loop():
            await stack.aclose()


async def _payload_parts(events: Any) -> AsyncIterator[bytes]:
    """The bytes of each ``PayloadPart``; stream errors (raised by the SDK, or seen as events) are mapped."""
    try:
        async for event in events:
            part = event.get("PayloadPart")
            if part is not None:
                yield part.get("Bytes", b"")
                continue
            for code in STREAM_ERROR_CODES:
                if code in event:
                    raise ProviderUnavailable(PROVIDER, f"{code}: {event[code].get('Message', '')}")
    except (ClientError, BotoCoreError) as exc:
        raise map_error(exc) from exc
    finally:
        events.close()


class SageMakerTTS(CloneTTS):
    """``TextToSpeech`` with enrolled voices, synthesized on a SageMaker endpoint. See ``CloneTTS``."""

    def __init__(
        self,
        settings: TtsSettings,
        store: VoiceStore,
        breaker: CircuitBreaker | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(settings, store, SageMakerTransport(settings), breaker, clock=clock)
