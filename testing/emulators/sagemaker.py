"""A local SageMaker runtime in front of an emulated vLLM-Omni Qwen3-TTS container, for tests and offline use.

It speaks the real wire protocol, so the production adapter (aiobotocore, ``endpoint_url``) cannot tell:

- ``POST /endpoints/{name}/invocations`` (InvokeEndpoint): a WAV (or raw PCM) per request;
- ``POST /endpoints/{name}/invocations-response-stream`` (InvokeEndpointWithResponseStream): AWS event-stream
  ``PayloadPart`` frames of raw PCM (cut at odd byte offsets, as SageMaker may), or SSE when asked;
- ``X-Amzn-SageMaker-Custom-Attributes`` routing: without ``route=/v1/audio/speech`` the container's
  completions handler rejects the body → ``ModelError`` 424 with ``OriginalStatusCode`` 400;
- the speech API's validation (Base needs ``ref_audio`` and ``ref_text``; language names; data URIs;
  empty input; stream formats), container errors wrapped as ``ModelError`` with ``x-amzn-ErrorType``;
- injectable latency (time to first audio, real-time factor) and faults, each for the next N requests:
  ``throttling``, ``unavailable`` (503), ``internal`` (500), ``not_ready`` (429 ModelNotReadyException),
  ``model_error_500``, ``model_error_400``, ``validation``, ``hang``, ``stream_error`` (ModelStreamError
  before any audio) and ``mid_stream`` (ModelStreamError after ``break_after_parts`` audio parts, 1 by default).

Its limits and names are its own, copied from the endpoint's documentation
(``shared/reference/qwen3-tts-sagemaker.md``), never imported from the adapter it certifies.

It also serves ``POST /v1/audio/speech`` directly, as the bare vLLM-Omni server does (for the ``vllm-omni``
backend). Audio is the local Piper voice resampled to 24 kHz, cached per text, so a test can compare what
it got with ``await emulator.audio(text)`` or transcribe it. Every request is recorded (``requests``).

Control it from Python (``emulator.fail_next("unavailable", 2)``, ``emulator.ttfa_ms = 150``) or over HTTP:
``POST /_emulator/faults {"kind": "throttling", "count": 2}`` (``"after_parts": N`` for ``mid_stream``),
``POST /_emulator/latency {"ttfa_ms": 150, "rtf": 0.3}``, ``GET /_emulator/requests``,
``DELETE /_emulator/requests``.

Run it: ``python -m testing.emulators.sagemaker --port 8080 --ttfa-ms 150 --rtf 0.3``.

This module is the server (routes, faults, pacing, control); what the services say on the wire (limits,
validation, answer bodies) is in ``testing.emulators.sagemaker_api``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.audio.wav import wav_bytes
from agent.ports import ConsentRecord, TextToSpeech, Voice, VoiceRecord
from testing.emulators import eventstream
from testing.emulators import sagemaker_api as api
from testing.emulators.sagemaker_api import FAULTS, MAX_BODY_BYTES, MODEL_RATE, Recorded

log = logging.getLogger(__name__)


@dataclass
class SageMakerEmulator:
    """The emulator. ``async with SageMakerEmulator(tts) as emu:`` then point clients at ``emu.url``."""

    tts: TextToSpeech
    voice: str = "local-preview"
    ttfa_ms: float = 0.0
    rtf: float = 0.0
    chunk_ms: int = 80
    force_sse: bool = False
    misalign: bool = True
    hang_s: float = 120.0
    break_after_parts: int = 1
    """``mid_stream`` faults: audio parts sent before the stream breaks."""
    requests: list[Recorded] = field(default_factory=list)
    _faults: deque[str] = field(default_factory=deque)
    _cache: dict[str, bytes] = field(default_factory=dict)
    _making: dict[str, asyncio.Lock] = field(default_factory=dict)
    _runner: web.AppRunner | None = None
    _closing: asyncio.Event | None = None
    url: str = ""

    # ----- control ------------------------------------------------------------------------------------------
    def fail_next(self, kind: str, count: int = 1) -> None:
        """Make the next ``count`` speech requests fail with ``kind`` (one of ``FAULTS``)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {FAULTS}")
        self._faults.extend([kind] * count)

    def clear_faults(self) -> None:
        self._faults.clear()

    async def audio(self, text: str) -> bytes:
        """The PCM16 at 24 kHz the emulator answers for ``text`` (synthesized once, then cached).

        Once even when two requests for the same text arrive together: the voice (Piper) draws its noise anew on
        every synthesis, so a second synthesis would answer one request with audio the cache does not hold."""
        async with self._making.setdefault(text, asyncio.Lock()):
            if text not in self._cache:
                chunks = [chunk async for chunk in self.tts.synthesize(text, self.voice)]
                pcm = b"".join(chunks)
                self._cache[text] = (
                    float_to_pcm16(resample(pcm16_to_float(pcm), self.tts.sample_rate, MODEL_RATE)) if pcm else b""
                )
        return self._cache[text]

    # ----- lifecycle ----------------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        app = web.Application(client_max_size=MAX_BODY_BYTES * 2)
        app.router.add_post("/endpoints/{name}/invocations", self._invoke)
        app.router.add_post("/endpoints/{name}/invocations-response-stream", self._invoke_stream)
        app.router.add_post("/v1/audio/speech", self._direct)
        app.router.add_post("/_emulator/faults", self._control_faults)
        app.router.add_post("/_emulator/latency", self._control_latency)
        app.router.add_get("/_emulator/requests", self._control_requests)
        app.router.add_delete("/_emulator/requests", self._control_clear)
        self._closing = asyncio.Event()
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        sockets = self._runner.addresses
        actual_port = sockets[0][1]
        self.url = f"http://{host}:{actual_port}"
        return self.url

    async def close(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> SageMakerEmulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- SageMaker runtime --------------------------------------------------------------------------------
    async def _invoke(self, request: web.Request) -> web.StreamResponse:
        return await self._sagemaker(request, streaming=False)

    async def _invoke_stream(self, request: web.Request) -> web.StreamResponse:
        return await self._sagemaker(request, streaming=True)

    async def _sagemaker(self, request: web.Request, *, streaming: bool) -> web.StreamResponse:
        raw = await request.read()
        record = Recorded(
            path=request.path,
            endpoint=request.match_info["name"],
            streaming=streaming,
            headers=dict(request.headers),
            body=api.json_or_none(raw),
            body_bytes=len(raw),
            received_at=time.perf_counter(),
        )
        self.requests.append(record)
        if len(raw) > MAX_BODY_BYTES:
            return api.aws_error(
                record, 400, "ValidationError", f"Request body size {len(raw)} exceeds {MAX_BODY_BYTES}"
            )
        fault = self._faults.popleft() if self._faults else None
        record.fault = fault
        if fault is not None and (response := await self._service_fault(record, fault)) is not None:
            return response
        match = api.ROUTE.search(request.headers.get("X-Amzn-SageMaker-Custom-Attributes", ""))
        route = match.group(1) if match else None
        if route != "/v1/audio/speech":
            reject = (
                api.Reject(400, "Either prompt or messages must be provided (completions handler)")
                if route is None
                else api.Reject(404, "Not Found", "NotFoundError")
            )
            return api.model_error(record, reject)
        try:
            speech = api.validate(record.body, streaming_call=streaming)
        except api.Reject as reject:
            return api.model_error(record, reject)
        pcm = await self.audio(speech["input"])
        if not streaming or not speech.get("stream"):
            await self._pace_whole(record, pcm)
            return api.audio_response(record, pcm, speech, sagemaker=True)
        return await self._stream_events(request, record, pcm, speech, fault)

    async def _service_fault(self, record: Recorded, fault: str) -> web.StreamResponse | None:
        if fault == "throttling":
            return api.aws_error(record, 400, "ThrottlingException", None)
        if fault == "unavailable":
            return api.aws_error(record, 503, "ServiceUnavailable", "Service is unavailable. Try your call again.")
        if fault == "internal":
            return api.aws_error(record, 500, "InternalFailure", "An internal failure occurred.")
        if fault == "not_ready":
            return api.aws_error(record, 429, "ModelNotReadyException", "Model is not ready. Try again later.")
        if fault == "validation":
            return api.aws_error(record, 400, "ValidationError", "Endpoint qwen3-tts-voice-clone not found.")
        if fault == "model_error_500":
            return api.model_error(
                record, api.Reject(500, "Speech generation failed: CUDA error", "InternalServerError")
            )
        if fault == "model_error_400":
            return api.model_error(record, api.Reject(400, "Speech generation failed: bad request"))
        if fault == "hang":
            assert self._closing is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.hang_s)
            return api.aws_error(record, 500, "InternalFailure", "hung")
        return None  # stream faults happen later

    async def _stream_events(
        self, request: web.Request, record: Recorded, pcm: bytes, speech: dict[str, Any], fault: str | None
    ) -> web.StreamResponse:
        sse = self.force_sse or speech.get("stream_format") == "sse"
        response = web.StreamResponse(
            headers={
                "Content-Type": "application/vnd.amazon.eventstream",
                "X-Amzn-SageMaker-Content-Type": "text/event-stream" if sse else "audio/pcm",
                "x-Amzn-Invoked-Production-Variant": "AllTraffic",
            }
        )
        await response.prepare(request)
        if fault == "stream_error":
            await response.write(api.stream_exception("ModelStreamError", "StreamBroken"))
            return response
        chunks = api.chunks(pcm, self.chunk_ms)
        for index, chunk in enumerate(chunks):
            await self._pace_chunk(record, index)
            if index == max(1, self.break_after_parts) and fault == "mid_stream":
                await response.write(api.stream_exception("ModelStreamError", "StreamBroken"))
                return response
            if record.first_audio_at is None:
                record.first_audio_at = time.perf_counter()
            if sse:
                await response.write(eventstream.event("PayloadPart", api.sse_delta(chunk), "application/octet-stream"))
            else:
                for part in api.misaligned(chunk) if self.misalign else [chunk]:
                    await response.write(eventstream.event("PayloadPart", part, "application/octet-stream"))
        if sse:
            done = b'event: speech.audio.done\ndata: {"type": "speech.audio.done", "usage": {}}\n\n'
            await response.write(eventstream.event("PayloadPart", done, "application/octet-stream"))
        await response.write_eof()
        return response

    async def _pace_chunk(self, record: Recorded, index: int) -> None:
        due = record.received_at + self.ttfa_ms / 1000 + index * self.chunk_ms / 1000 * self.rtf
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)

    async def _pace_whole(self, record: Recorded, pcm: bytes) -> None:
        seconds = len(pcm) / 2 / MODEL_RATE
        delay = record.received_at + self.ttfa_ms / 1000 + seconds * self.rtf - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        record.first_audio_at = time.perf_counter()

    # ----- the container's speech API -------------------------------------------------------------------------

    async def _direct(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/audio/speech`` as the bare vLLM-Omni server answers it (no SageMaker in front)."""
        raw = await request.read()
        record = Recorded(
            request.path, None, True, dict(request.headers), api.json_or_none(raw), len(raw), time.perf_counter()
        )
        self.requests.append(record)
        fault = self._faults.popleft() if self._faults else None
        record.fault = fault
        if fault in ("unavailable", "internal", "model_error_500", "not_ready", "throttling"):
            record.status = 503
            return web.json_response(
                api.Reject(503, "Service unavailable", "ServiceUnavailableError").body(), status=503
            )
        try:
            speech = api.validate(record.body, streaming_call=True)
            if fault in ("model_error_400", "validation"):
                raise api.Reject(400, "Speech generation failed: bad request")
        except api.Reject as reject:
            record.status = reject.status
            return web.json_response(reject.body(), status=reject.status)
        pcm = await self.audio(speech["input"])
        if not speech.get("stream"):
            await self._pace_whole(record, pcm)
            return api.audio_response(record, pcm, speech, sagemaker=False)
        sse = self.force_sse or speech.get("stream_format") == "sse"
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream" if sse else "audio/pcm"})
        await response.prepare(request)
        for index, chunk in enumerate(api.chunks(pcm, self.chunk_ms)):
            await self._pace_chunk(record, index)
            if fault in ("mid_stream", "stream_error") and index == (
                max(1, self.break_after_parts) if fault == "mid_stream" else 0
            ):
                assert request.transport is not None
                request.transport.abort()  # the generator failed after the 200: the connection is cut
                return response
            if record.first_audio_at is None:
                record.first_audio_at = time.perf_counter()
            await response.write(api.sse_delta(chunk) if sse else chunk)
        if sse:
            await response.write(b'event: speech.audio.done\ndata: {"type": "speech.audio.done"}\n\n')
        await response.write_eof()
        return response

    # ----- control API ----------------------------------------------------------------------------------------
    async def _control_faults(self, request: web.Request) -> web.Response:
        body = await request.json()
        try:
            self.fail_next(str(body["kind"]), int(body.get("count", 1)))
            if "after_parts" in body:  # mid_stream: audio parts sent before the break
                self.break_after_parts = max(1, int(body["after_parts"]))
        except (KeyError, ValueError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response({"pending": list(self._faults)})

    async def _control_latency(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.ttfa_ms = float(body.get("ttfa_ms", self.ttfa_ms))
        self.rtf = float(body.get("rtf", self.rtf))
        return web.json_response({"ttfa_ms": self.ttfa_ms, "rtf": self.rtf})

    async def _control_requests(self, request: web.Request) -> web.Response:
        return web.json_response([r.summary() for r in self.requests])

    async def _control_clear(self, request: web.Request) -> web.Response:
        self.requests.clear()
        return web.json_response({"cleared": True})


async def make_voice(
    emulator: SageMakerEmulator, name: str, transcript: str, language: str = "en", tenant: str = "default"
) -> Voice:
    """An enrolled-voice value whose reference clip is the emulator's own voice saying ``transcript``, with a
    consent record that covers it."""
    wav = wav_bytes(await emulator.audio(transcript), MODEL_RATE)
    sha256 = hashlib.sha256(wav).hexdigest()
    consent = ConsentRecord(
        statement="test fixture: synthetic voice",
        speaker="the emulator",
        consented_at="2026-01-01T00:00:00Z",
        audio_sha256=sha256,
        enrolled_by="cli",
        tenant=tenant,
    )
    record = VoiceRecord(
        name=name,
        voice_id=hashlib.sha256(f"{tenant}/{name}".encode()).hexdigest()[:16],
        transcript=transcript,
        language=language,
        consent=consent,
        sha256=sha256,
        duration_s=(len(wav) - 44) / 2 / MODEL_RATE,
        created_at="2026-01-01T00:00:00Z",
        tenant=tenant,
    )
    return Voice(record=record, wav=wav)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m testing.emulators.sagemaker",
        description="A local SageMaker runtime + Qwen3-TTS (vLLM-Omni) emulator speaking in the bundled Piper "
        "voice. Point the server at it with AGENT_TTS__BACKEND=sagemaker AGENT_TTS__ENDPOINT_URL=http://HOST:PORT "
        "and dummy AWS credentials (AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x). Faults: POST /_emulator/faults "
        '{"kind": K, "count": N} with K one of ' + ", ".join(FAULTS) + "; requests seen: GET /_emulator/requests.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="listen port (default 8080)")
    parser.add_argument("--ttfa-ms", type=float, default=0.0, help="time to first audio per request, ms (default 0)")
    parser.add_argument("--rtf", type=float, default=0.0, help="real-time factor of generation (0.3 = 3.3x faster)")
    parser.add_argument("--chunk-ms", type=int, default=80, help="audio per streamed chunk, ms (default 80)")
    parser.add_argument("--sse", action="store_true", help="answer streams as SSE even when raw audio is asked for")
    return parser.parse_args(argv)


async def _serve(args: argparse.Namespace) -> None:
    from agent.adapters.piper_tts import PiperTTS
    from agent.config import TtsSettings

    tts = PiperTTS.load(TtsSettings(max_concurrency=2))
    emulator = SageMakerEmulator(tts, ttfa_ms=args.ttfa_ms, rtf=args.rtf, chunk_ms=args.chunk_ms, force_sse=args.sse)
    url = await emulator.start(args.host, args.port)
    log.info("SageMaker emulator on %s (ttfa %.0f ms, rtf %.2f)", url, args.ttfa_ms, args.rtf)
    try:
        await asyncio.Event().wait()
    finally:
        await emulator.close()
        tts.close()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
