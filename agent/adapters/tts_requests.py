"""Requests and responses of the Qwen3-TTS speech API (vLLM-Omni ``/v1/audio/speech``), vendor-neutral.

Shared by the SageMaker and the self-hosted vLLM-Omni adapters: the JSON payload for voice cloning
(``task_type="Base"`` with an inline reference clip), the language names the model accepts and which one a
request carries, cutting long
text into request-sized pieces, and decoding what comes back (WAV, raw PCM chunks, or server-sent events).
Pure functions and small stateful decoders; no I/O.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import wave
from dataclasses import dataclass

from agent.errors import AudioFormatError, ProviderError
from agent.languages import NAMES, parse_language

SPEECH_ROUTE = "/v1/audio/speech"
MODEL_RATE = 24000
MAX_BODY_BYTES = 6 * 1024 * 1024
"""SageMaker's limit on an invocation body (request and non-streamed response): 6 MiB."""

LANGUAGES: tuple[str, ...] = tuple(sorted(NAMES.values()))
"""The ten languages Qwen3-TTS speaks, by the names its ``language`` field takes (``agent.languages.NAMES``);
``"Auto"`` asks the model to detect it."""


def model_language(language: str | None) -> str:
    """Map a language tag or name (``"en"``, ``"en-US"``, ``"pt_BR"``, ``"german"``) to a name the model accepts.

    Anything it does not speak, and empty or ``"auto"``, gives ``"Auto"`` (the model detects the language).
    """
    try:
        code = parse_language(language)
    except ValueError:
        return "Auto"
    return NAMES[code] if code is not None else "Auto"


def wav_data_uri(wav: bytes) -> str:
    """The ``data:audio/wav;base64,...`` form of a reference clip (build it once per voice and reuse it)."""
    return "data:audio/wav;base64," + base64.b64encode(wav).decode("ascii")


@dataclass(frozen=True, slots=True)
class CloneVoice:
    """What a voice-cloning request needs: the reference clip as a data URI and its exact transcript."""

    name: str
    ref_audio: str
    ref_text: str
    language: str
    tenant: str = "default"


def request_language(language: str | None, voice: CloneVoice) -> str:
    """The ``language`` field of a request: the language of the text being spoken.

    ``language`` is what ``synthesize`` was asked for (an ``agent.languages`` code, sent as its English name:
    ``"de"`` -> ``"German"``); without it (or with one the model does not take), the voice's own
    (``voice.language``: ``AGENT_TTS__LANGUAGE``, else the language the voice was enrolled in).
    """
    if language:
        name = NAMES.get(language) or model_language(language)
        if name != "Auto":
            return name
    return voice.language


def speech_payload(text: str, voice: CloneVoice, language: str, *, stream: bool) -> bytes:
    """The JSON body for one sentence. Streaming asks for raw PCM (``stream_format="audio"``), else a WAV.

    Raises ``ProviderError`` if the body would exceed ``MAX_BODY_BYTES`` (the reference clip counts too).
    """
    payload: dict[str, object] = {
        "input": text,
        "task_type": "Base",
        "ref_audio": voice.ref_audio,
        "ref_text": voice.ref_text,
        "language": language,
    }
    if stream:
        payload.update(stream=True, stream_format="audio", response_format="pcm")
    else:
        payload["response_format"] = "wav"
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    if len(body) > MAX_BODY_BYTES:
        raise ProviderError(
            "tts", f"request body of {len(body)} bytes exceeds {MAX_BODY_BYTES} (reference clip too long?)"
        )
    return body


