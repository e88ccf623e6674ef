"""Enrolled voices' settings: where they are stored and who may enrol them (``AGENT_VOICES__*``), and how their
fidelity is sampled (``AGENT_FIDELITY__*``).

Reason to change: the voice store or the fidelity sampling gains or loses an option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class VoicesSettings(BaseModel):
    """Where enrolled (cloned) voices are stored, whether clients may enrol them over /ws, and how many and how
    fast one tenant may enrol (``agent.voices.enrollment.EnrollmentLimits``)."""

    backend: Literal["file", "s3"] = "file"
    dir: Path = Field(
        Path("~/.local/share/voice-agent/voices"), description="Voice store directory (file backend); ~ expands."
    )
    s3_bucket: str = Field("", description="Bucket of the s3 backend.")
    s3_prefix: str = Field("voices/", description="Key prefix inside the bucket.")
    s3_region: str | None = None
    s3_endpoint_url: str | None = Field(None, description="S3-compatible endpoint (MinIO, a test server).")
    allow_ws_enrollment: bool = Field(True, description="Accept voice.enroll.* messages over /ws.")
    max_voices_per_tenant: int = Field(
        20,
        ge=0,
        description="Voices one tenant may hold (stored plus being enrolled); more are refused with "
        "quota_exceeded. The voices CLI keeps to it too unless given --ignore-quota. 0 = no quota.",
    )
    enroll_burst: int = Field(
        5, ge=1, description="Enrollments one tenant may start at once before enroll_per_hour applies."
    )
    enroll_per_hour: float = Field(
        20.0,
        ge=0,
        description="Enrollments per hour per tenant after the burst (each decodes an upload, whether accepted "
        "or not); more are refused with rate_limited and a retry time. Per server process, or across replicas "
        "with AGENT_LIMITS__REDIS_URL; the CLI is not limited. 0 = no rate limit.",
    )


class FidelitySettings(BaseModel):
    """Voice fidelity on ``/metrics``: replies sampled and scored against their voice's reference audio
    (``agent.runtime.call.fidelity``, speaker similarity; a drift signal, not a verifier)."""

    sample_every_min: float = Field(
        10.0,
        ge=0,
        description="At most one reply scored per voice and language this often, in minutes; 0 = off. Off anyway "
        "when the speaker model is not installed (make speaker-model).",
    )
    model: str = Field(
        "",
        description="resemblyzer's pretrained.pt; empty = the one the install step extracts (another path: the same"
        " file, its sha256 checked at load).",
    )
