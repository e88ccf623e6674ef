"""Voice records: name rules, the stored JSON form (with migration of older records) and the wire form.

Shared by the voice stores (``agent.adapters.*_voice_store``), the enrollment service and the runtime, so
that adapters never import the service. Pure functions, no I/O.

Stored form: ``record_to_dict`` / ``record_from_dict``. Records written before consent became a record
(issue 8) have ``"consent": "<statement>"`` and no ``tenant``: ``record_from_dict`` turns them into a
``ConsentRecord`` with that statement, no speaker, ``consented_at`` = the voice's ``created_at``, the
record's own audio SHA-256, ``enrolled_by`` ``"migrated"``, in tenant ``default``, so those voices keep
working after the upgrade.

Wire form: ``record_wire`` is the only form sent to callers. A caller only ever sees its own tenant's
voices, and the tenant itself is never sent. Every caller sees what it needs to pick a voice (name,
language, length, date); a caller that may manage voices (``enroll`` scope) also sees the transcript,
the audio checksum and the consent record. Internal ids are never sent.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from agent.errors import EnrollmentRejected, UnknownVoice
from agent.ports import ConsentRecord, VoiceRecord
from agent.security.auth import DEFAULT_TENANT, is_valid_tenant

MAX_NAME = 64
MIGRATED = "migrated"
"""``enrolled_by`` of a consent record made from a statement stored by an earlier version."""
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_ASSET_KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_VOICE_ID = re.compile(r"[0-9a-f]{8,64}")


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
    """``name`` is already canonical."""
    try:
        return normalize_name(name) == name
    except EnrollmentRejected:
        return False


def lookup(tenant: str, name: str) -> tuple[str, str]:
    """``(tenant, canonical name)`` for a store lookup; a bad tenant or name is a voice that does not exist."""
    if not is_valid_tenant(tenant):
        raise UnknownVoice(name if isinstance(name, str) else "")
    try:
        return tenant, normalize_name(name)
    except EnrollmentRejected:
        raise UnknownVoice(name if isinstance(name, str) else "") from None


def is_valid_asset_key(key: str) -> bool:
    """Asset keys (``phrase-apology``…): 1–64 lower-case letters, digits, ``-``, ``_``; safe as file names."""
    return isinstance(key, str) and _ASSET_KEY.fullmatch(key) is not None


def check_asset_key(key: str) -> str:
    """``key`` if valid; raises ``ValueError`` (a programming error, not caller input) otherwise."""
    if not is_valid_asset_key(key):
        raise ValueError(f"bad asset key {str(key)[:80]!r}")
    return key


def is_valid_voice_id(voice_id: str) -> bool:
    """Voice ids are made by the server (hex); anything else in a record is refused before it becomes a path."""
    return isinstance(voice_id, str) and _VOICE_ID.fullmatch(voice_id) is not None


def check_storable(record: VoiceRecord) -> str | None:
    """Why a store must refuse ``record`` (non-canonical name, bad id or tenant, consent for other audio), or None."""
    if not is_valid_name(record.name):
        return f"non-canonical voice name {record.name!r}"
    if not is_valid_voice_id(record.voice_id):
        return f"bad voice id {record.voice_id!r}"
    if not is_valid_tenant(record.tenant):
        return f"bad tenant {record.tenant!r}"
    if not record.consent.covers(record.sha256, record.tenant):
        return "the consent record does not cover this audio and tenant"
    return None


def consent_to_dict(consent: ConsentRecord) -> dict[str, str]:
    return {key: str(value) for key, value in asdict(consent).items()}


def consent_from_dict(data: Any) -> ConsentRecord:
    """Parse ``consent_to_dict`` output; raises ``ValueError``."""
    if not isinstance(data, dict):
        raise ValueError("a consent record must be a JSON object")
    fields = ("statement", "speaker", "consented_at", "audio_sha256", "enrolled_by", "tenant")
    values = [data.get(field) for field in fields]
    if not all(isinstance(value, str) for value in values):
        raise ValueError(f"a consent record needs string fields {', '.join(fields)}")
    return ConsentRecord(*[str(value) for value in values])


def record_to_dict(record: VoiceRecord) -> dict[str, Any]:
    """The stored JSON form of a record (never sent to callers as is: see ``record_wire``)."""
    data = asdict(record)
    data["consent"] = consent_to_dict(record.consent)
    return data


def migrated_consent(statement: str, sha256: str, created_at: str) -> ConsentRecord:
    """The consent record of a voice enrolled before consent was a record: its statement, for its audio."""
    return ConsentRecord(
        statement=statement,
        speaker="",
        consented_at=created_at,
        audio_sha256=sha256,
        enrolled_by=MIGRATED,
        tenant=DEFAULT_TENANT,
    )


def record_from_dict(data: Any) -> VoiceRecord:
    """Parse a stored record, current or older form; raises ``ValueError`` if a field is missing or wrong."""
    if not isinstance(data, dict):
        raise ValueError("a voice record must be a JSON object")
    try:
        sha256, created_at = str(data["sha256"]), str(data["created_at"])
        tenant = data.get("tenant", DEFAULT_TENANT)
        if not isinstance(tenant, str) or not is_valid_tenant(tenant):
            raise ValueError(f"bad tenant {str(tenant)[:80]!r}")
        consent = data["consent"]
        if isinstance(consent, str):  # written before consent became a record
            consent_record = migrated_consent(consent, sha256, created_at)
        else:
            consent_record = consent_from_dict(consent)
        duration = data["duration_s"]
        if isinstance(duration, bool) or not isinstance(duration, int | float):
            raise ValueError("duration_s must be a number")
        return VoiceRecord(
            name=str(data["name"]),
            voice_id=str(data["voice_id"]),
            transcript=str(data["transcript"]),
            language=str(data["language"]),
            consent=consent_record,
            sha256=sha256,
            duration_s=float(duration),
            created_at=created_at,
            tenant=tenant,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"bad voice record: {exc}") from exc


def record_wire(record: VoiceRecord, *, detail: bool) -> dict[str, Any]:
    """What a caller of ``record.tenant`` is shown (``voices``, ``voice.enrolled``); see the module docstring.

    ``detail``: the caller may manage voices (``enroll`` scope): add transcript, checksum and consent.
    """
    body: dict[str, Any] = {
        "name": record.name,
        "language": record.language,
        "duration_s": record.duration_s,
        "created_at": record.created_at,
    }
    if detail:
        consent = record.consent
        body["transcript"] = record.transcript
        body["sha256"] = record.sha256
        body["consent"] = {
            "statement": consent.statement,
            "speaker": consent.speaker,
            "consented_at": consent.consented_at,
            "enrolled_by": consent.enrolled_by,
        }
    return body
