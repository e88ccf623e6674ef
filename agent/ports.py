"""Ports: the small capabilities the server needs from the outside world.

Adapters in ``agent/adapters`` implement these; only ``agent/wiring.py`` picks and builds them.
Every method documents what it raises; vendor exceptions never cross a port (see ``agent.errors``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol

Role = Literal["system", "user", "assistant", "tool"]
"""``tool``: the result of a tool the model called (``ChatMessage.call_id`` names the call)."""

ToolChoice = str
"""Which tools the model may call: ``auto`` (any, or none), ``none`` (no call), ``required`` (at least one), or a
tool's name (that one)."""


@dataclass(frozen=True, slots=True)
class LanguageHint:
    """What the recogniser is asked for one utterance: ``language`` to transcribe in (``None``: not known yet),
    and whether it may detect another (``detect``; ``False``: the language was given, use it). The session core
    says which (``agent.core.call_language``)."""

    language: str | None
    detect: bool


class Work(StrEnum):
    """What a model job is for, which decides its tier and whether it may be dropped."""

    FINAL_TRANSCRIPT = "final_transcript"
    FIRST_SENTENCE = "first_sentence"
    PHRASE = "phrase"
    LATER_SENTENCE = "later_sentence"
    SPECULATIVE_TRANSCRIPT = "speculative_transcript"
    QUICK_TRANSCRIPT = "quick_transcript"
    TURN_SCORE = "turn_score"
    """A score of a pause (the sound's or the words'): end-of-turn work like the speculative transcript."""


@dataclass(frozen=True, slots=True)
class JobInfo:
    """What the runtime tells a model port about one call: what it is for and how long it may wait.

    ``slack_s``: time from submission until the result is needed (ignored for first-audio work, needed now; for a
    later sentence, the audio queued ahead of it; for a speculative transcript, until the turn would end). The
    job's deadline is the latest start that meets it: ``slack_s`` less the job's estimated cost.

    ``drop_after_s``: a droppable job is refused at submission when it would wait longer than this to start;
    ``None`` = its latest start (a quick transcript is worthless once the caller has spoken long enough).
    """

    work: Work
    slack_s: float = 0.0
    drop_after_s: float | None = None
    plain: bool = False
    """A transcription without the recogniser's prompt (``AGENT_ASR__PROMPT``): a sound made over the agent, where
    the question is whether it holds words at all; a prompt full of fillers makes a short "stop" into "Uh,"."""


URGENT = JobInfo(Work.FIRST_SENTENCE)
"""The default for a call that says nothing: treated as blocking first audio."""


