"""Audio settings: the wire formats (``AGENT_AUDIO__*``) and the echo of the agent's own voice (``AGENT_ECHO__*``).

Reason to change: how audio is framed on the wire, or how the echo is told apart from the caller.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from agent.audio.rates import SUPPORTED_OUTPUT_RATES


class AudioSettings(BaseModel):
    """Wire audio formats."""

    output_sample_rate: int = 24000
    output_frame_ms: int = Field(40, ge=10, le=200, description="Size of each binary audio frame sent.")
    max_input_frame_ms: int = Field(100, ge=10, le=1000)
    outbound_buffer_ms: int = Field(2000, ge=200, description="Audio queued ahead of the socket.")

    @field_validator("output_sample_rate")
    @classmethod
    def _rate(cls, value: int) -> int:
        if value not in SUPPORTED_OUTPUT_RATES:
            raise ValueError(f"output_sample_rate must be one of {SUPPORTED_OUTPUT_RATES}")
        return value


class EchoSettings(BaseModel):
    """The agent's own voice coming back in the caller's microphone (``agent.audio.echo``, docs/benchmarks.md)."""

    mode: Literal["off", "gate"] = Field(
        "gate", description="gate: caller frames that hold only the echo of the reply are not speech."
    )
    browser: bool = Field(False, description="Also on /ws (browsers cancel echo themselves; a CLI on speakers not).")
    max_delay_ms: int = Field(500, ge=50, le=2000, description="Longest echo delay searched (network, device, room).")
