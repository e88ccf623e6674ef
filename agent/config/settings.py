"""All settings in one object, read from the environment (``AGENT_<SECTION>__<FIELD>``) or an env file.

Reason to change: a section is added, or a rule binds fields of two sections. The sections live beside this
module, one per reason to change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent.config.audio import AudioSettings, EchoSettings
from agent.config.auth import AuthSettings
from agent.config.limits import LimitsSettings
from agent.config.models import AsrSettings, LlmSettings, TtsSettings
from agent.config.phone import AudioSocketSettings, TelnyxSettings, TwilioSettings, VonageSettings
from agent.config.server import ServerSettings
from agent.config.tools import ToolSettings
from agent.config.tracing import TracingSettings, with_otel_environment
from agent.config.turns import SPECULATIVE_LOCAL_MS, SPECULATIVE_REMOTE_MS, TurnSettings, VadSettings
from agent.config.voices import FidelitySettings, VoicesSettings


class Settings(BaseSettings):
    """All settings. Build with ``Settings()`` (environment) or ``Settings(_env_file=path)``."""

    model_config = SettingsConfigDict(
        env_prefix="AGENT_",
        env_nested_delimiter="__",
        extra="ignore",
        case_sensitive=False,
    )

    log_level: str = "INFO"
    server: ServerSettings = ServerSettings()
    audio: AudioSettings = AudioSettings()
    vad: VadSettings = VadSettings()
    turn: TurnSettings = TurnSettings()
    asr: AsrSettings = AsrSettings()
    llm: LlmSettings = LlmSettings()
    tts: TtsSettings = TtsSettings()
    voices: VoicesSettings = VoicesSettings()
    twilio: TwilioSettings = TwilioSettings()
    telnyx: TelnyxSettings = TelnyxSettings()
    vonage: VonageSettings = VonageSettings()
    audiosocket: AudioSocketSettings = AudioSocketSettings()
    auth: AuthSettings = AuthSettings()
    echo: EchoSettings = EchoSettings()
    fidelity: FidelitySettings = FidelitySettings()
    tools: ToolSettings = ToolSettings()
    tracing: TracingSettings = TracingSettings()
    limits: LimitsSettings = LimitsSettings()

    @property
    def speculative_ms(self) -> int:
        """``turn.speculative_ms``, or where unset, the default for the backends: ``SPECULATIVE_REMOTE_MS`` when
        the language model (bedrock, openai) or the voice (sagemaker, vllm-omni) is remote, else
        ``SPECULATIVE_LOCAL_MS``."""
        if self.turn.speculative_ms is not None:
            return self.turn.speculative_ms
        remote = self.llm.backend != "local" or self.tts.backend != "piper"
        return SPECULATIVE_REMOTE_MS if remote else SPECULATIVE_LOCAL_MS

    @model_validator(mode="before")
    @classmethod
    def _otel_environment(cls, data: Any) -> Any:
        """OpenTelemetry's standard variables (``OTEL_*``, no ``AGENT_`` prefix) set ``tracing``."""
        return with_otel_environment(data, os.environ)

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.vad.max_utterance_ms <= self.vad.min_utterance_ms:
            raise ValueError("vad.max_utterance_ms must be larger than vad.min_utterance_ms")
        if self.vad.max_turn_ms < self.vad.max_utterance_ms:
            raise ValueError("vad.max_turn_ms must be at least vad.max_utterance_ms")
        if not self.turn.hangover_min_ms <= self.vad.hangover_ms <= self.turn.hangover_max_ms:
            raise ValueError(
                "need turn.hangover_min_ms <= vad.hangover_ms <= turn.hangover_max_ms, got "
                f"{self.turn.hangover_min_ms} / {self.vad.hangover_ms} / {self.turn.hangover_max_ms}"
            )
        if self.turn.acoustic_unsure > self.turn.acoustic_sure:
            raise ValueError("need turn.acoustic_unsure <= turn.acoustic_sure")
        if self.turn.text_unsure > self.turn.text_sure:
            raise ValueError("need turn.text_unsure <= turn.text_sure")
        if self.turn.text_doubt > self.turn.text_sure:
            raise ValueError("need turn.text_doubt <= turn.text_sure")
        return self


def load_settings(env_file: Path | None = None) -> Settings:
    """Read settings once: environment variables win over the optional env file."""
    if env_file is not None:
        return Settings(_env_file=env_file)
    return Settings()
