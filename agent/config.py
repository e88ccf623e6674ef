"""Settings: the only reader of ``os.environ``.

Every value can be set with an environment variable ``AGENT_<SECTION>__<FIELD>`` (for example
``AGENT_SERVER__PORT=9000``) or from a ``.env``-style file named by ``--env-file``. ``config/local.env``
documents each one. Settings are read once in ``agent.__main__`` and passed down as typed values.
"""

from __future__ import annotations

import ipaddress
import typing
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent.audio.rates import SUPPORTED_OUTPUT_RATES
from agent.core.endpointing import BACKCHANNELS
from agent.security.origins import normalize_origin


def cidrs(value: list[str]) -> list[str]:
    """Addresses or networks (CIDR), normalised; raises ``ValueError`` naming the first that is neither."""
    networks = []
    for peer in value:
        try:
            networks.append(str(ipaddress.ip_network(peer.strip(), strict=False)))
        except ValueError:
            raise ValueError(f"not an IP address or network (CIDR): {peer!r}") from None
    return networks


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
    max_sessions: int = Field(
        64,
        ge=1,
        description="Concurrent sessions (started: session.start, a phone call's start), a memory bound; more are "
        "refused with 503 full. Load is judged by work (admission_wait_ms), not by this.",
    )
    max_opening: int = Field(
        64,
        ge=1,
        description="Connections whose session has not started yet (before session.start or a phone call's "
        "start, authenticated or not), in total; more are refused with 503. They are never counted as load.",
    )
    max_opening_per_peer: int = Field(
        8,
        ge=0,
        description="Connections whose session has not started yet, per client address (IPv6: per /64); more are "
        "refused with 429. 0 = no bound per address. Behind your own proxies, set trusted_proxies.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Addresses or networks (CIDR) of your own proxies (load balancer, ingress): a connection from "
        "one is counted under the right-most X-Forwarded-For address that is not one of them; from anywhere "
        "else the header is ignored.",
    )
    admission_wait_ms: int = Field(
        500,
        ge=0,
        description="A new call is refused (503 busy) while a new first sentence would wait longer than this "
        "for the models, behind the work queued and running and one turn for every caller speaking now (idle "
        "sessions and connections that have not started count nothing); 0 = never refuse for load.",
    )
    model_workers: int = Field(
        0,
        ge=0,
        description="Worker threads running the local models (ASR and Piper share them, in deadline order); "
        "0 = cores // max(asr.cpu_threads, tts.cpu_threads), so the models never oversubscribe the cores.",
    )
    event_loop: Literal["auto", "asyncio", "uvloop"] = Field(
        "auto",
        description="The event loop: auto = uvloop when installed (about half the per-frame cost), else asyncio.",
    )
    drain_s: float = Field(
        30.0,
        ge=0,
        description="SIGTERM: time live calls get to finish the reply in progress and hear the goodbye; "
        "then every call is closed 1001 and the process exits.",
    )
    start_timeout_s: float = Field(10.0, gt=0, description="Time allowed to send session.start.")
    send_timeout_s: float = Field(
        10.0, gt=0, description="Longest wait to hand one message to a client; a client that does not read is closed."
    )
    max_outbox_bytes: int = Field(
        1 << 20,
        ge=65536,
        description="Messages (text and audio) queued for one client beyond its audio buffer; a client that lets "
        "more pile up is not reading: closed 1008 at once.",
    )
    send_buffer_bytes: int = Field(
        65536,
        ge=0,
        description="The kernel's send buffer of each client socket (SO_SNDBUF); small, so that a client that "
        "stops reading blocks the next send within seconds (send_timeout_s) instead of absorbing minutes of "
        "audio; 0 = the system's default.",
    )
    max_input_rate: float = Field(1.5, gt=1.0, description="Caller audio allowed, as a multiple of real time.")
    input_rate_window_s: float = Field(5.0, gt=0, description="Burst of audio allowed: max_input_rate x this.")
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins (scheme://host[:port]) allowed on the WebSocket paths, besides the "
        "server's own address and localhost; any other Origin gets HTTP 403.",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: list[str]) -> list[str]:
        return cidrs(value)

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        normalized = []
        for origin in value:
            found = normalize_origin(origin)
            if found is None:
                raise ValueError(f"not an origin (scheme://host[:port], no path): {origin!r}")
            normalized.append(found)
        return normalized


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
    hangover_ms: int = Field(420, ge=60, description="Silence that ends a turn when its ending is unclear.")
    min_utterance_ms: int = Field(200, ge=0, description="Shorter blips are ignored.")
    max_utterance_ms: int = Field(15000, ge=1000, description="Longer speech is cut into a turn here.")
    preroll_ms: int = Field(300, ge=0, description="Audio kept from before the onset.")
    tail_floor_db: float = Field(
        30.0,
        ge=0,
        le=60,
        description="Voiced frames this far below the speaker's recent level count as silence (the fading "
        "tail of the last word); 0 = off.",
    )


