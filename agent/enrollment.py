"""Voice enrollment: turn an upload, its transcript and a consent statement into a stored ``Voice``.

``Enrollment.enroll(request)`` checks the name, language, transcript and consent, decodes and normalises
the audio (``agent.audio.reference``, in a worker thread), transcribes it with the server's ASR when no
transcript is given, and stores the voice atomically in the ``VoiceStore``. Every refusal is an
``EnrollmentRejected`` whose ``code`` is the wire error code (see docs/protocol.md); store failures are
``ProviderError``. Used by the ``voices`` CLI and the WebSocket enrollment exchange.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.reference import REFERENCE_RATE, ReferenceAudio, prepare_reference
from agent.audio.resample import resample
from agent.errors import EnrollmentRejected, RejectedAudio, UnknownVoice, VoiceExists
from agent.ports import SpeechToText, Voice, VoiceRecord, VoiceStore

MAX_NAME = 64
MAX_TRANSCRIPT = 1000
MAX_CONSENT = 2000
LANGUAGES = (
    "Auto", "Chinese", "English", "Japanese", "Korean", "German", "French", "Russian", "Portuguese", "Spanish",
    "Italian",
)  # fmt: skip
"""The languages Qwen3-TTS speaks (``Auto`` = detect); names are matched without regard to case."""
DEFAULT_LANGUAGE = "English"
ASR_NOTE = "the transcript was made by speech recognition; an exact transcript gives better voice clones"

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_ASR_RATE = 16000
# Decoding is CPU work on up to 10 MB uploads: two at a time, server-wide, whatever the number of loops.
_POOL = ThreadPoolExecutor(2, thread_name_prefix="enroll")


def normalize_name(name: str) -> str:
    """The canonical (lower-case) form of a voice name; raises ``EnrollmentRejected("bad_name")``.

    A name is 1–64 letters, digits, ``-`` and ``_``, starting with a letter or digit; names are not
    case-sensitive. Stores use the canonical form as a key, never as a file name.
    """
    canonical = name.strip().lower() if isinstance(name, str) else ""
    if not 0 < len(canonical) <= MAX_NAME or not _NAME.fullmatch(canonical):
        raise EnrollmentRejected(
            "bad_name",
            f"a voice name is 1-{MAX_NAME} letters, digits, '-' or '_', starting with a letter or digit",
        )
    return canonical


def is_valid_name(name: str) -> bool:
    try:
        return normalize_name(name) == name
    except EnrollmentRejected:
        return False


def normalize_language(language: str | None) -> str:
    if language is None or not language.strip():
        return DEFAULT_LANGUAGE
    for known in LANGUAGES:
        if known.lower() == language.strip().lower():
            return known
    raise EnrollmentRejected("bad_language", f"language must be one of {', '.join(LANGUAGES)}")


def record_to_dict(record: VoiceRecord) -> dict[str, Any]:
    """The JSON form of a record (also what ``voices`` and ``voice.enrolled`` send)."""
    return asdict(record)


def record_from_dict(data: Any) -> VoiceRecord:
    """Parse ``record_to_dict`` output; raises ``ValueError`` if a field is missing or of the wrong type."""
    if not isinstance(data, dict):
        raise ValueError("a voice record must be a JSON object")
    try:
        record = VoiceRecord(
            name=str(data["name"]),
            voice_id=str(data["voice_id"]),
            transcript=str(data["transcript"]),
            language=str(data["language"]),
            consent=str(data["consent"]),
            sha256=str(data["sha256"]),
            duration_s=float(data["duration_s"]),
            created_at=str(data["created_at"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"bad voice record: {exc}") from exc
    return record


@dataclass(frozen=True, slots=True)
class EnrollmentRequest:
    name: str
    audio: bytes
    consent: str
    transcript: str | None = None
    language: str | None = None


@dataclass(frozen=True, slots=True)
class EnrollmentResult:
    record: VoiceRecord
    warnings: tuple[str, ...]
    transcribed: bool


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


class Enrollment:
    """Enrolls voices into ``store``; ``stt`` transcribes uploads sent without a transcript (``None`` = refuse)."""

    def __init__(self, store: VoiceStore, stt: SpeechToText | None) -> None:
        self._store = store
        self._stt = stt

    def check(self, name: str, consent: str, transcript: str | None, language: str | None) -> tuple[str, str]:
        """Validate the text fields (cheap; call before an upload). Returns ``(name, language)``."""
        canonical = normalize_name(name)
        if not isinstance(consent, str) or not consent.strip():
            raise EnrollmentRejected(
                "consent_required",
                "a consent statement is required: who the speaker is and that they agree to their voice being cloned",
            )
        if len(consent) > MAX_CONSENT:
            raise EnrollmentRejected("consent_required", f"the consent statement is over {MAX_CONSENT} characters")
        if transcript is not None and len(transcript) > MAX_TRANSCRIPT:
            raise EnrollmentRejected("bad_transcript", f"the transcript is over {MAX_TRANSCRIPT} characters")
        return canonical, normalize_language(language)

    async def ensure_free(self, name: str) -> None:
        """Raise ``EnrollmentRejected("voice_exists")`` if ``name`` is taken (a hint; ``add`` decides)."""
        try:
            await self._store.get(name)
        except UnknownVoice:
            return
        raise EnrollmentRejected("voice_exists", f"a voice named {name!r} already exists; remove it first")

    async def enroll(self, request: EnrollmentRequest, progress: Progress = _quiet) -> EnrollmentResult:
        """Validate, normalise, transcribe if needed and store. Raises ``EnrollmentRejected``/``ProviderError``."""
        name, language = self.check(request.name, request.consent, request.transcript, request.language)
        await self.ensure_free(name)
        progress(f"decoding {len(request.audio):,} bytes of audio")
        try:
            reference = await asyncio.get_running_loop().run_in_executor(_POOL, prepare_reference, request.audio)
        except RejectedAudio as exc:
            raise EnrollmentRejected(exc.code, exc.message) from None
        progress(f"reference audio: {reference.duration_s:.1f} s of speech ({reference.source_format})")
        warnings = list(reference.warnings)
        transcript = (request.transcript or "").strip()
        transcribed = not transcript
        if transcribed:
            progress("transcribing the reference audio (no transcript given)")
            transcript = await self._transcribe(reference)
            warnings.append(ASR_NOTE)
        record = VoiceRecord(
            name=name,
            voice_id=uuid.uuid4().hex,
            transcript=transcript,
            language=language,
            consent=request.consent.strip(),
            sha256=reference.sha256,
            duration_s=reference.duration_s,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        progress(f"storing voice {name!r}")
        try:
            await self._store.add(Voice(record, reference.wav))
        except VoiceExists:
            raise EnrollmentRejected("voice_exists", f"a voice named {name!r} already exists") from None
        return EnrollmentResult(record, tuple(warnings), transcribed)

    async def _transcribe(self, reference: ReferenceAudio) -> str:
        if self._stt is None:
            raise EnrollmentRejected("transcript_required", "give the exact transcript of the recording")
        audio16 = resample(pcm16_to_float(reference.pcm), REFERENCE_RATE, _ASR_RATE)
        result = await self._stt.transcribe(float_to_pcm16(np.asarray(audio16)))
        text = result.text.strip()
        if not text:
            raise EnrollmentRejected(
                "no_speech", "no words were recognised in the recording; give its exact transcript instead"
            )
        return text
