"""Cloned-voice speech over the Qwen3-TTS speech API: voices, consent, retries, recovery. Vendor-neutral.

``CloneTTS`` implements the ``TextToSpeech`` port on top of a ``SpeechTransport`` (SageMaker runtime, or
plain HTTP to a self-hosted vLLM-Omni). It

- resolves a voice name of a tenant to the handle ``"{tenant}/{name}"`` through ``CloneVoices`` (consent
  checked; a voice in use is looked up again every ``VOICE_RECHECK_S``);
- cuts text into request-sized pieces (very short sentences merged) and speaks them one after the other
  (the reply's sentences are pipelined by the runtime's ``TurnSpeech``, not here);
- retries a piece under ``agent.adapters.retry``, each retry paid from the reply's ``RetryBudget``; a stream
  that breaks before its first audio is re-sent without streaming; one that breaks *after* audio reached the
  caller is re-requested without streaming and continues from the sample already sent (no error for the
  caller: a log line and the endpoint's recovered-faults count). With a sampling model the regenerated audio
  is not bit-identical, so the seam may clip or repeat a fraction of a syllable;
- asks the endpoint's ``CircuitBreaker`` before every attempt: while it is open, ``synthesize`` raises
  ``CircuitOpen`` at once;
- writes one audit line per synthesis request on the ``agent.audit`` logger (tenant, voice, characters,
  backend; never the text or the audio).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Protocol

from agent.adapters.clone_voices import CloneVoices
from agent.adapters.endpoint_slots import EndpointSlots
from agent.adapters.retry import Attempts, RetryPolicy
from agent.adapters.tts_requests import (
    MODEL_RATE,
    CloneVoice,
    PcmAligner,
    SseAudioDecoder,
    looks_like_sse,
    parse_wav,
    request_language,
    speech_payload,
    split_text,
)
from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.config import TtsSettings
from agent.errors import (
    AudioFormatError,
    CircuitOpen,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from agent.ports import URGENT, JobInfo, Retries, VoiceStore
from agent.work.resilience import CircuitBreaker, RetryBudget

log = logging.getLogger(__name__)
audit = logging.getLogger("agent.audit")


class SpeechTransport(Protocol):
    """One speech request, vendor-specific. Failures are mapped to ``agent.errors`` here.

    Retryable failures (overload, throttling, not ready, a 5xx of the model, a broken connection) raise
    ``ProviderUnavailable``; request errors raise ``ProviderError``; a read timeout ``ProviderTimeout``.
    ``endpoint`` names the endpoint (its circuit breaker's name).
    """

    provider: str

    @property
    def endpoint(self) -> str: ...

    async def invoke(self, body: bytes) -> tuple[bytes, str | None]:
        """Send ``body`` and return the whole response body and its content type."""
        ...

    async def open_stream(self, body: bytes) -> tuple[str | None, AsyncIterator[bytes]]:
        """Send ``body`` for a streamed answer: its content type and its bytes, in parts of any size.

        Iterating may raise like ``invoke`` when the stream breaks; closing the iterator releases it.
        """
        ...

    async def aclose(self) -> None: ...


class _StreamBroke(Exception):
    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error


def new_breaker(settings: TtsSettings, endpoint: str, clock: Callable[[], float] = time.monotonic) -> CircuitBreaker:
    """The circuit breaker of one endpoint, from ``breaker_failures`` and ``breaker_reset_s``."""
    return CircuitBreaker(endpoint, settings.breaker_failures, settings.breaker_reset_s, clock)


class CloneTTS:
    """``TextToSpeech`` with enrolled (cloned) voices. ``sample_rate`` is 24000. Call ``aclose()`` at the end.

    ``breaker`` is the endpoint's circuit breaker (default: a new one from the settings); ``breaker.status()``
    is what ``/metrics`` and ``/healthz`` show. ``clock`` (monotonic seconds) times the voice re-checks.

    At most ``endpoint_concurrency`` requests are in flight server-wide (``slots``); when more are wanted, a
    caller's first sentence is sent before other callers' later sentences (``agent.work.scheduling``).
    """

    def __init__(
        self,
        settings: TtsSettings,
        store: VoiceStore,
        transport: SpeechTransport,
        breaker: CircuitBreaker | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._transport = transport
        self._voices = CloneVoices(settings, store, clock)
        self.breaker = breaker if breaker is not None else new_breaker(settings, transport.endpoint, clock)
        self.slots = EndpointSlots(settings.endpoint_concurrency or settings.max_pool_connections, transport.provider)
        self._policy = RetryPolicy(
            max_attempts=settings.max_attempts,
            base_delay_s=settings.retry_base_s,
            max_delay_s=settings.retry_max_s,
            deadline_s=settings.deadline_s,
        )

    @property
    def provider(self) -> str:
        return self._transport.provider

    @property
    def sample_rate(self) -> int:
        return MODEL_RATE

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        """Load ``name`` (``None``: ``AGENT_TTS__DEFAULT_VOICE``) of ``tenant``; return ``"{tenant}/{name}"``.

        Raises ``UnknownVoice`` for a voice the tenant does not have or whose consent record does not cover
        its reference audio and tenant (see ``CloneVoices.resolve``), ``ProviderError`` if the store fails.
        """
        return await self._voices.resolve(name, tenant)

    async def synthesize(
        self,
        text: str,
        voice: str,
        budget: Retries | None = None,
        job: JobInfo | None = None,
        language: str | None = None,
    ) -> AsyncIterator[bytes]:
        """Yield PCM16LE mono at 24 kHz for ``text`` in ``voice`` (a handle), one request per piece, in order.

        The requests say ``text`` is in ``language`` (an ``agent.languages`` code); ``None``: the voice's language
        (``AGENT_TTS__LANGUAGE``, else the one it was enrolled in). See ``request_language``.

        Raises ``UnknownVoice`` for a voice that is not (or no longer validly) enrolled, ``CircuitOpen`` while
        the endpoint's breaker is open, ``ProviderTimeout`` when a piece has no audio within ``deadline_s``
        (retries included), ``ProviderError`` (or ``ProviderUnavailable``) when the service fails for good.
        Closing the iterator early closes the request in flight.
        """
        clone = await self._voices.get(voice)
        pieces = split_text(
            text, min_chars=self._settings.merge_below_chars, max_chars=self._settings.max_request_chars
        )
        if not pieces:
            return
        audit.info(
            "synthesis tenant=%s voice=%s characters=%d backend=%s", clone.tenant, clone.name, len(text), self.provider
        )
        retries = budget if budget is not None else RetryBudget(self._settings.turn_retry_budget)
        info = job if job is not None else URGENT
        spoken = request_language(language, clone)
        for piece in pieces:
            async with (
                self.slots.slot(info, len(piece)),
                aclosing(self._speak(piece, clone, retries, spoken)) as audio,
            ):
                async for pcm in audio:
                    yield pcm

    def _admit(self) -> None:
        if not self.breaker.allow():
            status = self.breaker.status()
            wait = f"; next try in {status.retry_after_s:.0f} s" if status.retry_after_s is not None else ""
            raise CircuitOpen(self.provider, f"{self.breaker.name} failed repeatedly{wait}")

    async def _speak(self, text: str, voice: CloneVoice, budget: Retries, language: str) -> AsyncGenerator[bytes, None]:
        """One piece, with retries. ``sent`` counts the bytes the caller already has: a re-request after a
        broken stream skips them."""
        attempts = Attempts(self._policy, self.provider, budget)
        streaming = self._settings.streaming
        sent = 0
        failed = 0  # attempts of this piece that failed
        while True:
            self._admit()
            judged = False
            try:
                if streaming:
                    try:
                        async with (
                            attempts.time_left() as deadline,
                            aclosing(self._stream_once(text, voice, deadline, language)) as stream,
                        ):
                            async for pcm in stream:
                                if not judged:  # audio is coming: the endpoint works
                                    judged = True
                                    self.breaker.success()
                                sent += len(pcm)
                                yield pcm
                    except TimeoutError:
                        raise attempts.timed_out() from None
                else:
                    try:
                        async with attempts.time_left():
                            pcm = await self._invoke_once(text, voice, language)
                    except TimeoutError:
                        raise attempts.timed_out() from None
                    judged = True
                    self.breaker.success()
                    if len(pcm) > sent:
                        yield pcm[sent:]
                if failed:
                    self.breaker.recovered()
                    log.info("%s: recovered after %d failed attempt(s) of a sentence", self.provider, failed)
                return
            except _StreamBroke as broke:
                judged = True
                self.breaker.failure()
                failed += 1
                streaming = False
                if sent:  # the caller has part of it: re-request it whole, then continue where it broke
                    log.warning(
                        "%s: stream broke after %.2f s of audio (%s); re-requesting the sentence without streaming",
                        self.provider,
                        sent / 2 / MODEL_RATE,
                        broke,
                    )
                    attempts = Attempts(self._policy, self.provider, budget)  # a fresh deadline to first audio
                    if not budget.take():
                        raise broke.error from None
                    continue
                log.info("%s: stream broke (%s); re-sending the sentence without streaming", self.provider, broke)
                error = broke.error
                if not isinstance(error, ProviderUnavailable):  # one more try without streaming is always worth it
                    error = ProviderUnavailable(self.provider, error.detail)
                await attempts.before_retry(error)
            except ProviderError as exc:
                if not judged:
                    judged = True
                    if isinstance(exc, ProviderUnavailable | ProviderTimeout):
                        self.breaker.failure()
                    else:
                        self.breaker.success()  # the endpoint answered; the request was wrong
                failed += 1
                await attempts.before_retry(exc)
            finally:
                if not judged:  # cancelled or closed before a verdict
                    self.breaker.abandon()

    async def _invoke_once(self, text: str, voice: CloneVoice, language: str) -> bytes:
        body = speech_payload(text, voice, language, stream=False)
        data, _content_type = await self._transport.invoke(body)
        try:
            pcm, rate = parse_wav(data)
        except AudioFormatError as exc:
            raise ProviderUnavailable(self.provider, f"unreadable audio: {exc}") from exc
        if rate != MODEL_RATE:
            pcm = float_to_pcm16(resample(pcm16_to_float(pcm), rate, MODEL_RATE))
        return pcm

    async def _stream_once(
        self, text: str, voice: CloneVoice, deadline: asyncio.Timeout, language: str
    ) -> AsyncGenerator[bytes, None]:
        body = speech_payload(text, voice, language, stream=True)
        content_type, parts = await self._transport.open_stream(body)
        aligner = PcmAligner()
        sse: SseAudioDecoder | None = None
        first = True
        try:
            async for part in parts:
                if first and part:
                    first = False
                    if looks_like_sse(content_type, part):
                        sse = SseAudioDecoder(self.provider)
                pcm = aligner.push(sse.push(part) if sse is not None else part)
                if pcm:
                    deadline.reschedule(None)  # the deadline is for the first audio, not the whole sentence
                    yield pcm
        except ProviderError as exc:
            raise _StreamBroke(exc) from exc
        finally:
            close = getattr(parts, "aclose", None)
            if close is not None:
                await close()
        if first:
            raise _StreamBroke(ProviderError(self.provider, "the speech stream ended without audio"))
        if sse is not None and not sse.done:
            raise _StreamBroke(ProviderError(self.provider, "the speech stream ended before speech.audio.done"))

    async def aclose(self) -> None:
        """Close connections (call it on the loop that used the adapter)."""
        await self._transport.aclose()