# A sentence ends at . ! ? ; : before white space, and at Chinese and Japanese 。！？； (no space follows those),
# unless a closing quote or bracket follows.
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])(?![」』）\"”’])\s*")
_WIDE_ENDS = ("。", "！", "？", "；")


def _join(head: str, tail: str) -> str:
    """Two pieces of text as one: with a space, except after a Chinese or Japanese sentence end."""
    return f"{head}{tail}" if head.endswith(_WIDE_ENDS) else f"{head} {tail}"


def split_text(text: str, *, min_chars: int = 24, max_chars: int = 400) -> list[str]:
    """Cut text into request-sized pieces: one per sentence, very short sentences merged into the next.

    A piece shorter than ``min_chars`` ("Hi.", "Sure!") is joined to the following sentence, so the model
    gets enough context and no request is spent on a word. A sentence longer than ``max_chars`` is cut at
    word boundaries. Whitespace-only text gives ``[]``. Joining the pieces with spaces gives the text back
    (whitespace normalised; sentences after a Chinese or Japanese sentence end are joined without a space).
    """
    sentences = [s for s in (part.strip() for part in _SENTENCE_END.split(text)) if s]
    pieces: list[str] = []
    pending = ""
    for sentence in sentences:
        pending = _join(pending, sentence) if pending else sentence
        if len(pending) >= min_chars:
            pieces.extend(_cut_long(pending, max_chars))
            pending = ""
    if pending:
        if pieces and len(pieces[-1]) + 1 + len(pending) <= max_chars:
            pieces[-1] = _join(pieces[-1], pending)
        else:
            pieces.extend(_cut_long(pending, max_chars))
    return pieces


def _cut_long(sentence: str, max_chars: int) -> list[str]:
    if len(sentence) <= max_chars:
        return [sentence]
    out: list[str] = []
    current = ""
    for word in sentence.split():
        while len(word) > max_chars:  # a "word" longer than a piece (a URL, a run of symbols)
            if current:
                out.append(current)
                current = ""
            out.append(word[:max_chars])
            word = word[max_chars:]
        if current and len(current) + 1 + len(word) > max_chars:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        out.append(current)
    return out


def parse_wav(data: bytes) -> tuple[bytes, int]:
    """``(pcm16le, sample_rate)`` of a mono 16-bit WAV. Raises ``AudioFormatError`` for anything else."""
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            if w.getnchannels() != 1 or w.getsampwidth() != 2:
                raise AudioFormatError(
                    f"expected mono 16-bit WAV, got {w.getnchannels()} channels of {8 * w.getsampwidth()} bits"
                )
            return w.readframes(w.getnframes()), w.getframerate()
    except (wave.Error, EOFError) as exc:
        raise AudioFormatError(f"not a WAV file: {exc}") from exc


class PcmAligner:
    """Re-cuts a byte stream into whole PCM16 samples: an odd trailing byte waits for the next part."""

    def __init__(self) -> None:
        self._carry = b""

    def push(self, data: bytes) -> bytes:
        data = self._carry + data
        cut = len(data) - (len(data) % 2)
        self._carry = data[cut:]
        return data[:cut]

    @property
    def pending(self) -> int:
        return len(self._carry)


class SseAudioDecoder:
    """Decodes vLLM-Omni's SSE speech stream (``speech.audio.delta`` / ``.done`` / ``.error``) to PCM bytes.

    ``push`` takes raw bytes in any cut and returns the audio of every complete event. A
    ``speech.audio.error`` event raises ``ProviderError(provider)``; ``done`` is true after
    ``speech.audio.done``.
    """

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self._buffer = b""
        self.done = False

    def push(self, data: bytes) -> bytes:
        self._buffer += data.replace(b"\r\n", b"\n")
        audio = bytearray()
        while (end := self._buffer.find(b"\n\n")) >= 0:
            block, self._buffer = self._buffer[:end], self._buffer[end + 2 :]
            audio += self._event(block)
        return bytes(audio)

    def _event(self, block: bytes) -> bytes:
        data = b"\n".join(line[5:].lstrip() for line in block.split(b"\n") if line.startswith(b"data:"))
        if not data or data.strip() == b"[DONE]":
            return b""
        try:
            message = json.loads(data)
        except ValueError as exc:
            raise ProviderError(self._provider, f"malformed event in the speech stream: {exc}") from exc
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "speech.audio.delta":
            try:
                return base64.b64decode(message.get("audio", ""), validate=True)
            except (binascii.Error, TypeError) as exc:
                raise ProviderError(self._provider, "bad base64 audio in the speech stream") from exc
        if kind == "speech.audio.done":
            self.done = True
        elif kind == "speech.audio.error":
            error = message.get("error") or {}
            detail = error.get("message") if isinstance(error, dict) else str(error)
            raise ProviderError(self._provider, f"speech stream failed: {detail}")
        return b""


def looks_like_sse(content_type: str | None, first_bytes: bytes) -> bool:
    """Whether a speech stream is SSE rather than raw audio: by content type, else by its first bytes."""
    if content_type and "event-stream" in content_type.lower():
        return True
    if content_type and content_type.lower().startswith("audio/"):
        return False
    head = first_bytes.lstrip()[:6]
    return head.startswith((b"event:", b"data:"))
