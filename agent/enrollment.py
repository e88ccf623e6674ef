"""Voice enrollment: turn an upload, its transcript and a consent statement into a stored ``Voice``.

``Enrollment.enroll(request, principal)`` checks that the principal may enrol (``enroll`` scope), the name,
language, transcript, speaker and consent, decodes and normalises the audio (``agent.audio.reference``, in
a worker thread), transcribes it with the server's ASR when no transcript is given, and stores the voice
atomically in the principal's tenant of the ``VoiceStore``, with a ``ConsentRecord`` binding the statement
and the speaker to the SHA-256 of the normalised reference audio, the time and who enrolled it. Every
refusal is an ``EnrollmentRejected`` whose ``code`` is the wire error code (see docs/protocol.md); store
failures are ``ProviderError``. Used by the ``voices`` CLI and the WebSocket enrollment exchange. Name
rules and record forms live in ``agent.voice_records`` (shared with the stores).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.reference import REFERENCE_RATE, ReferenceAudio, prepare_reference
from agent.audio.resample import resample
from agent.auth import Principal, is_valid_tenant
from agent.errors import EnrollmentRejected, RejectedAudio, UnknownVoice, VoiceExists
from agent.ports import ConsentRecord, SpeechToText, Voice, VoiceRecord, VoiceStore
from agent.voice_records import normalize_name

MAX_TRANSCRIPT = 1000
MAX_CONSENT = 2000
MAX_SPEAKER = 200
LANGUAGES = (
    "Auto", "Chinese", "English", "Japanese", "Korean", "German", "French", "Russian", "Portuguese", "Spanish",
    "Italian",
)  # fmt: skip
"""The languages Qwen3-TTS speaks (``Auto`` = detect); names are matched without regard to case."""
DEFAULT_LANGUAGE = "English"
ASR_NOTE = "the transcript was made by speech recognition; an exact transcript gives better voice clones"

_ASR_RATE = 16000
# Decoding is CPU work on up to 10 MB uploads: two at a time, server-wide, whatever the number of loops.
_POOL = ThreadPoolExecutor(2, thread_name_prefix="enroll")


def normalize_language(language: str | None) -> str:
    if language is None or not language.strip():
        return DEFAULT_LANGUAGE
    for known in LANGUAGES:
        if known.lower() == language.strip().lower():
            return known
    raise EnrollmentRejected("bad_language", f"language must be one of {', '.join(LANGUAGES)}")


@dataclass(frozen=True, slots=True)
class EnrollmentRequest:
    name: str
    audio: bytes
    consent: str
    transcript: str | None = None
    language: str | None = None
    speaker: str | None = None
    """Who consented (their name as they gave it); recorded in the consent record."""


@dataclass(frozen=True, slots=True)
class EnrollmentResult:
    record: VoiceRecord
    warnings: tuple[str, ...]
    transcribed: bool


Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Enrollment:
    """Enrolls voices into ``store``; ``stt`` transcribes uploads sent without a transcript (``None`` = refuse)."""

    def __init__(self, store: VoiceStore, stt: SpeechToText | None, now: Callable[[], datetime] = _utc_now) -> None:
        self._store = store
        self._stt = stt
        self._now = now

    @staticmethod
    def authorize(principal: Principal) -> None:
        """Raise ``EnrollmentRejected("forbidden")`` unless ``principal`` may add and remove voices."""
        if not principal.allows("enroll"):
            raise EnrollmentRejected("forbidden", "adding or removing voices needs a token with the 'enroll' scope")
        if not is_valid_tenant(principal.tenant):
            raise EnrollmentRejected("forbidden", "the caller's tenant is not a valid tenant name")

    def check(
        self, name: str, consent: str, transcript: str | None, language: str | None, speaker: str | None = None
    ) -> tuple[str, str]:
        """Validate the text fields (cheap; call before an upload). Returns ``(name, language)``."""
        canonical = normalize_name(name)
        if not isinstance(consent, str) or not consent.strip():
            raise EnrollmentRejected(
                "consent_required",
                "a consent statement is required: who the speaker is and that they agree to their voice being cloned",
            )
        if len(consent) > MAX_CONSENT:
            raise EnrollmentRejected("consent_required", f"the consent statement is over {MAX_CONSENT} characters")
        if speaker is not None and (not isinstance(speaker, str) or len(speaker) > MAX_SPEAKER):
            raise EnrollmentRejected("bad_speaker", f"the speaker's name is over {MAX_SPEAKER} characters")
        if transcript is not None and len(transcript) > MAX_TRANSCRIPT:
            raise EnrollmentRejected("bad_transcript", f"the transcript is over {MAX_TRANSCRIPT} characters")
        return canonical, normalize_language(language)

    async def ensure_free(self, tenant: str, name: str) -> None:
        """Raise ``EnrollmentRejected("voice_exists")`` if ``name`` is taken in ``tenant`` (a hint; ``add`` decides)."""
        try:
            await self._store.get(tenant, name)
        except UnknownVoice:
            return
        raise EnrollmentRejected("voice_exists", f"a voice named {name!r} already exists; remove it first")

    async def enroll(
        self, request: EnrollmentRequest, principal: Principal, progress: Progress = _quiet
    ) -> EnrollmentResult:
        """Validate, normalise, transcribe if needed and store in ``principal``'s tenant.

        Raises ``EnrollmentRejected`` (``forbidden`` without the ``enroll`` scope) or ``ProviderError``.
        """
        self.authorize(principal)
        tenant = principal.tenant
        name, language = self.check(
            request.name, request.consent, request.transcript, request.language, request.speaker
        )
        await self.ensure_free(tenant, name)
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
        now = self._now().astimezone(UTC).isoformat(timespec="seconds")
        consent = ConsentRecord(
            statement=request.consent.strip(),
            speaker=(request.speaker or "").strip(),
            consented_at=now,
            audio_sha256=reference.sha256,
            enrolled_by=principal.subject,
            tenant=tenant,
        )
        record = VoiceRecord(
            name=name,
            voice_id=uuid.uuid4().hex,
            transcript=transcript,
            language=language,
            consent=consent,
            sha256=reference.sha256,
            duration_s=reference.duration_s,
            created_at=now,
            tenant=tenant,
        )
        progress(f"storing voice {name!r} in tenant {tenant!r}")
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
