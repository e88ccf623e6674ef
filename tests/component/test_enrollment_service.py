"""The enrollment service: who may enrol, the consent record it builds, and tenants (real store, real audio)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.errors import EnrollmentRejected
from agent.security.auth import ANONYMOUS, Principal
from agent.security.limiter import Limiter, LocalLimits
from agent.voices.enrollment import Enrollment, EnrollmentLimits, EnrollmentRequest
from testing.reference_files import encode
from testing.speech import silence, speech_pcm16

SENTENCE = "Hello, this is my natural speaking voice for the assistant."
ENROLLER = Principal("acme", frozenset({"call", "enroll"}), "tok:k-acme")
CALLER = Principal("acme", frozenset({"call"}), "tok:k-call")
OTHER = Principal("globex", frozenset({"enroll"}), "tok:k-globex")
NOON = datetime(2026, 3, 1, 13, 0, 0, tzinfo=timezone(timedelta(hours=1)))


@functools.lru_cache(maxsize=1)
def upload() -> bytes:
    return encode(silence(300, 24000) + speech_pcm16(SENTENCE, 24000), 24000, "wav")


def request(
    name: str = "ann",
    consent: str = "I, Ann Lee, agree that my voice may be cloned.",
    transcript: str = SENTENCE,
    language: str | None = None,
    speaker: str | None = None,
) -> EnrollmentRequest:
    return EnrollmentRequest(name, upload(), consent, transcript, language, speaker)


@pytest.fixture
def service(tmp_path: Path) -> Enrollment:
    return Enrollment(FileVoiceStore(tmp_path), None, now=lambda: NOON)


async def test_enrollment_stores_a_consent_record_bound_to_the_audio(service: Enrollment, tmp_path: Path) -> None:
    result = await service.enroll(request(speaker=" Ann Lee "), ENROLLER)
    record = result.record
    assert record.tenant == "acme" and record.created_at == "2026-03-01T12:00:00+00:00"
    stored = await FileVoiceStore(tmp_path).get("acme", "ann")
    assert stored.record == record
    assert record.consent.statement == "I, Ann Lee, agree that my voice may be cloned."
    assert record.consent.speaker == "Ann Lee"
    assert record.consent.consented_at == "2026-03-01T12:00:00+00:00"  # UTC
    assert record.consent.audio_sha256 == hashlib.sha256(stored.wav).hexdigest() == record.sha256
    assert record.consent.enrolled_by == "tok:k-acme" and record.consent.tenant == "acme"
    assert record.consent.covers(record.sha256, "acme")


async def test_enrolling_needs_the_enroll_scope(service: Enrollment, tmp_path: Path) -> None:
    with pytest.raises(EnrollmentRejected) as refused:
        await service.enroll(request(), CALLER)
    assert refused.value.code == "forbidden"
    admin = Principal("acme", frozenset({"admin"}), "tok:admin")
    assert (await service.enroll(request(), admin)).record.consent.enrolled_by == "tok:admin"
    assert [r.name for r in await FileVoiceStore(tmp_path).list("acme")] == ["ann"]


async def test_names_are_per_tenant(service: Enrollment, tmp_path: Path) -> None:
    await service.enroll(request(), ENROLLER)
    await service.enroll(request("ANN"), OTHER)  # the same name in another tenant
    await service.enroll(request(), ANONYMOUS)  # and in the default tenant
    with pytest.raises(EnrollmentRejected) as taken:
        await service.enroll(request("Ann"), ENROLLER)
    assert taken.value.code == "voice_exists"
    store = FileVoiceStore(tmp_path)
    owners = [(await store.get(t, "ann")).record.consent.enrolled_by for t in ("acme", "globex", "default")]
    assert owners == ["tok:k-acme", "tok:k-globex", "anonymous"]


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"speaker": "x" * 201}, "bad_speaker"),
        ({"consent": " \n "}, "consent_required"),
        ({"consent": "y" * 2001}, "consent_required"),
        ({"language": "Klingon"}, "bad_language"),
        ({"transcript": "z" * 1001}, "bad_transcript"),
    ],
)
async def test_bad_fields_are_refused_before_the_audio_is_decoded(
    service: Enrollment, tmp_path: Path, fields: dict[str, str], code: str
) -> None:
    with pytest.raises(EnrollmentRejected) as refused:
        await service.enroll(dataclasses.replace(request(**fields), audio=b"not audio"), ENROLLER)
    assert refused.value.code == code
    assert await FileVoiceStore(tmp_path).list("acme") == []


async def test_a_principal_with_a_bad_tenant_cannot_enrol(service: Enrollment) -> None:
    with pytest.raises(EnrollmentRejected) as refused:
        await service.enroll(request(), dataclasses.replace(ENROLLER, tenant="../acme"))
    assert refused.value.code == "forbidden"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limited(tmp_path: Path, limits: EnrollmentLimits) -> Enrollment:
    return Enrollment(FileVoiceStore(tmp_path), None, now=lambda: NOON, limits=limits)


def on(clock: Clock) -> Limiter:
    """Limits counted in this process on ``clock``."""
    return Limiter(LocalLimits(clock))


async def test_the_quota_is_checked_before_the_audio_is_decoded(tmp_path: Path) -> None:
    limits = EnrollmentLimits(max_voices=2)
    service = limited(tmp_path, limits)
    await service.enroll(request("ann"), ENROLLER)
    await service.enroll(request("bob"), ENROLLER)
    with pytest.raises(EnrollmentRejected) as refused:
        await service.enroll(dataclasses.replace(request("cy"), audio=b"not audio"), ENROLLER)
    assert refused.value.code == "quota_exceeded" and "(2)" in refused.value.message
    with pytest.raises(EnrollmentRejected) as taken:  # a taken name is told as such, not as the quota
        await service.enroll(request("ann"), ENROLLER)
    assert taken.value.code == "voice_exists"
    await service.enroll(request("ann"), OTHER)  # another tenant has its own quota
    await FileVoiceStore(tmp_path).remove("acme", "bob")
    await service.enroll(request("cy"), ENROLLER)
    assert [r.name for r in await FileVoiceStore(tmp_path).list("acme")] == ["ann", "cy"]
    assert await limits.running("acme") == 0


async def test_two_enrollments_at_once_cannot_both_take_the_last_place(tmp_path: Path) -> None:
    service = limited(tmp_path, EnrollmentLimits(max_voices=1))
    results = await asyncio.gather(
        service.enroll(request("ann"), ENROLLER), service.enroll(request("bob"), ENROLLER), return_exceptions=True
    )
    refusals = [r for r in results if isinstance(r, EnrollmentRejected)]
    assert len(refusals) == 1 and refusals[0].code == "quota_exceeded"
    assert len(await FileVoiceStore(tmp_path).list("acme")) == 1


async def test_every_decoded_upload_counts_toward_the_rate(tmp_path: Path) -> None:
    clock = Clock()
    limits = EnrollmentLimits(burst=2, per_hour=1, limiter=on(clock))
    service = limited(tmp_path, limits)
    with pytest.raises(EnrollmentRejected) as bad:
        await service.enroll(dataclasses.replace(request("ann"), audio=b"not audio"), ENROLLER)
    assert bad.value.code == "bad_audio"  # decoded, refused: it counts
    await service.enroll(request("ann"), ENROLLER)
    await service.ensure_allowed("globex")  # other tenants are not held back
    with pytest.raises(EnrollmentRejected) as limited_now:
        await service.ensure_allowed("acme")  # the hint before an upload
    assert limited_now.value.code == "rate_limited" and limited_now.value.retry_after_s == 3600
    with pytest.raises(EnrollmentRejected) as refused:
        await service.enroll(request("bob"), ENROLLER)
    assert refused.value.code == "rate_limited" and "try again in 3600 s" in refused.value.message
    clock.now += 3600
    await service.enroll(request("bob"), ENROLLER)
    assert await limits.running("acme") == 0


async def test_refusals_before_decoding_cost_nothing(tmp_path: Path) -> None:
    service = limited(tmp_path, EnrollmentLimits(burst=1, per_hour=1))
    for _ in range(5):
        with pytest.raises(EnrollmentRejected):
            await service.enroll(request("bad name!"), ENROLLER)
        with pytest.raises(EnrollmentRejected):
            await service.enroll(request(consent=""), ENROLLER)
        with pytest.raises(EnrollmentRejected):
            await service.enroll(request(), CALLER)
    await service.enroll(request(), ENROLLER)
