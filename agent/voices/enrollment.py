"""Voice enrollment: turn an upload, its transcript and a consent statement into a stored ``Voice``.

``Enrollment.enroll(request, principal)`` checks that the principal may enrol (``enroll`` scope), the name,
language, transcript, speaker and consent, decodes and normalises the audio (``agent.audio.reference``, in
a worker thread), transcribes it with the server's ASR when no transcript is given, and stores the voice
atomically in the principal's tenant of the ``VoiceStore``, with a ``ConsentRecord`` binding the statement
and the speaker to the SHA-256 of the normalised reference audio, the time and who enrolled it. Every
refusal is an ``EnrollmentRejected`` whose ``code`` is the wire error code (see docs/protocol.md); store
failures are ``ProviderError``. Used by the ``voices`` CLI and the WebSocket enrollment exchange. Name
rules and record forms live in ``agent.voices.records`` (shared with the stores).

``EnrollmentLimits`` bounds what one tenant may take: at most ``max_voices`` voices (a disk quota: the
stored voices plus the enrollments under way, so two uploads at once cannot both take the last place), and
a rate of enrollments (a token bucket per tenant: ``burst`` at once, then ``per_hour``), because each one
decodes an upload and may run the ASR. A token is taken when an upload is about to be decoded, whether it is
then accepted or not; a refusal before that (bad fields, a taken name, the quota, the rate) costs nothing.
The limits are counted by a ``Limiter`` (``agent.security.limiter``): in this process by default, or in a Redis
every replica shares (``AGENT_LIMITS__REDIS_URL``); both fail closed (``limits_unavailable``) while a shared
counter cannot answer. The decisions and the refusals' words are ``agent.security.limit_rules``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

import numpy as np

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.reference import REFERENCE_RATE, ReferenceAudio, prepare_reference
from agent.audio.resample import resample
from agent.errors import EnrollmentRejected, LimitsUnavailable, RejectedAudio, UnknownVoice, VoiceExists
from agent.languages import NAMES, parse_language
from agent.ports import ConsentRecord, Hold, LanguageHint, Rate, SpeechToText, Voice, VoiceRecord, VoiceStore
from agent.security.auth import Principal, is_valid_tenant
from agent.security.limit_rules import Limit, quota_exceeded, rate_limited, unavailable
from agent.security.limiter import Limiter
from agent.voices.records import normalize_name

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
ENROLL_HOLD_S = 900.0
"""How long a place in the voice quota outlives a replica that died while enrolling (an enrollment's upload is
bounded, its decoding and recognition take seconds: a live one ends well before)."""
T = TypeVar("T")
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


class EnrollmentLimits:
    """Per-tenant voice quota and enrollment rate, shared by every enrollment of a server (see the module doc).

    ``max_voices`` (0 = no quota) counts stored voices plus enrollments admitted and not ``done``; the rate
    lets ``burst`` enrollments through at once and refills at ``per_hour`` (0 = no rate limit). Counted by
    ``limiter`` (default: in this process, on ``time.monotonic``); both limits fail closed when its counter cannot
    answer (``limits_unavailable``).
    """

    def __init__(
        self, max_voices: int = 0, burst: int = 1, per_hour: float = 0.0, limiter: Limiter | None = None
    ) -> None:
        if max_voices < 0 or burst < 1 or per_hour < 0:
            raise ValueError("max_voices and per_hour must be >= 0 and burst >= 1")
        self.max_voices = max_voices
        self.rate = Rate(burst, per_hour)
        self.limiter = limiter if limiter is not None else Limiter()

    async def running(self, tenant: str) -> int:
        """Enrollments admitted for ``tenant`` and not ``done`` yet (raises ``EnrollmentRejected`` when the
        counter cannot answer)."""
        with _closed("voice_quota"):
            return _counted(await self.limiter.held("voice_quota", tenant))

    async def check(self, tenant: str, stored: int) -> None:
        """Raise ``EnrollmentRejected`` (``quota_exceeded``, ``rate_limited`` with ``retry_after_s``, or
        ``limits_unavailable``) if ``tenant``, holding ``stored`` voices, may not start an enrollment now. Takes
        nothing."""
        if self.max_voices:
            running = await self.running(tenant)
            if stored + running >= self.max_voices:
                raise quota_exceeded(stored + running, running, self.max_voices)
        if self.rate.per_hour:
            with _closed("enroll_rate"):
                wait_s = _counted(await self.limiter.take("enroll_rate", tenant, self.rate, cost=0))
            if wait_s > 0:
                raise rate_limited(wait_s, self.rate)

    async def admit(self, tenant: str, stored: int) -> Hold | None:
        """``check``, then take one enrollment from the rate and count it toward the quota until ``done``, as one
        decision: a place in the quota is held first, and given back when the rate refuses."""
        place = None
        if self.max_voices:
            with _closed("voice_quota"):
                bound = self.max_voices - stored
                place = _counted(await self.limiter.hold("voice_quota", tenant, bound, ENROLL_HOLD_S))
            if place is None:
                running = await self.running(tenant)
                raise quota_exceeded(stored + running, running, self.max_voices)
        if self.rate.per_hour:
            try:
                with _closed("enroll_rate"):
                    wait_s = _counted(await self.limiter.take("enroll_rate", tenant, self.rate))
            except BaseException:
                await self.done(place)
                raise
            if wait_s > 0:
                await self.done(place)
                raise rate_limited(wait_s, self.rate)
        return place

    async def done(self, place: Hold | None) -> None:
        """The enrollment ``admit`` let in (holding ``place``) has ended (stored, refused or failed)."""
        if place is not None:
            await self.limiter.release(place)


@contextmanager
def _closed(limit: Limit) -> Iterator[None]:
    """A fail-closed limit whose counter cannot answer: refused, saying why."""
    try:
        yield
    except LimitsUnavailable:
        raise unavailable(limit) from None


def _counted(answer: T | str) -> T:
    """A fail-closed limit's answer (its counter answered: the limiter raises ``LimitsUnavailable`` otherwise)."""
    if isinstance(answer, str):
        raise AssertionError("enrollment limits fail closed, never unchecked")
    return answer