SPECULATIVE_LOCAL_MS = 120
SPECULATIVE_REMOTE_MS = 60
"""The speculative transcript's default wait: with a remote language model or voice the preemptive reply it starts
is on the caller's critical path (the service's first token and first audio take longer than the end of turn),
so asking 60 ms earlier takes ~70 ms off every reply for a few more discarded requests; with local models the
reply is ready by the end of turn either way (docs/benchmarks.md, "an earlier speculative transcript")."""


class TurnSettings(BaseModel):
    """Fast end of turn, barge-in and idle handling (see docs/ARCHITECTURE.md, "Turn-taking")."""

    speculative_ms: int | None = Field(
        None,
        ge=0,
        description="Trailing silence before a speculative transcript (and the preemptive reply); 0 = off; unset = "
        f"{SPECULATIVE_REMOTE_MS} with a remote language model or voice, {SPECULATIVE_LOCAL_MS} with local ones "
        "(Settings.speculative_ms).",
    )
    hangover_min_ms: int = Field(320, ge=60, description="Silence that ends a turn that sounds finished.")
    hangover_max_ms: int = Field(1500, ge=60, description="Silence that ends a turn that trails off.")
    fragment_words: int = Field(
        3, ge=0, le=10, description="A transcript of at most this many words (not a short answer) waits FRAGMENT_MS."
    )
    fragment_numbers: bool = Field(True, description="A transcript ending in a number waits FRAGMENT_MS.")
    fragment_ms: int = Field(700, ge=0, le=5000, description="Hangover of a fragment; 0 = HANGOVER_MAX_MS.")
    acoustic: Literal["smart-turn", "off"] = Field(
        "smart-turn",
        description="Acoustic turn completion: Smart Turn v3.2 (installed by make) scores the sound of each pause "
        "with the speculative transcript, and both decide the hangover; off = the words alone.",
    )
    acoustic_model: str = Field(
        "", description="Smart Turn ONNX file; empty = the one the install step extracted into the environment."
    )
    acoustic_sure: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        description="Sound score at or above which a sentence that reads finished ends at HANGOVER_MIN_MS (a fragment "
        "at AGENT_VAD__HANGOVER_MS, or HANGOVER_MIN_MS with ACOUSTIC_SURE_FRAGMENTS).",
    )
    acoustic_unsure: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="Sound score at or below which the caller sounds unfinished: a fragment waits HANGOVER_MAX_MS, a "
        "sentence ACOUSTIC_UNSURE_MS; between the two thresholds the wait goes in proportion.",
    )
    acoustic_unsure_ms: int = Field(
        700,
        ge=0,
        le=5000,
        description="Wait of a sentence that reads finished but sounds unfinished; 0 = FRAGMENT_MS.",
    )
    acoustic_sure_fragments: bool = Field(
        False,
        description="A sure sound ends a fragment at HANGOVER_MIN_MS too; false = it waits AGENT_VAD__HANGOVER_MS.",
    )
    preemption: Literal["off", "llm", "llm+tts"] = Field(
        "llm+tts",
        description="Start the reply (llm) and its first sentence's speech (llm+tts) from the speculative "
        "transcript, before the end of turn; held until the turn ends, discarded if the caller goes on.",
    )
    barge_in: bool = Field(True, description="Caller speech interrupts the agent.")
    barge_in_min_ms: int = Field(300, ge=60, description="Speech needed to interrupt; coughs and clicks are shorter.")
    backchannels: list[str] = Field(
        default_factory=lambda: list(BACKCHANNELS), description="Acknowledgements that do not interrupt."
    )
    backchannel_max_ms: int = Field(900, ge=60, description="Speech this long interrupts even if it is 'yeah'.")
    pause_on_speech: bool = Field(
        True,
        description="Yield at once: the reply pauses the moment the caller starts speaking over it and resumes "
        "from where it was heard if the sound was not an interruption (a cough, an 'uh-huh'). Telephony, and "
        "/ws clients that send the 'playback.pause' capability.",
    )
    resume_after_ms: int = Field(
        250, ge=60, le=2000, description="Paused: silence after a short sound or an acknowledgement before resuming."
    )
    continue_within_ms: int = Field(
        1000,
        ge=0,
        le=5000,
        description="Speech that takes the floor from a reply and began at most this long after the end of the "
        "words that reply answers goes on with them (the caller had only paused): one turn of both; 0 = never.",
    )
    idle_prompt_s: float = Field(20.0, ge=0, description="Silence before the agent prompts once; 0 = never.")
    idle_prompt_text: str = "Are you still there?"
    idle_end_s: float = Field(60.0, ge=0, description="Silence before an abandoned session ends; 0 = never.")
    greeting_text: str = Field("", description="Spoken when a session starts; empty = no greeting.")
    apology_text: str = Field(
        "Sorry, something went wrong on my side. Could you say that again?",
        description="Spoken when a turn fails before anything was said; empty = the failure is only reported.",
    )
    hold_text: str = Field("One moment.", description="Spoken once when a reply is late; empty = never.")
    hold_after_ms: int = Field(2500, ge=0, description="Caller stopped -> no reply audio yet: hold phrase; 0 = off.")
    goodbye_text: str = Field(
        "Sorry, I have to end the call now. Goodbye.",
        description="Spoken before a call is closed because the server shuts down; empty = closed without a word.",
    )
    no_voice_text: str = Field(
        "Sorry, this line cannot take your call right now. Please try again later. Goodbye.",
        description="Spoken in the fallback voice to a phone caller whose voice (and the default voice) is not "
        "enrolled, before the call is closed; empty = closed without a word.",
    )
    asr_deadline_s: float = Field(15.0, ge=0, description="End of utterance -> transcript; 0 = no deadline.")
    reply_first_text_deadline_s: float = Field(15.0, ge=0, description="Transcript -> first reply text; 0 = none.")
    first_audio_deadline_s: float = Field(15.0, ge=0, description="Sentence queued -> its first audio; 0 = none.")
    reply_deadline_s: float = Field(120.0, ge=0, description="Transcript -> whole reply synthesized; 0 = none.")


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
        from agent.languages import AUTO, parse_language  # pure; imported here to keep the section self-contained

        return parse_language(value) or AUTO


