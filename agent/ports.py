"""Ports: the small capabilities the server needs from the outside world.

Adapters in ``agent/adapters`` implement these; only ``agent/wiring.py`` picks and builds them.
Every method documents what it raises; vendor exceptions never cross a port (see ``agent.errors``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a conversation history."""

    role: Role
    text: str


@dataclass(frozen=True, slots=True)
class VoiceRecord:
    """An enrolled voice's metadata. ``transcript`` is exactly what is said in the reference audio."""

    name: str
    voice_id: str
    transcript: str
    language: str
    consent: str
    sha256: str
    duration_s: float
    created_at: str


@dataclass(frozen=True, slots=True)
class Voice:
    """An enrolled voice: its record and its reference audio as a 24 kHz mono PCM16 WAV file."""

    record: VoiceRecord
    wav: bytes


@dataclass(frozen=True, slots=True)
class Transcript:
    """What the caller said in one utterance."""

    text: str
    language: str = "en"


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
    """Transcribes a finished utterance.

    ``transcribe`` takes PCM16LE mono at 16 kHz. It runs the model off the event loop with bounded
    concurrency. Raises ``ProviderError`` on model failure.
    """

    async def transcribe(self, pcm16k: bytes) -> Transcript: ...


class LanguageModel(Protocol):
    """Streams reply text for a conversation.

    ``stream_reply`` yields text deltas (any size, concatenated they are the reply). Raises
    ``ProviderError`` (or a subclass) if the model fails, possibly after some deltas.
    """

    def stream_reply(self, history: Sequence[ChatMessage]) -> AsyncIterator[str]: ...


class TextToSpeech(Protocol):
    """Speaks text in a voice, streaming PCM16LE mono at ``sample_rate``.

    ``resolve_voice`` resolves a requested voice name (``None`` = the backend's default) to the name that
    will be used, or raises ``UnknownVoice``; backends that clone voices load the voice here.
    ``synthesize`` yields audio chunks as they are produced; it raises ``ProviderError`` on failure.
    Blocking engines run in threads inside the adapter.
    """

    @property
    def sample_rate(self) -> int: ...

    async def resolve_voice(self, name: str | None) -> str: ...

    def synthesize(self, text: str, voice: str) -> AsyncIterator[bytes]: ...


class VoiceStore(Protocol):
    """Where enrolled voices live. Writes are atomic: a voice is visible only once all of it is stored.

    ``add`` raises ``VoiceExists`` for a taken name; ``get`` and ``remove`` raise ``UnknownVoice``;
    storage failures raise ``ProviderError``.
    """

    async def add(self, voice: Voice) -> None: ...

    async def get(self, name: str) -> Voice: ...

    async def list(self) -> list[VoiceRecord]: ...

    async def remove(self, name: str) -> None: ...
