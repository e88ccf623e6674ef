"""Cloned-voice speech over the Qwen3-TTS speech API: voices, pipelining, retries. Vendor-neutral.

``CloneTTS`` implements the ``TextToSpeech`` port on top of a ``SpeechTransport`` (SageMaker runtime, or
plain HTTP to a self-hosted vLLM-Omni). It

- resolves a voice name through the ``VoiceStore`` and keeps its reference clip as a data URI, built once
  per clip (keyed by its sha256) so every request carries the byte-identical string;
- cuts text into sentence requests (very short sentences merged), runs up to ``pipeline_depth`` of them at
  once and yields their audio strictly in order;
- retries a sentence under ``agent.adapters.retry`` while none of its audio has been yielded; a stream
  that breaks before that is re-sent without streaming; after that, the failure is final.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, AsyncIterator
from typing import Protocol

from agent.adapters.retry import Attempts, RetryPolicy
from agent.adapters.tts_requests import (
    MODEL_RATE,
    CloneVoice,
    PcmAligner,
    SseAudioDecoder,
    looks_like_sse,
    model_language,
    parse_wav,
    speech_payload,
    split_text,
    wav_data_uri,
)
from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.config import TtsSettings
from agent.errors import AudioFormatError, ProviderError, ProviderUnavailable, VoiceRequired
from agent.ports import Voice, VoiceStore

log = logging.getLogger(__name__)


class SpeechTransport(Protocol):
    """One speech request, vendor-specific. Failures are mapped to ``agent.errors`` here.

    Retryable failures (overload, throttling, not ready, a 5xx of the model, a broken connection) raise
    ``ProviderUnavailable``; request errors raise ``ProviderError``; a read timeout ``ProviderTimeout``.
    """

    provider: str

    async def invoke(self, body: bytes) -> tuple[bytes, str | None]:
        """Send ``body`` and return the whole response body and its content type."""
        ...

    async def open_stream(self, body: bytes) -> tuple[str | None, AsyncIterator[bytes]]:
        """Send ``body`` for a streamed answer: its content type and its bytes, in parts of any size.

        Iterating may raise like ``invoke`` when the stream breaks; closing the iterator releases it.
        """
        ...

    async def aclose(self) -> None: ...


class _Slot:
    """The audio of one sentence request, produced by a worker, consumed in order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.queue: asyncio.Queue[bytes | ProviderError | None] = asyncio.Queue()
        self.taken = False  # some of its audio went to the caller: it can no longer be re-sent

    def retract(self) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()


class _StreamBroke(Exception):
    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error


