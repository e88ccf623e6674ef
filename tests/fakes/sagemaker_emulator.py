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

Run it: ``python -m tests.fakes.sagemaker_emulator --port 8080 --ttfa-ms 150 --rtf 0.3``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import contextlib
import hashlib
import json
import logging
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.audio.wav import read_audio, wav_bytes
from agent.errors import AudioFormatError
from agent.ports import ConsentRecord, TextToSpeech, Voice, VoiceRecord
from tests.fakes import eventstream

log = logging.getLogger(__name__)

# The service's own values, from shared/reference/qwen3-tts-sagemaker.md (not from the adapter):
MODEL_RATE = 24000
"""§5 (tokenizer ``output_sample_rate=24000``) and §3.2: the model speaks 24 kHz mono PCM16."""
MAX_BODY_BYTES = 6_291_456
"""§4.1: ``BodyBlob`` max 6,291,456 bytes (6 MiB), request and non-streamed response of InvokeEndpoint."""
LANGUAGES: tuple[str, ...] = (
    "Auto",
    "Chinese",
    "English",
    "Japanese",
    "Korean",
    "German",
    "French",
    "Russian",
    "Portuguese",
    "Spanish",
    "Italian",
)
"""§3.1, field ``language``: title-cased; anything else is 400 ``Invalid language '<x>'. Supported: ...``."""

FAULTS = (
    "throttling",
    "unavailable",
    "internal",
    "not_ready",
    "model_error_500",
    "model_error_400",
    "validation",
    "hang",
    "stream_error",
    "mid_stream",
)
SERVED_MODEL = "/opt/ml/model"
_ROUTE = re.compile(r"route=(/[^\s,]+)")
_ERROR_TYPES = {
    "ModelError": "ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/",
    "ValidationError": "ValidationError:http://internal.amazon.com/coral/com.amazon.coral.validate/",
}


@dataclass
class Recorded:
    """One request as the emulator saw it."""

    path: str
    endpoint: str | None
    streaming: bool
    headers: dict[str, str]
    body: dict[str, Any] | None
    body_bytes: int
    received_at: float
    first_audio_at: float | None = None
    status: int = 200
    fault: str | None = None

    def summary(self) -> dict[str, Any]:
        body = dict(self.body or {})
        if isinstance(body.get("ref_audio"), str):
            body["ref_audio"] = body["ref_audio"][:48] + f"... ({len(body['ref_audio'])} chars)"
        return {
            "path": self.path,
            "streaming": self.streaming,
            "status": self.status,
            "fault": self.fault,
            "body": body,
            "custom_attributes": self.headers.get("X-Amzn-SageMaker-Custom-Attributes"),
        }