def is_blank(value: object) -> bool:
    """An empty or whitespace-only secret (``AGENT_TWILIO__AUTH_TOKEN=``): a mistake, never a key."""
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    return isinstance(text, str) and not text.strip()


class WithSecrets(BaseModel):
    """A section whose ``SecretStr | None`` fields are credentials: one given empty or blank is unset (None),
    never the HMAC key ``''`` anyone can sign with, and its name is kept in ``blank_secrets`` so that the start-up
    check (``agent.security.exposure``) can say it was set but empty."""

    _blank: frozenset[str] = PrivateAttr(default_factory=frozenset)

    @model_validator(mode="wrap")
    @classmethod
    def _blank_is_unset(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if not isinstance(data, dict):
            return handler(data)  # a section built already keeps what it noted
        blank = frozenset(name for name in cls.secret_fields() if is_blank(data.get(name)))
        section = handler({k: None if k in blank else v for k, v in data.items()})
        section._blank = blank
        return section

    @classmethod
    def secret_fields(cls) -> tuple[str, ...]:
        """The fields holding credentials (annotated ``SecretStr | None``)."""
        return tuple(name for name, info in cls.model_fields.items() if SecretStr in typing.get_args(info.annotation))

    @property
    def blank_secrets(self) -> frozenset[str]:
        """The secret fields given empty or blank, now unset."""
        return self._blank


class LlmSettings(WithSecrets):
    """Where reply text comes from: the offline responder, Amazon Bedrock, or an OpenAI-compatible server."""

    backend: Literal["local", "bedrock", "openai"] = "local"
    system_prompt: str = "You are a helpful, concise voice assistant. Answer in one or two short sentences."
    max_history_messages: int = Field(20, ge=2)
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
        "or not); more are refused with rate_limited and a retry time. Per server process; the CLI is not "
        "limited. 0 = no rate limit.",
    )


class TwilioSettings(WithSecrets):
    """The phone gateway at ``/twilio`` (Twilio Media Streams); see docs/telephony.md."""

    auth_token: SecretStr | None = Field(
        None, description="Twilio auth token; when set, X-Twilio-Signature is verified on every handshake."
    )
    public_url: str = Field(
        "",
        description="The exact public wss:// URL Twilio connects to (signed by Twilio); empty = ws://HOST:PORT/twilio.",
    )
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to the caller.")


class TelnyxSettings(WithSecrets):
    """The phone gateway at ``/telnyx`` (Telnyx media streaming); see docs/telephony.md."""

    stream_auth_token: SecretStr | None = Field(
        None,
        description="The stream_auth_token given to Telnyx when the stream starts; when set, every handshake "
        "must carry it (header x-telnyx-streaming-auth-token, or ?token= in the stream URL for TeXML).",
    )
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to the caller.")


class VonageSettings(WithSecrets):
    """The phone gateway at ``/vonage`` (Vonage Voice API WebSockets); see docs/telephony.md."""

    signature_secret: SecretStr | None = Field(
        None,
        description="Vonage signature secret; when set, every handshake must carry Authorization: Bearer <JWT> "
        "signed with it (NCCO endpoint authorization type vonage).",
    )
    authorization: SecretStr | None = Field(
        None,
        description="When set, every handshake must carry exactly this Authorization header value (NCCO endpoint "
        "authorization type custom).",
    )
    max_token_age_s: int = Field(300, ge=10, le=86400, description="Oldest JWT (its iat) accepted at a handshake.")
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to the caller.")