class Enrollment:
    """Enrolls voices into ``store``; ``stt`` transcribes uploads sent without a transcript (``None`` = refuse).

    ``limits`` (``None`` = none) is shared by every ``Enrollment`` of a server.
    """

    def __init__(
        self,
        store: VoiceStore,
        stt: SpeechToText | None,
        now: Callable[[], datetime] = _utc_now,
        limits: EnrollmentLimits | None = None,
    ) -> None:
        self._store = store
        self._stt = stt
        self._now = now
        self._limits = limits

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

    async def ensure_allowed(self, tenant: str) -> None:
        """Raise ``EnrollmentRejected("quota_exceeded" | "rate_limited" | "limits_unavailable")`` if ``tenant`` may
        not enrol now (a hint before an upload, which takes nothing; ``enroll`` decides)."""
        if self._limits is not None:
            await self._limits.check(tenant, await self._stored(tenant))

    async def _stored(self, tenant: str) -> int:
        limits = self._limits
        return len(await self._store.list(tenant)) if limits is not None and limits.max_voices else 0

    async def enroll(
        self, request: EnrollmentRequest, principal: Principal, progress: Progress = _quiet
    ) -> EnrollmentResult:
        """Validate, normalise, transcribe if needed and store in ``principal``'s tenant.

        Raises ``EnrollmentRejected`` (``forbidden`` without the ``enroll`` scope; ``quota_exceeded`` and
        ``rate_limited`` before the audio is decoded) or ``ProviderError``.
        """
        self.authorize(principal)
        tenant = principal.tenant
        name, language = self.check(
            request.name, request.consent, request.transcript, request.language, request.speaker
        )
        await self.ensure_free(tenant, name)
        limits = self._limits
        if limits is None:
            return await self._enroll(request, principal, name, language, progress)
        place = await limits.admit(tenant, await self._stored(tenant))  # counting and taking: one atomic hold
        try:
            return await self._enroll(request, principal, name, language, progress)
        finally:
            await limits.done(place)

    async def _enroll(
        self, request: EnrollmentRequest, principal: Principal, name: str, language: str, progress: Progress
    ) -> EnrollmentResult:
        tenant = principal.tenant
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
            transcript, heard_in = await self._transcribe(reference, language)
            warnings.append(ASR_NOTE)
            if language == "Auto":
                language = NAMES.get(heard_in, language)  # the language its transcript was heard in
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

    async def _transcribe(self, reference: ReferenceAudio, language: str) -> tuple[str, str]:
        """The recording's words, and the language they were heard in (``language``, unless it is ``Auto``)."""
        if self._stt is None:
            raise EnrollmentRejected("transcript_required", "give the exact transcript of the recording")
        audio16 = resample(pcm16_to_float(reference.pcm), REFERENCE_RATE, _ASR_RATE)
        code = parse_language(language) if language != "Auto" else None
        hint = LanguageHint(code, detect=code is None)
        result = await self._stt.transcribe(float_to_pcm16(np.asarray(audio16)), None, hint)
        text = result.text.strip()
        if not text:
            raise EnrollmentRejected(
                "no_speech", "no words were recognised in the recording; give its exact transcript instead"
            )
        return text, result.language