class _Reject(Exception):
    def __init__(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": None, "code": self.status}}


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
        """The PCM16 at 24 kHz the emulator answers for ``text`` (synthesized once, then cached)."""
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
            body=_json_or_none(raw),
            body_bytes=len(raw),
            received_at=time.perf_counter(),
        )
        self.requests.append(record)
        if len(raw) > MAX_BODY_BYTES:
            return _aws_error(record, 400, "ValidationError", f"Request body size {len(raw)} exceeds {MAX_BODY_BYTES}")
        fault = self._faults.popleft() if self._faults else None
        record.fault = fault
        if fault is not None and (response := await self._service_fault(record, fault)) is not None:
            return response
        match = _ROUTE.search(request.headers.get("X-Amzn-SageMaker-Custom-Attributes", ""))
        route = match.group(1) if match else None
        if route != "/v1/audio/speech":
            reject = (
                _Reject(400, "Either prompt or messages must be provided (completions handler)")
                if route is None
                else _Reject(404, "Not Found", "NotFoundError")
            )
            return _model_error(record, reject)
        try:
            speech = self._validate(record.body, streaming_call=streaming)
        except _Reject as reject:
            return _model_error(record, reject)
        pcm = await self.audio(speech["input"])
        if not streaming or not speech.get("stream"):
            await self._pace_whole(record, pcm)
            return _audio_response(record, pcm, speech, sagemaker=True)
        return await self._stream_events(request, record, pcm, speech, fault)

    async def _service_fault(self, record: Recorded, fault: str) -> web.StreamResponse | None:
        if fault == "throttling":
            return _aws_error(record, 400, "ThrottlingException", None)
        if fault == "unavailable":
            return _aws_error(record, 503, "ServiceUnavailable", "Service is unavailable. Try your call again.")
        if fault == "internal":
            return _aws_error(record, 500, "InternalFailure", "An internal failure occurred.")
        if fault == "not_ready":
            return _aws_error(record, 429, "ModelNotReadyException", "Model is not ready. Try again later.")
        if fault == "validation":
            return _aws_error(record, 400, "ValidationError", "Endpoint qwen3-tts-voice-clone not found.")
        if fault == "model_error_500":
            return _model_error(record, _Reject(500, "Speech generation failed: CUDA error", "InternalServerError"))
        if fault == "model_error_400":
            return _model_error(record, _Reject(400, "Speech generation failed: bad request"))
        if fault == "hang":
            assert self._closing is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.hang_s)
            return _aws_error(record, 500, "InternalFailure", "hung")
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
            await response.write(_stream_exception("ModelStreamError", "StreamBroken"))
            return response
        chunks = _chunks(pcm, self.chunk_ms)
        for index, chunk in enumerate(chunks):
            await self._pace_chunk(record, index)
            if index == max(1, self.break_after_parts) and fault == "mid_stream":
                await response.write(_stream_exception("ModelStreamError", "StreamBroken"))
                return response
            if record.first_audio_at is None:
                record.first_audio_at = time.perf_counter()
            if sse:
                await response.write(eventstream.event("PayloadPart", _sse_delta(chunk), "application/octet-stream"))
            else:
                for part in _misaligned(chunk) if self.misalign else [chunk]:
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
    def _validate(self, body: dict[str, Any] | None, *, streaming_call: bool) -> dict[str, Any]:
        if body is None:
            raise _Reject(400, "Request body is not a JSON object")
        model = body.get("model")
        if model is not None and model != SERVED_MODEL:
            raise _Reject(404, f"The model `{model}` does not exist.", "NotFoundError")
        text = body.get("input")
        if not isinstance(text, str) or not text.strip():
            raise _Reject(400, "Input text cannot be empty")
        task = body.get("task_type") or ("Base" if body.get("ref_audio") or body.get("ref_text") else "CustomVoice")
        if task != "Base":
            raise _Reject(400, f"This emulator serves the Base checkpoint only, not task_type={task!r}")
        ref_audio = body.get("ref_audio")
        if not isinstance(ref_audio, str) or not ref_audio:
            raise _Reject(400, "Base task requires 'ref_audio' or 'speaker_embedding' for voice cloning")
        if not ref_audio.startswith(("http://", "https://", "data:", "file://")):
            raise _Reject(
                400, "ref_audio must be a URL (http/https), base64 data URL (data:...), or file URI (file://...)"
            )
        if ref_audio.startswith("data:"):
            _decode_data_uri(ref_audio)
        ref_text = body.get("ref_text")
        if not isinstance(ref_text, str) or not ref_text.strip():
            raise _Reject(
                400, "Base task requires non-empty 'ref_text' (the transcript of ref_audio) unless 'x_vector_only_mode'"
            )
        language = body.get("language")
        if language is not None and (not isinstance(language, str) or language.strip().title() not in LANGUAGES):
            raise _Reject(400, f"Invalid language '{language}'. Supported: {', '.join(LANGUAGES)}")
        fmt = body.get("response_format", "wav")
        if fmt not in ("wav", "pcm", "flac", "mp3", "opus"):
            raise _Reject(400, f"Invalid response_format '{fmt}'")
        if body.get("stream"):
            if fmt not in ("pcm", "wav"):
                raise _Reject(400, "Streaming supports response_format 'pcm' or 'wav' only")
            if body.get("speed", 1.0) != 1.0:
                raise _Reject(400, "Streaming is not supported with speed adjustment")
        elif fmt not in ("wav", "pcm"):
            raise _Reject(400, f"The emulator answers wav or pcm, not {fmt!r}")
        return body

    async def _direct(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/audio/speech`` as the bare vLLM-Omni server answers it (no SageMaker in front)."""
        raw = await request.read()
        record = Recorded(
            request.path, None, True, dict(request.headers), _json_or_none(raw), len(raw), time.perf_counter()
        )
        self.requests.append(record)
        fault = self._faults.popleft() if self._faults else None
        record.fault = fault
        if fault in ("unavailable", "internal", "model_error_500", "not_ready", "throttling"):
            record.status = 503
            return web.json_response(_Reject(503, "Service unavailable", "ServiceUnavailableError").body(), status=503)
        try:
            speech = self._validate(record.body, streaming_call=True)
            if fault in ("model_error_400", "validation"):
                raise _Reject(400, "Speech generation failed: bad request")
        except _Reject as reject:
            record.status = reject.status
            return web.json_response(reject.body(), status=reject.status)
        pcm = await self.audio(speech["input"])
        if not speech.get("stream"):
            await self._pace_whole(record, pcm)
            return _audio_response(record, pcm, speech, sagemaker=False)
        sse = self.force_sse or speech.get("stream_format") == "sse"
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream" if sse else "audio/pcm"})
        await response.prepare(request)
        for index, chunk in enumerate(_chunks(pcm, self.chunk_ms)):
            await self._pace_chunk(record, index)
            if fault in ("mid_stream", "stream_error") and index == (
                max(1, self.break_after_parts) if fault == "mid_stream" else 0
            ):
                assert request.transport is not None
                request.transport.abort()  # the generator failed after the 200: the connection is cut
                return response
            if record.first_audio_at is None:
                record.first_audio_at = time.perf_counter()
            await response.write(_sse_delta(chunk) if sse else chunk)
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


def _json_or_none(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _decode_data_uri(uri: str) -> bytes:
    head, sep, data = uri.partition(",")
    if not sep or not head.endswith(";base64"):
        raise _Reject(400, "ref_audio data URL must be base64-encoded (data:<mime>;base64,...)")
    try:
        audio = base64.b64decode(data, validate=True)
        read_audio(audio)
    except (binascii.Error, AudioFormatError) as exc:
        raise _Reject(400, f"Failed to decode ref_audio: {exc}") from exc
    return audio


def _aws_error(record: Recorded, status: int, code: str, message: str | None) -> web.Response:
    record.status = status
    body: dict[str, Any] = {"message": message} if message is not None else {}
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        content_type="application/json",
        headers={"x-amzn-ErrorType": _ERROR_TYPES.get(code, code)},
    )


def _model_error(record: Recorded, reject: _Reject) -> web.Response:
    record.status = 424
    original = json.dumps(reject.body())
    body = {
        "ErrorCode": "CLIENT_ERROR_FROM_MODEL" if reject.status < 500 else "SERVER_ERROR_FROM_MODEL",
        "LogStreamArn": "arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/emulator",
        "Message": f"Received {'client' if reject.status < 500 else 'server'} error ({reject.status}) from primary "
        f'with message "{original}".',
        "OriginalMessage": original,
        "OriginalStatusCode": reject.status,
    }
    return web.Response(
        status=424,
        body=json.dumps(body).encode(),
        content_type="application/json",
        headers={"x-amzn-ErrorType": _ERROR_TYPES["ModelError"]},
    )


def _audio_response(record: Recorded, pcm: bytes, speech: dict[str, Any], *, sagemaker: bool) -> web.Response:
    record.status = 200
    wav = speech.get("response_format", "wav") == "wav"
    headers = {"x-Amzn-Invoked-Production-Variant": "AllTraffic"} if sagemaker else {}
    return web.Response(
        body=wav_bytes(pcm, MODEL_RATE) if wav else pcm,
        content_type="audio/wav" if wav else "audio/pcm",
        headers=headers,
    )


def _stream_exception(code: str, error_code: str) -> bytes:
    payload = json.dumps({"Message": f"Model stream failed ({error_code})", "ErrorCode": error_code}).encode()
    return eventstream.exception(code, payload)


def _chunks(pcm: bytes, chunk_ms: int) -> list[bytes]:
    size = MODEL_RATE * 2 * chunk_ms // 1000
    return [pcm[i : i + size] for i in range(0, len(pcm), size)] or [b""]


def _misaligned(chunk: bytes) -> list[bytes]:
    """Cut a chunk at an odd offset, as SageMaker may split or coalesce PayloadParts anywhere."""
    cut = min(len(chunk), 1001)
    return [part for part in (chunk[:cut], chunk[cut:]) if part]


def _sse_delta(chunk: bytes) -> bytes:
    message = {"type": "speech.audio.delta", "audio": base64.b64encode(chunk).decode(), "response_format": "pcm"}
    return b"event: speech.audio.delta\ndata: " + json.dumps(message).encode() + b"\n\n"


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.sagemaker_emulator",
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
