"""What the SageMaker runtime and the vLLM-Omni speech API say on the wire: their limits, the speech API's
validation and the bodies of their answers, for the emulator in ``testing.emulators.sagemaker``.

Its one reason to change: the services' documented behaviour (``shared/reference/qwen3-tts-sagemaker.md``). The
values are copied from that document, never imported from the adapter the emulator certifies.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from agent.audio.wav import read_audio, wav_bytes
from agent.errors import AudioFormatError
from testing.emulators import eventstream

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
ROUTE = re.compile(r"route=(/[^\s,]+)")
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


class Reject(Exception):
    """A refusal by the container: its HTTP status, message and error type."""

    def __init__(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": None, "code": self.status}}


def validate(body: dict[str, Any] | None, *, streaming_call: bool) -> dict[str, Any]:
    """``body`` as the container's speech API accepts it, else ``Reject`` with the container's message."""
    if body is None:
        raise Reject(400, "Request body is not a JSON object")
    model = body.get("model")
    if model is not None and model != SERVED_MODEL:
        raise Reject(404, f"The model `{model}` does not exist.", "NotFoundError")
    text = body.get("input")
    if not isinstance(text, str) or not text.strip():
        raise Reject(400, "Input text cannot be empty")
    task = body.get("task_type") or ("Base" if body.get("ref_audio") or body.get("ref_text") else "CustomVoice")
    if task != "Base":
        raise Reject(400, f"This emulator serves the Base checkpoint only, not task_type={task!r}")
    ref_audio = body.get("ref_audio")
    if not isinstance(ref_audio, str) or not ref_audio:
        raise Reject(400, "Base task requires 'ref_audio' or 'speaker_embedding' for voice cloning")
    if not ref_audio.startswith(("http://", "https://", "data:", "file://")):
        raise Reject(400, "ref_audio must be a URL (http/https), base64 data URL (data:...), or file URI (file://...)")
    if ref_audio.startswith("data:"):
        decode_data_uri(ref_audio)
    ref_text = body.get("ref_text")
    if not isinstance(ref_text, str) or not ref_text.strip():
        raise Reject(
            400, "Base task requires non-empty 'ref_text' (the transcript of ref_audio) unless 'x_vector_only_mode'"
        )
    language = body.get("language")
    if language is not None and (not isinstance(language, str) or language.strip().title() not in LANGUAGES):
        raise Reject(400, f"Invalid language '{language}'. Supported: {', '.join(LANGUAGES)}")
    fmt = body.get("response_format", "wav")
    if fmt not in ("wav", "pcm", "flac", "mp3", "opus"):
        raise Reject(400, f"Invalid response_format '{fmt}'")
    if body.get("stream"):
        if fmt not in ("pcm", "wav"):
            raise Reject(400, "Streaming supports response_format 'pcm' or 'wav' only")
        if body.get("speed", 1.0) != 1.0:
            raise Reject(400, "Streaming is not supported with speed adjustment")
    elif fmt not in ("wav", "pcm"):
        raise Reject(400, f"The emulator answers wav or pcm, not {fmt!r}")
    return body


def json_or_none(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def decode_data_uri(uri: str) -> bytes:
    head, sep, data = uri.partition(",")
    if not sep or not head.endswith(";base64"):
        raise Reject(400, "ref_audio data URL must be base64-encoded (data:<mime>;base64,...)")
    try:
        audio = base64.b64decode(data, validate=True)
        read_audio(audio)
    except (binascii.Error, AudioFormatError) as exc:
        raise Reject(400, f"Failed to decode ref_audio: {exc}") from exc
    return audio


def aws_error(record: Recorded, status: int, code: str, message: str | None) -> web.Response:
    record.status = status
    body: dict[str, Any] = {"message": message} if message is not None else {}
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        content_type="application/json",
        headers={"x-amzn-ErrorType": _ERROR_TYPES.get(code, code)},
    )


def model_error(record: Recorded, reject: Reject) -> web.Response:
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


def audio_response(record: Recorded, pcm: bytes, speech: dict[str, Any], *, sagemaker: bool) -> web.Response:
    record.status = 200
    wav = speech.get("response_format", "wav") == "wav"
    headers = {"x-Amzn-Invoked-Production-Variant": "AllTraffic"} if sagemaker else {}
    return web.Response(
        body=wav_bytes(pcm, MODEL_RATE) if wav else pcm,
        content_type="audio/wav" if wav else "audio/pcm",
        headers=headers,
    )


def stream_exception(code: str, error_code: str) -> bytes:
    payload = json.dumps({"Message": f"Model stream failed ({error_code})", "ErrorCode": error_code}).encode()
    return eventstream.exception(code, payload)


def chunks(pcm: bytes, chunk_ms: int) -> list[bytes]:
    size = MODEL_RATE * 2 * chunk_ms // 1000
    return [pcm[i : i + size] for i in range(0, len(pcm), size)] or [b""]


def misaligned(chunk: bytes) -> list[bytes]:
    """Cut a chunk at an odd offset, as SageMaker may split or coalesce PayloadParts anywhere."""
    cut = min(len(chunk), 1001)
    return [part for part in (chunk[:cut], chunk[cut:]) if part]


def sse_delta(chunk: bytes) -> bytes:
    message = {"type": "speech.audio.delta", "audio": base64.b64encode(chunk).decode(), "response_format": "pcm"}
    return b"event: speech.audio.delta\ndata: " + json.dumps(message).encode() + b"\n\n"