class Retries(Protocol):
    """The retries of remote speech one reply may still spend, all its sentences together
    (``agent.work.resilience.RetryBudget``): ``take`` spends one and says whether one was left."""

    def take(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call: its name, what it does, and the JSON schema of its arguments.

    ``parameters`` is the schema as JSON text (an object schema; ``{"type": "object", "properties": {}}`` for
    none), kept as text so the spec stays frozen and hashable. ``runs_on``: ``server`` (a ``ToolRunner`` runs
    it: HTTP, MCP, built in) or ``client`` (the caller's application runs it: Realtime ``function_call`` items,
    ``/ws`` ``tool.call``). ``timeout_s``: how long the turn waits for its result before the model is told it
    timed out.
    """

    name: str
    description: str = ""
    parameters: str = '{"type": "object", "properties": {}}'
    runs_on: Literal["server", "client"] = "server"
    timeout_s: float = 10.0


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model made: ``arguments`` is the JSON text it wrote (an object, not checked here)."""

    call_id: str
    name: str
    arguments: str = "{}"


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a conversation history.

    An ``assistant`` message may carry the tool ``calls`` the model made in that turn (its ``text`` may then be
    empty); a ``tool`` message is the result of the call ``call_id`` (``failed``: the tool failed or timed out,
    and ``text`` says how). Adapters write both in their wire's shape (OpenAI ``tool_calls`` / ``tool``
    messages, Bedrock ``toolUse`` / ``toolResult`` blocks)."""

    role: Role
    text: str
    calls: tuple[ToolCall, ...] = ()
    call_id: str = ""
    failed: bool = False


@dataclass(frozen=True, slots=True)
class ConsentRecord:
    """Who agreed to their voice being cloned, when, in what words, for which reference audio, enrolled by whom."""

    statement: str
    speaker: str
    """Who consented (the speaker's name as given; empty when not stated)."""
    consented_at: str
    """ISO 8601, UTC."""
    audio_sha256: str
    """SHA-256 of the normalised reference WAV this consent covers."""
    enrolled_by: str
    """The principal that enrolled the voice (``tok:<id>``, ``anonymous``, ``cli``, ``migrated``)."""
    tenant: str

    def covers(self, sha256: str, tenant: str) -> bool:
        """A valid record for this audio and tenant: synthesis refuses a voice without one."""
        return bool(self.statement.strip()) and self.audio_sha256 == sha256 and self.tenant == tenant


@dataclass(frozen=True, slots=True)
class VoiceRecord:
    """An enrolled voice's metadata. ``transcript`` is exactly what is said in the reference audio.

    A voice belongs to one ``tenant``; its ``name`` is unique within the tenant only.
    """

    name: str
    voice_id: str
    transcript: str
    language: str
    consent: ConsentRecord
    sha256: str
    duration_s: float
    created_at: str
    tenant: str = "default"


@dataclass(frozen=True, slots=True)
class Voice:
    """An enrolled voice: its record and its reference audio as a 24 kHz mono PCM16 WAV file."""

    record: VoiceRecord
    wav: bytes


@dataclass(frozen=True, slots=True)
class Transcript:
    """What the caller said in one utterance."""

    text: str
    language: str
    """The language it was transcribed in (an ``agent.languages`` code)."""
    language_probability: float | None = None
    """How likely that language was (0..1, among the ten) when the recogniser detected it; ``None`` when it did
    not detect (the language was given, the model hears one language, or the clip was too short)."""


class SpeechDetector(Protocol):
    """Frame-level voice activity at 16 kHz.

    ``frame_samples`` is the fixed frame length this detector accepts. ``speech_probability`` takes exactly
    one frame of PCM16LE mono at 16 kHz (``2 * frame_samples`` bytes) and returns 0.0–1.0. It is cheap
    (microseconds) and is called on the connection's own loop. Detectors are stateful: one per connection.
    """

    @property
    def frame_samples(self) -> int: ...

    def speech_probability(self, frame: bytes) -> float: ...

    def reset(self) -> None: ...


class SpeechToText(Protocol):
    """Transcribes a finished utterance, in one of ``languages`` (``agent.languages`` codes it can hear).

    ``transcribe`` takes PCM16LE mono at 16 kHz. ``hint`` says which language to transcribe in and whether the
    recogniser may detect it (``LanguageHint``; ``None``: the server's configured language); the transcript
    says the language it was transcribed in. A recogniser that knows one language only always answers in it.
    It runs the model off the event loop with bounded concurrency. ``job`` says what the transcript is for
    (``None``: the final transcript of a turn), so a busy server runs it in deadline order (``agent.work.scheduling``).
    Raises ``ProviderError`` on model failure and ``WorkDropped`` when a droppable (speculative, quick) transcript
    was not run because the server is busy.
    """

    @property
    def languages(self) -> tuple[str, ...]: ...

    async def transcribe(
        self, pcm16k: bytes, job: JobInfo | None = None, hint: LanguageHint | None = None
    ) -> Transcript: ...


class TurnCompletion(Protocol):
    """Tells from the sound of an utterance whether the caller has finished (an acoustic turn-completion model).

    ``complete_probability`` takes the utterance so far, trailing silence included (PCM16LE mono at 16 kHz), and
    gives the probability (0..1) that the turn is complete. It runs off the event loop; ``job`` says how urgent it
    is (droppable like a speculative transcript). Raises ``ProviderError`` on model failure and ``WorkDropped``
    when the server is too busy to run it.
    """

    async def complete_probability(self, pcm16k: bytes, job: JobInfo | None = None) -> float: ...


class TextCompletion(Protocol):
    """Tells from the words of an utterance whether the caller has finished (a text end-of-turn model).

    ``reads(language)``: the model judges text in that language (ISO 639-1); for another language the turn is
    judged without it. ``complete_probability`` takes the speculative transcript so far, as the recogniser wrote
    it, and gives the probability (0..1) that the turn is complete. It runs off the event loop; ``job`` says how
    urgent it is (end-of-turn work, droppable like a speculative transcript). Raises ``ProviderError`` on model
    failure and ``WorkDropped`` when the server is too busy to run it.
    """

    def reads(self, language: str) -> bool: ...

    async def complete_probability(self, text: str, language: str, job: JobInfo | None = None) -> float: ...


class LanguageModel(Protocol):
    """Streams reply text, and tool calls, for a conversation.

    ``stream_reply`` yields text deltas (``str``, any size, concatenated they are the reply's text) and the tool
    calls the model makes (``ToolCall``, each once it is complete, in the order the model made them; several in
    one reply are parallel calls), in ``language`` (an ``agent.languages`` code; the history's system message
    says so too, for models that read only that). ``tools`` are the functions the model may call (none: it is
    not offered any, and a history holding calls is still sent faithfully), ``tool_choice`` which it may call
    (``ToolChoice``). Raises ``ProviderError`` (or a subclass) if the model fails, possibly after some deltas.
    """

    def stream_reply(
        self,
        history: Sequence[ChatMessage],
        *,
        language: str,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[str | ToolCall]: ...


class ToolRunner(Protocol):
    """Runs the server's own tools (HTTP endpoints, MCP servers, built-in ones) for a tenant's calls.

    ``tools(tenant)`` lists the tools a call of ``tenant`` may use (``runs_on="server"``) as they are known now: it
    never waits on a tool server (remote listings are a cache, refreshed in the background), so a call's start
    costs no round trip; a source not listed yet is left out, one that cannot be listed now keeps its last good
    listing (a warning logged).
    ``run(tenant, call)`` runs one call and returns its output as text, bounded in size (the output is untrusted
    data for the model, never instructions). Its arguments are checked against the tool's schema before any
    tool is asked. Raises ``ToolFailed`` (the arguments were refused, the tool answered with an error, its output
    was malformed or too large, its host is not allowed, an unknown tool) or ``ProviderTimeout`` (no answer
    within the tool's timeout). Cancelling the call stops it. Each call leaves an audit line (tenant, tool,
    duration, outcome).
    """

    async def tools(self, tenant: str) -> tuple[ToolSpec, ...]: ...

    async def run(self, tenant: str, call: ToolCall) -> str: ...

    async def warm(self) -> None:
        """Start listing every tenant's remote sources in the background (at start-up, so that the first calls
        find them); never waits on a tool server."""
        ...


class TextToSpeech(Protocol):
    """Speaks text in a voice, streaming PCM16LE mono at ``sample_rate``.

    ``resolve_voice`` resolves a requested voice name (``None`` = the backend's default) of ``tenant`` to
    the voice handle ``synthesize`` takes, or raises ``UnknownVoice`` (also for another tenant's voice, and
    for a voice without a valid consent record); backends that clone voices load the voice here.
    ``synthesize`` yields audio chunks as they are produced, speaking ``text`` as ``language`` (an
    ``agent.languages`` code; ``None``: the voice's or the backend's own); it raises ``ProviderError`` on failure
    (``CircuitOpen`` at once while a remote backend's circuit breaker is open). ``budget`` is the retries the
    caller's reply may still spend, shared by its sentences (``None``: a fresh budget per call; backends that
    do not retry ignore it). ``job`` says how urgent the text is (``None``: a first sentence, blocking the
    caller's first audio); backends with a scarce resource (local cores, endpoint slots) serve calls in
    deadline order (``agent.work.scheduling``). Blocking engines run in threads inside the adapter.
    """

    @property
    def sample_rate(self) -> int: ...

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str: ...

    def synthesize(
        self,
        text: str,
        voice: str,
        budget: Retries | None = None,
        job: JobInfo | None = None,
        language: str | None = None,
    ) -> AsyncIterator[bytes]: ...


class SpeakerScorer(Protocol):
    """How much ``pcm`` (PCM16LE mono at ``sample_rate``) sounds like the speaker of ``reference_wav`` (a WAV
    file): a similarity, 0..1. Runs off the event loop. Raises ``AgentError`` (``AudioFormatError`` for audio
    with too little speech, ``ProviderError`` when the model fails)."""

    async def similarity(self, reference_wav: bytes, pcm: bytes, sample_rate: int) -> float: ...


class VoiceStore(Protocol):
    """Where enrolled voices live, per tenant. Writes are atomic: a voice is visible only once all of it is stored.

    ``add`` stores under ``voice.record.tenant`` and raises ``VoiceExists`` for a name taken in that tenant;
    ``get``, ``remove`` and the asset calls raise ``UnknownVoice`` for a voice the tenant does not have
    (another tenant's voice is indistinguishable from none). ``remove`` deletes the audio, the record, the
    consent record and every derived asset. Assets are derived files kept with a voice (its fixed phrases,
    keyed by short names such as ``phrase-apology``). Storage failures raise ``ProviderError``.
    """

    async def add(self, voice: Voice) -> None: ...

    async def get(self, tenant: str, name: str) -> Voice: ...

    async def list(self, tenant: str) -> list[VoiceRecord]: ...

    async def remove(self, tenant: str, name: str) -> None: ...

    async def put_asset(self, tenant: str, name: str, key: str, data: bytes) -> None: ...

    async def get_asset(self, tenant: str, name: str, key: str) -> bytes | None:
        """The asset, or ``None`` if the voice exists but has no such asset yet."""
        ...


@dataclass(frozen=True, slots=True)
class Rate:
    """A token bucket: ``burst`` at once, refilled at ``per_hour`` (above 0)."""

    burst: int
    per_hour: float


@dataclass(frozen=True, slots=True)
class Hold:
    """One place ``SharedLimits.hold`` took under ``key``; ``SharedLimits.release`` gives it back."""

    key: str
    token: str


class SharedLimits(Protocol):
    """Counters of the per-tenant and per-address limits, keyed ``<prefix>:<limit>:<tenant or address>``: kept in
    this process, or in a store every replica shares (``agent.security.limit_rules`` names the limits). Each call
    is atomic. Every call raises ``LimitsUnavailable`` when the counter cannot answer within its time bound (the
    caller fails open or closed, per limit); nothing else crosses the port."""

    async def take(self, key: str, rate: Rate, cost: int = 1) -> float:
        """Take ``cost`` tokens from ``key``'s bucket: ``0.0`` when taken, else the seconds until they would be
        (nothing is taken). ``cost=0`` takes nothing and says when one token would be there."""
        ...

    async def hold(self, key: str, bound: int, ttl_s: float) -> Hold | None:
        """One more place under ``key`` if fewer than ``bound`` are held now (``None``: full, nothing taken). The
        place lapses after ``ttl_s`` unless released first (a holder that dies leaks it for no longer)."""
        ...

    async def held(self, key: str) -> int:
        """The places held under ``key`` now."""
        ...

    async def release(self, hold: Hold) -> None:
        """Give ``hold``'s place back (idempotent)."""
        ...
