"""The models' settings: speech recognition (``AGENT_ASR__*``), the language model (``AGENT_LLM__*``) and the
voice (``AGENT_TTS__*``), local or remote.

Reason to change: a model backend gains or loses an option.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from agent.config.credentials import WithSecrets
from agent.config.policy_fields import core
from agent.core.policies import SessionConfig
from agent.languages import AUTO, parse_language


class AsrSettings(BaseModel):
    """faster-whisper speech recognition."""

    model: str = Field(
        "",
        description="Empty = the bundled Whisper tiny.en (English only); 'base' = Whisper base, multilingual, "
        "installed by make; or a model directory, or a faster-whisper name already in the local cache.",
    )
    device: str = "cpu"
    compute_type: str = "int8"
    cpu_threads: int = Field(
        1,
        ge=1,
        description="CTranslate2 threads per transcription. 1 (with server.model_workers = cores) serves the most "
        "callers: jobs on separate cores scale linearly, threads within one job do not.",
    )
    max_concurrency: int = Field(
        1, ge=1, description="Transcriptions at once when the model runs alone (the server shares model_workers)."
    )
    language: str = Field(
        "auto",
        description="auto: a multilingual model detects each call's language (agent.languages; an English-only "
        "model answers en); or one of the ten codes (en zh ja ko de fr ru pt es it) for every call.",
    )
    beam_size: int = Field(1, ge=1)
    window: Literal["fit", "full"] = Field(
        "fit", description="fit: encode only the utterance plus window_pad_s; full: Whisper's fixed 30 s."
    )
    window_pad_s: float = Field(1.0, ge=0.2, le=5.0, description="Silence appended in the fit window.")
    window_min_s: float = Field(5.0, ge=0.0, le=30.0, description="Shortest fit window (accuracy vs speed).")
    prompt: str | None = Field(
        None,
        max_length=400,
        description="Text Whisper takes as said before each utterance; it sets the style of the transcript. "
        "Unset: a short prompt full of the language's fillers (one for each of the ten), so that 'um', 'uh' and "
        "trailing words stay in the transcript and a thinking pause is not taken for the end of a sentence; "
        "empty = no prompt (for every language).",
    )

    @field_validator("language")
    @classmethod
    def _language_code(cls, value: str) -> str:
        return parse_language(value) or AUTO


class LlmSettings(WithSecrets):
    """Where reply text comes from: the offline responder, Amazon Bedrock, or an OpenAI-compatible server."""

    backend: Literal["local", "bedrock", "openai"] = "local"
    system_prompt: str = core(
        SessionConfig,
        "system_prompt",
        "You are a helpful, concise voice assistant. Answer in one or two short sentences.",
    )
    max_history_messages: int = core(SessionConfig, "max_history_messages", ge=2)
    model: str = Field("", description="Bedrock model/inference-profile id, or the OpenAI-compatible model name.")
    max_tokens: int = Field(400, ge=1, description="Longest reply, in model tokens.")
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    connect_timeout_s: float = Field(5.0, gt=0)
    read_timeout_s: float = Field(30.0, gt=0, description="Longest wait for the next bytes of a reply stream.")
    region: str = Field("", description="Bedrock region; empty = the AWS default chain (AWS_REGION, profile).")
    endpoint_url: str = Field("", description="Bedrock endpoint override (VPC endpoint, emulator); empty = AWS.")
    max_attempts: int = Field(2, ge=1, le=5, description="Bedrock calls including SDK retries (1 = no retry).")
    base_url: str = Field("http://127.0.0.1:11434/v1", description="OpenAI-compatible API root (before /chat).")
    api_key: SecretStr | None = Field(None, description="Bearer token for the OpenAI-compatible server.")

    @model_validator(mode="after")
    def _model_named(self) -> LlmSettings:
        if self.backend != "local" and not self.model.strip():
            raise ValueError(f"llm.model is required for the {self.backend} backend")
        return self


class TtsSettings(WithSecrets):
    """How replies are spoken."""

    backend: Literal["piper", "sagemaker", "vllm-omni"] = "piper"
    piper_model: str = Field("", description="Piper .onnx path; empty = the bundled joe (en_US) voice.")
    default_voice: str | None = None
    max_concurrency: int = Field(
        1, ge=1, description="Syntheses at once when Piper runs alone (the server shares server.model_workers)."
    )
    cpu_threads: int = Field(
        1, ge=1, description="ONNX threads per Piper synthesis (1: one job per core serves the most callers)."
    )
    # Cloned voices (backend sagemaker / vllm-omni): Qwen3-TTS-12Hz-1.7B-Base behind vLLM-Omni.
    endpoint_name: str = Field("qwen3-tts-voice-clone", description="SageMaker endpoint name.")
    region: str = Field("us-east-1", description="AWS region of the SageMaker endpoint.")
    endpoint_url: str | None = Field(None, description="Override the SageMaker runtime URL (e.g. the emulator).")
    base_url: str = Field("http://127.0.0.1:8091", description="vllm-omni backend: the server's base URL.")
    api_key: SecretStr | None = Field(None, description="vllm-omni backend: optional bearer token.")
    streaming: bool = Field(True, description="Stream audio as it is generated (else one WAV per sentence).")
    language: str = Field("", description="Language to speak (en, German, auto...); empty = the voice's own.")
    pipeline_depth: int = Field(2, ge=1, le=8, description="Sentence requests in flight per reply.")
    connect_timeout_s: float = Field(2.0, gt=0)
    read_timeout_s: float = Field(20.0, gt=0, description="Longest silence while reading a response.")
    max_pool_connections: int = Field(32, ge=1, description="HTTP connections to the endpoint, server-wide.")
    endpoint_concurrency: int = Field(
        0,
        ge=0,
        description="Speech requests in flight to the endpoint, server-wide; more wait, first sentences first. "
        "0 = max_pool_connections.",
    )
    max_attempts: int = Field(3, ge=1, le=10, description="Tries per sentence, the first included.")
    retry_base_s: float = Field(0.2, gt=0, description="First retry pause (doubles, capped, jittered).")
    retry_max_s: float = Field(2.0, gt=0)
    deadline_s: float = Field(10.0, gt=0, description="Time allowed to a sentence's first audio, retries included.")
    merge_below_chars: int = Field(24, ge=0, description="Shorter sentences are sent with the next one.")
    max_request_chars: int = Field(400, ge=20, description="Longer sentences are cut at words.")
    turn_retry_budget: int = Field(
        4, ge=0, le=50, description="Retries one reply may spend, all its sentences together (0 = none)."
    )
    breaker_failures: int = Field(
        5, ge=1, description="Consecutive failed or timed-out requests that open the endpoint's circuit breaker."
    )
    breaker_reset_s: float = Field(
        30.0, gt=0, description="Time an open breaker sends replies to the fallback voice before one probe."
    )
    warm_phrases: bool = Field(
        True, description="Synthesize and store a voice's fixed phrases in the background at session start."
    )