class AudioSocketSettings(BaseModel):
    """The Asterisk AudioSocket gateway (TCP, no authentication of its own); see docs/telephony.md.

    Off unless ``port`` is set. Only loopback peers and the ``allowed_peers`` may connect."""

    port: int | None = Field(
        None, ge=0, le=65535, description="TCP port to listen on; unset = no AudioSocket listener (0 = a free port)."
    )
    host: str = Field("127.0.0.1", description="Address to listen on (another one needs allowed_peers).")
    allowed_peers: list[str] = Field(
        default_factory=list,
        description="Addresses or networks (CIDR) of the Asterisk servers allowed to connect, besides loopback; "
        "a connection from anywhere else is closed before a byte is read.",
    )
    voice: str = Field("", description="Voice the calls are answered in; empty = tts.default_voice.")
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to Asterisk.")

    @field_validator("port", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("allowed_peers")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        return cidrs(value)


MIN_SECRET_BYTES = 32


class AuthSettings(BaseModel):
    """Who may call: signed, expiring tokens (see docs/security.md). Auth is on when ``secret`` is set."""

    secret: SecretStr | None = Field(
        None, description="HMAC key for tokens, at least 32 bytes; unset = auth off (every caller is anonymous)."
    )
    allow_anonymous: bool = Field(
        False, description="Allow auth off (or an unsigned /twilio) on a non-loopback address."
    )
    default_ttl_s: int = Field(3600, ge=1, description="Lifetime of a minted token when none is asked for.")
    max_ttl_s: int = Field(86400, ge=1, description="Longest token lifetime minted or accepted.")

    @field_validator("secret", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("secret")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().encode()) < MIN_SECRET_BYTES:
            raise ValueError(
                f"auth.secret must be at least {MIN_SECRET_BYTES} bytes; make one with "
                "python -c 'import secrets; print(secrets.token_urlsafe(48))'"
            )
        return value

    @model_validator(mode="after")
    def _ttls(self) -> AuthSettings:
        if self.default_ttl_s > self.max_ttl_s:
            raise ValueError("auth.default_ttl_s must not exceed auth.max_ttl_s")
        return self


class EchoSettings(BaseModel):
    """The agent's own voice coming back in the caller's microphone (``agent.audio.echo``, docs/benchmarks.md)."""

    mode: Literal["off", "gate"] = Field(
        "gate", description="gate: caller frames that hold only the echo of the reply are not speech."
    )
    browser: bool = Field(False, description="Also on /ws (browsers cancel echo themselves; a CLI on speakers not).")
    max_delay_ms: int = Field(500, ge=50, le=2000, description="Longest echo delay searched (network, device, room).")


class FidelitySettings(BaseModel):
    """Voice fidelity on ``/metrics``: replies sampled and scored against their voice's reference audio
    (``agent.runtime.call.fidelity``, speaker similarity; a drift signal, not a verifier)."""

    sample_every_min: float = Field(
        10.0,
        ge=0,
        description="At most one reply scored per voice and language this often, in minutes; 0 = off. Off anyway "
        "when the speaker model is not installed (make speaker-model).",
    )
    model: str = Field("", description="resemblyzer's pretrained.pt; empty = the one the install step extracts.")


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

    @property
    def speculative_ms(self) -> int:
        """``turn.speculative_ms``, or where unset, the default for the backends: ``SPECULATIVE_REMOTE_MS`` when
        the language model (bedrock, openai) or the voice (sagemaker, vllm-omni) is remote, else
        ``SPECULATIVE_LOCAL_MS``."""
        if self.turn.speculative_ms is not None:
            return self.turn.speculative_ms
        remote = self.llm.backend != "local" or self.tts.backend != "piper"
        return SPECULATIVE_REMOTE_MS if remote else SPECULATIVE_LOCAL_MS

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.vad.max_utterance_ms <= self.vad.min_utterance_ms:
            raise ValueError("vad.max_utterance_ms must be larger than vad.min_utterance_ms")
        if not self.turn.hangover_min_ms <= self.vad.hangover_ms <= self.turn.hangover_max_ms:
            raise ValueError("need turn.hangover_min_ms <= vad.hangover_ms <= turn.hangover_max_ms")
        if self.turn.acoustic_unsure > self.turn.acoustic_sure:
            raise ValueError("need turn.acoustic_unsure <= turn.acoustic_sure")
        return self


def load_settings(env_file: Path | None = None) -> Settings:
    """Read settings once: environment variables win over the optional env file."""
    if env_file is not None:
        return Settings(_env_file=env_file)
    return Settings()
