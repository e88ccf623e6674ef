"""Settings: the only reader of ``os.environ``.

Every value can be set with an environment variable ``AGENT_<SECTION>__<FIELD>`` (for example
``AGENT_SERVER__PORT=9000``) or from a ``.env``-style file named by ``--env-file``. ``config/local.env``
documents each one. Settings are read once in ``agent.__main__`` and passed down as typed values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SUPPORTED_INPUT_RATES: tuple[int, ...] = (8000, 16000, 24000, 48000)
SUPPORTED_OUTPUT_RATES: tuple[int, ...] = (8000, 16000, 22050, 24000, 48000)


class ServerSettings(BaseModel):
    """WebSocket/HTTP listener and its limits."""

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    max_message_bytes: int = Field(65536, ge=1024, description="Largest WebSocket message accepted (1009).")
    max_queue: int = Field(8, ge=1, description="Incoming frames buffered before TCP backpressure.")
    ping_interval_s: float = Field(20.0, gt=0)
    ping_timeout_s: float = Field(20.0, gt=0)
    open_timeout_s: float = Field(10.0, gt=0)
    close_timeout_s: float = Field(5.0, gt=0)
    max_sessions: int = Field(16, ge=1, description="Concurrent sessions; more are refused with 503.")
    start_timeout_s: float = Field(10.0, gt=0, description="Time allowed to send session.start.")


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


class VadSettings(BaseModel):
    """Speech detection and the end-of-turn policy."""

    backend: Literal["webrtc", "silero"] = "webrtc"
    webrtc_mode: int = Field(3, ge=0, le=3)
    threshold: float = Field(0.5, gt=0, lt=1, description="Speech probability threshold (silero).")
    onset_ms: int = Field(60, ge=0, description="Voiced audio needed to declare speech started.")
    hangover_ms: int = Field(600, ge=60, description="Silence that ends a turn.")
    min_utterance_ms: int = Field(200, ge=0, description="Shorter blips are ignored.")
    max_utterance_ms: int = Field(15000, ge=1000, description="Longer speech is cut into a turn here.")
    preroll_ms: int = Field(300, ge=0, description="Audio kept from before the onset.")


class AsrSettings(BaseModel):
    """faster-whisper speech recognition."""

    model: str = Field("", description="Model path or faster-whisper name; empty = bundled tiny.en.")
    device: str = "cpu"
    compute_type: str = "int8"
    cpu_threads: int = Field(2, ge=1)
    max_concurrency: int = Field(1, ge=1, description="Transcriptions running at once.")
    language: str = "en"
    beam_size: int = Field(1, ge=1)


class LlmSettings(BaseModel):
    """Where reply text comes from."""

    backend: Literal["local"] = "local"
    system_prompt: str = "You are a helpful, concise voice assistant. Answer in one or two short sentences."
    max_history_messages: int = Field(20, ge=2)


class TtsSettings(BaseModel):
    """How replies are spoken."""

    backend: Literal["piper"] = "piper"
    piper_model: str = Field("", description="Piper .onnx path; empty = the bundled joe (en_US) voice.")
    default_voice: str | None = None
    max_concurrency: int = Field(1, ge=1, description="Syntheses running at once, server-wide.")
    cpu_threads: int = Field(1, ge=1)


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
    asr: AsrSettings = AsrSettings()
    llm: LlmSettings = LlmSettings()
    tts: TtsSettings = TtsSettings()

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.vad.max_utterance_ms <= self.vad.min_utterance_ms:
            raise ValueError("vad.max_utterance_ms must be larger than vad.min_utterance_ms")
        return self


def load_settings(env_file: Path | None = None) -> Settings:
    """Read settings once: environment variables win over the optional env file."""
    if env_file is not None:
        return Settings(_env_file=env_file)
    return Settings()
