"""One exception tree for the whole server.

::

    AgentError                      base; never raised itself
    ├── ConfigError                 settings that cannot work (bad model path, unknown backend)
    ├── ProtocolError               a client message we cannot accept; carries a wire ``code``
    ├── AudioFormatError            audio we cannot decode or convert (bad WAV, odd PCM length, bad rate)
    │   └── RejectedAudio           reference audio that decodes but cannot be used (too short, silent…)
    ├── EnrollmentRejected          an enrollment request that cannot be accepted (bad name, no consent…)
    ├── UnknownVoice                a voice name that no store or backend knows
    │   └── VoiceRequired           no voice named and no default, on a backend that has none of its own
    ├── VoiceExists                 enrolling a name that is taken
    └── ProviderError               a model/service behind a port failed; carries ``provider``
        ├── ProviderTimeout         it did not answer in time
        ├── ProviderUnavailable     it is not loaded / not reachable
        │   ├── CircuitOpen         refused at once: its circuit breaker is open after repeated failures
        │   └── WorkDropped         droppable work (a speculative transcript) not run: the server is busy
        └── ToolFailed              a server-side tool answered with an error, or may not be called

Adapters catch vendor exceptions and re-raise one of these (``raise ProviderError("piper") from exc``),
so nothing above the port boundary ever sees a vendor type.
"""

from __future__ import annotations


class AgentError(Exception):
    """Base of every error raised by this package."""


class ConfigError(AgentError):
    """The settings describe something that cannot run."""


class ProtocolError(AgentError):
    """A client message that breaks the wire protocol.

    ``code`` is the machine-readable ``error.code`` sent to the client (see docs/protocol.md).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class AudioFormatError(AgentError):
    """Audio that cannot be decoded or converted."""


class RejectedAudio(AudioFormatError):
    """Reference audio that cannot be used; ``code`` is the wire error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class EnrollmentRejected(AgentError):
    """An enrollment that cannot be accepted; ``code`` is the wire error code, ``message`` says why.

    ``retry_after_s``: when the same request may succeed (a rate limit), else ``None``.
    """

    def __init__(self, code: str, message: str, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after_s = retry_after_s


class UnknownVoice(AgentError):
    """A voice name that is not enrolled or not offered by the speech backend."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown voice {name!r}")
        self.name = name


class VoiceRequired(UnknownVoice):
    """No voice was named and no default is set: a cloned-voice backend has no voice of its own."""

    def __init__(self) -> None:
        super().__init__("")
        self.args = ("no voice chosen: name an enrolled voice in session.start, or set AGENT_TTS__DEFAULT_VOICE",)


class VoiceExists(AgentError):
    """A voice with this name is already enrolled."""

    def __init__(self, name: str) -> None:
        super().__init__(f"a voice named {name!r} already exists")
        self.name = name


class ProviderError(AgentError):
    """A model or remote service behind a port failed."""

    def __init__(self, provider: str, detail: str = "") -> None:
        super().__init__(f"{provider}: {detail}" if detail else provider)
        self.provider = provider
        self.detail = detail


class ProviderTimeout(ProviderError):
    """The provider did not answer within its deadline."""


class ProviderUnavailable(ProviderError):
    """The provider is not loaded or cannot be reached."""


class LimitsUnavailable(ProviderUnavailable):
    """The shared counter of a limit (``agent.ports.SharedLimits``: Redis) did not answer within its time bound."""


class CircuitOpen(ProviderUnavailable):
    """Refused without trying: the provider's circuit breaker is open (see ``agent.work.resilience``)."""


class WorkDropped(ProviderUnavailable):
    """Droppable model work (a speculative or quick transcript) was not run because the server is busy
    (``agent.work.scheduling``); the final transcript is computed later."""


class ToolFailed(ProviderError):
    """A server-side tool failed: it answered with an error, its output was malformed, its host is not allowed,
    or no such tool exists. ``detail`` says which, in words the model may be told."""
