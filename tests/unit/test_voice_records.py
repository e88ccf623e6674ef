"""Voice records: name rules, stored form and migration of older records, and what callers are shown."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.errors import EnrollmentRejected, UnknownVoice
from agent.ports import ConsentRecord, VoiceRecord
from agent.voices.records import (
    check_storable,
    is_valid_asset_key,
    is_valid_name,
    lookup,
    normalize_name,
    record_from_dict,
    record_to_dict,
    record_wire,
)

SHA = "ab" * 32
CONSENT = ConsentRecord("I, Ann, agree.", "Ann", "2026-03-01T09:00:00+00:00", SHA, "tok:k1", "acme")
RECORD = VoiceRecord(
    "ann", "cd" * 16, "Hello, I am Ann.", "English", CONSENT, SHA, 5.5, "2026-03-01T09:00:00+00:00", "acme"
)


@pytest.mark.parametrize(("raw", "canonical"), [("Ann", "ann"), (" bob-2 ", "bob-2"), ("x_y", "x_y"), ("9", "9")])
def test_names_are_canonicalised(raw: str, canonical: str) -> None:
    assert normalize_name(raw) == canonical and is_valid_name(canonical)
    assert is_valid_name(raw) is (raw == canonical)


@pytest.mark.parametrize("bad", ["", " ", "-a", "_a", "a/b", "../x", "a b", "x" * 65, "Ünï", "a.b", None, 7])
def test_bad_names_are_refused_or_unknown(bad: Any) -> None:
    with pytest.raises(EnrollmentRejected) as refused:
        normalize_name(bad)
    assert refused.value.code == "bad_name"
    with pytest.raises(UnknownVoice):
        lookup("default", bad)


@pytest.mark.parametrize("tenant", ["", "ACME", "a/b", "../x", "x" * 65, "-a"])
def test_bad_tenants_have_no_voices(tenant: str) -> None:
    with pytest.raises(UnknownVoice):
        lookup(tenant, "ann")


def test_asset_keys_are_safe_file_names() -> None:
    assert all(is_valid_asset_key(k) for k in ("phrase-apology", "phrase-idle_prompt", "a"))
    assert not any(is_valid_asset_key(k) for k in ("", ".x", "../x", "a/b", "A", "x" * 65, "a.pcm"))


def test_stored_form_round_trips_through_json() -> None:
    data = json.loads(json.dumps(record_to_dict(RECORD)))
    assert data["consent"]["speaker"] == "Ann" and data["tenant"] == "acme"
    assert record_from_dict(data) == RECORD
    assert check_storable(RECORD) is None


def test_a_record_of_the_previous_version_is_migrated() -> None:
    old = {
        "name": "ann", "voice_id": "cd" * 16, "transcript": "Hi.", "language": "English",
        "consent": "I, Ann, agree.", "sha256": SHA, "duration_s": 4, "created_at": "2025-01-02T03:04:05+00:00",
    }  # fmt: skip
    record = record_from_dict(old)
    assert record.tenant == "default" and record.duration_s == 4.0
    assert record.consent == ConsentRecord(
        "I, Ann, agree.", "", "2025-01-02T03:04:05+00:00", SHA, "migrated", "default"
    )
    assert record.consent.covers(SHA, "default") and not record.consent.covers(SHA, "acme")
    assert record_from_dict(record_to_dict(record)) == record


@pytest.mark.parametrize(
    "change",
    [
        {"consent": None},
        {"consent": {"statement": "x"}},
        {"tenant": "Not/A/Tenant"},
        {"duration_s": "long"},
        {"duration_s": True},
        {"name": None, "voice_id": None, "transcript": None, "language": None, "sha256": None, "created_at": None},
    ],
)
def test_damaged_records_are_value_errors(change: dict[str, Any]) -> None:
    data = {**record_to_dict(RECORD), **change}
    for key in [k for k, v in change.items() if v is None and k != "consent"]:
        del data[key]
    with pytest.raises(ValueError, match="bad voice record"):
        record_from_dict(data)


def test_a_store_refuses_records_it_cannot_vouch_for() -> None:
    import dataclasses

    assert "name" in str(check_storable(dataclasses.replace(RECORD, name="Ann")))
    assert "id" in str(check_storable(dataclasses.replace(RECORD, voice_id="../../etc")))
    assert "consent" in str(check_storable(dataclasses.replace(RECORD, sha256="00" * 32)))
    assert "consent" in str(check_storable(dataclasses.replace(RECORD, tenant="globex")))


def test_callers_see_only_what_their_scope_needs() -> None:
    basic = record_wire(RECORD, detail=False)
    assert basic == {"name": "ann", "language": "English", "duration_s": 5.5, "created_at": "2026-03-01T09:00:00+00:00"}
    detail = record_wire(RECORD, detail=True)
    assert detail["transcript"] == "Hello, I am Ann." and detail["sha256"] == SHA
    assert detail["consent"] == {
        "statement": "I, Ann, agree.",
        "speaker": "Ann",
        "consented_at": "2026-03-01T09:00:00+00:00",
        "enrolled_by": "tok:k1",
    }
    for body in (basic, detail):
        text = json.dumps(body)
        assert "acme" not in text and RECORD.voice_id not in text  # never the tenant or internal ids
