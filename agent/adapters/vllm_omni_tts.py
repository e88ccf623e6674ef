"""Cloned voices from a self-hosted vLLM-Omni server (``vllm serve Qwen/Qwen3-TTS-12Hz-1.7B-Base --omni``).

The same requests as the SageMaker backend, posted straight to ``{base_url}/v1/audio/speech`` over plain
HTTP (aiohttp), for users running the model on their own GPU. Streaming reads the chunked response as it
arrives. Errors: a 429 or 5xx answer, or a refused connection, is ``ProviderUnavailable`` (retried by
``CloneTTS``); any other 4xx is ``ProviderError``; a read timeout is ``ProviderTimeout``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import aiohttp

from agent.adapters.clone_tts import CloneTTS
from agent.adapters.tts_requests import SPEECH_ROUTE
from agent.config import TtsSettings
from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.ports import VoiceStore
from agent.work.resilience import CircuitBreaker

PROVIDER = "vllm-omni"


def _status_error(status: int, text: str) -> ProviderError:
    detail = f"HTTP {status}: {text[:500]}"
    if status == 429 or status >= 500:
        return ProviderUnavailable(PROVIDER, detail)
    return ProviderError(PROVIDER, detail)


def _map(exc: BaseException) -> ProviderError:
    if isinstance(exc, aiohttp.ServerTimeoutError | asyncio.TimeoutError):
        return ProviderTimeout(PROVIDER, "the server stopped answering (read timeout)")
    return ProviderUnavailable(PROVIDER, f"{type(exc).__name__}: {exc}")


class VllmOmniTransport:
    """``POST {base_url}/v1/audio/speech``; one aiohttp session per event loop (made on first use)."""

    provider = PROVIDER

    def __init__(self, settings: TtsSettings) -> None:
        self._settings = settings
        self._url = settings.base_url.rstrip("/") + SPEECH_ROUTE
        self.endpoint = f"{PROVIDER}:{settings.base_url.rstrip('/')}"
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            headers = {"Content-Type": "application/json"}
            if self._settings.api_key is not None:
                headers["Authorization"] = f"Bearer {self._settings.api_key.get_secret_value()}"
            self._session = aiohttp.ClientSession(
                headers=headers,
                timeout=aiohttp.ClientTimeout(
                    sock_connect=self._settings.connect_timeout_s, sock_read=self._settings.read_timeout_s
                ),
                connector=aiohttp.TCPConnector(limit=self._settings.max_pool_connections),
            )
            self._loop = loop
        return self._session

    async def invoke(self, body: bytes) -> tuple[bytes, str | None]:
        try:
            async with self._client().post(self._url, data=body) as response:
                data = await response.read()
                if response.status >= 400:
                    raise _status_error(response.status, data.decode("utf-8", "replace"))
                return data, response.content_type
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _map(exc) from exc

    async def open_stream(self, body: bytes) -> tuple[str | None, AsyncIterator[bytes]]:
        try:
            response = await self._client().post(self._url, data=body)
            if response.status >= 400:
                text = await response.text(errors="replace")
                response.release()
                raise _status_error(response.status, text)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _map(exc) from exc
        return response.content_type, _chunks(response)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.close()


async def _chunks(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    try:
        async for data in response.content.iter_any():
            yield data
    except (TimeoutError, aiohttp.ClientError) as exc:
        raise _map(exc) from exc
    finally:
        response.release()


class VllmOmniTTS(CloneTTS):
    """``TextToSpeech`` with enrolled voices on a vLLM-Omni server at ``base_url``. See ``CloneTTS``."""

    def __init__(
        self,
        settings: TtsSettings,
        store: VoiceStore,
        breaker: CircuitBreaker | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(settings, store, VllmOmniTransport(settings), breaker, clock=clock)