class CloneTTS:
    """``TextToSpeech`` with enrolled (cloned) voices. ``sample_rate`` is 24000. Call ``aclose()`` at the end."""

    def __init__(self, settings: TtsSettings, store: VoiceStore, transport: SpeechTransport) -> None:
        self._settings = settings
        self._store = store
        self._transport = transport
        self._policy = RetryPolicy(
            max_attempts=settings.max_attempts,
            base_delay_s=settings.retry_base_s,
            max_delay_s=settings.retry_max_s,
            deadline_s=settings.deadline_s,
        )
        self._uris: dict[str, str] = {}  # sha256 of the clip -> its data URI
        self._voices: dict[str, CloneVoice] = {}

    @property
    def provider(self) -> str:
        return self._transport.provider

    @property
    def sample_rate(self) -> int:
        return MODEL_RATE

    async def resolve_voice(self, name: str | None) -> str:
        """Load ``name`` (``None``: ``AGENT_TTS__DEFAULT_VOICE``) from the voice store.

        Raises ``UnknownVoice`` if it is not enrolled (``VoiceRequired``, a subclass, if no voice was named and
        there is no default) and ``ProviderError`` if the store fails.
        """
        chosen = name or self._settings.default_voice
        if not chosen:
            raise VoiceRequired()
        self._voices[chosen] = self._prepare(await self._store.get(chosen))
        return chosen

    def _prepare(self, voice: Voice) -> CloneVoice:
        record = voice.record
        uri = self._uris.get(record.sha256)
        if uri is None:
            uri = self._uris[record.sha256] = wav_data_uri(voice.wav)
        language = model_language(self._settings.language or record.language)
        return CloneVoice(name=record.name, ref_audio=uri, ref_text=record.transcript, language=language)

    async def _voice(self, name: str) -> CloneVoice:
        voice = self._voices.get(name)
        if voice is None:
            await self.resolve_voice(name)
            voice = self._voices[name]
        return voice

    def synthesize(self, text: str, voice: str) -> AsyncIterator[bytes]:
        """Yield PCM16LE mono at 24 kHz for ``text`` in ``voice``, one request per sentence, in order.

        Raises ``UnknownVoice`` for a voice that is not enrolled, ``ProviderTimeout`` when a sentence has no
        audio within ``deadline_s`` (retries included), ``ProviderError`` (or ``ProviderUnavailable``) when the
        service fails for good. Closing the iterator early cancels the requests in flight.
        """
        return self.synthesize_stream(_one(text), voice)

    async def synthesize_stream(self, texts: AsyncIterable[str], voice: str) -> AsyncIterator[bytes]:
        """Like ``synthesize`` for text arriving over time (a reply's sentences): up to ``pipeline_depth``
        sentence requests run ahead of the one being heard, and audio comes out in text order."""
        clone = await self._voice(voice)
        slots: asyncio.Queue[_Slot | BaseException | None] = asyncio.Queue()
        room = asyncio.Semaphore(self._settings.pipeline_depth)
        workers: list[asyncio.Task[None]] = []

        async def feed() -> None:
            try:
                async for text in texts:
                    for piece in split_text(
                        text, min_chars=self._settings.merge_below_chars, max_chars=self._settings.max_request_chars
                    ):
                        await room.acquire()
                        slot = _Slot(piece)
                        workers.append(asyncio.create_task(self._produce(slot, clone), name="tts-sentence"))
                        slots.put_nowait(slot)
                slots.put_nowait(None)
            except Exception as exc:  # the text source failed: let the consumer raise it
                slots.put_nowait(exc)

        feeder = asyncio.create_task(feed(), name="tts-feed")
        try:
            while (slot := await slots.get()) is not None:
                if isinstance(slot, BaseException):
                    raise slot
                try:
                    while (item := await slot.queue.get()) is not None:
                        if isinstance(item, ProviderError):
                            raise item
                        slot.taken = True
                        yield item
                finally:
                    room.release()
        finally:
            feeder.cancel()
            for worker in workers:
                worker.cancel()

    async def _produce(self, slot: _Slot, voice: CloneVoice) -> None:
        try:
            await self._speak(slot, voice)
            slot.queue.put_nowait(None)
        except ProviderError as exc:
            slot.queue.put_nowait(exc)
        except AudioFormatError as exc:
            slot.queue.put_nowait(ProviderError(self.provider, f"unreadable audio: {exc}"))

    async def _speak(self, slot: _Slot, voice: CloneVoice) -> None:
        attempts = Attempts(self._policy, self.provider)
        streaming = self._settings.streaming
        while True:
            try:
                try:
                    async with attempts.time_left() as timeout:
                        if streaming:
                            await self._stream_once(slot, voice, timeout)
                        else:
                            slot.queue.put_nowait(await self._invoke_once(slot.text, voice))
                    return
                except TimeoutError:
                    raise attempts.timed_out() from None
            except _StreamBroke as broke:
                if slot.taken:
                    raise broke.error from None  # the caller heard part of it: re-sending would repeat it
                slot.retract()
                log.info("%s: stream broke (%s); re-sending the sentence without streaming", self.provider, broke)
                streaming = False
                error = broke.error
                if not isinstance(error, ProviderUnavailable):  # one more try without streaming is always worth it
                    error = ProviderUnavailable(self.provider, error.detail)
                await attempts.before_retry(error)
            except ProviderError as exc:
                if slot.taken:
                    raise
                slot.retract()
                await attempts.before_retry(exc)

    async def _invoke_once(self, text: str, voice: CloneVoice) -> bytes:
        body = speech_payload(text, voice, voice.language, stream=False)
        data, _content_type = await self._transport.invoke(body)
        pcm, rate = parse_wav(data)
        if rate != MODEL_RATE:
            pcm = float_to_pcm16(resample(pcm16_to_float(pcm), rate, MODEL_RATE))
        return pcm

    async def _stream_once(self, slot: _Slot, voice: CloneVoice, deadline: asyncio.Timeout) -> None:
        body = speech_payload(slot.text, voice, voice.language, stream=True)
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
                    slot.queue.put_nowait(pcm)
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


async def _one(text: str) -> AsyncIterator[str]:
    yield text
