"""The session's settings: the policies a call runs under, and the phrases the agent says on its own.

One reason to change: a new setting of the session core. ``SessionConfig`` gathers them (built from the server's
settings by the runtime, changed mid-call by a Realtime client's ``session.update``); the rules that read them
live in the listening and speaking sides. Plain frozen data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.core.endpointing import Acknowledgements, EndpointPolicy
from agent.core.turn_detector import TurnPolicy
from agent.ports import ToolChoice, ToolSpec


@dataclass(frozen=True, slots=True)
class BargeInPolicy:
    enabled: bool = True
    min_speech_ms: int = 300
    """Caller speech needed to interrupt the agent; shorter sounds (coughs, clicks) never do."""
    acknowledgements: bool = True
    """Acknowledgements ("uh-huh", "ja", "はい": each language's own, ``agent.core.lexicon``) do not interrupt; off:
    any speech over the minimum interrupts, in every language."""
    backchannels: tuple[str, ...] = ()
    """The operator's own acknowledgements, added to every language's (with ``acknowledgements`` on)."""
    backchannel_max_ms: int = 900
    """Speech this long interrupts even before its transcript is known (backchannels are short)."""
    probe_lead_ms: int = 120
    """How long before ``min_speech_ms`` the quick transcript is asked for (it takes ~100 ms)."""
    playback_margin_ms: int = 300
    """Allowance for the client's jitter buffer when playback is estimated from the clock."""
    pause: bool = False
    """Yield at once: the reply stops playing (``PlaybackPause``) the moment the caller starts speaking over it,
    and resumes from where the caller stopped hearing it if the sound does not take the floor. Needs a client
    that can pause (``/ws`` with the ``playback.pause`` capability; telephony always)."""
    pause_overrun_ms: int = 0
    """Reply audio the caller still hears after a pause: a far end that cannot drop what it was sent (AudioSocket,
    with no clear) plays out the lead it was sent ahead of real time, so the reply goes on from after it."""
    resume_after_ms: int = 250
    """Paused: silence after a sound that has not taken the floor (short, or an acknowledgement) before the
    reply resumes."""
    continue_within_ms: int = 0
    """Speech that takes the floor from a reply and began at most this long after the end of the words that
    reply answers goes on with them (a pause taken for the end of the turn): one turn of both (0: never)."""

    @property
    def acknowledging(self) -> Acknowledgements:
        """What said over the agent is no bid for the floor (``agent.core.endpointing``'s rules read it)."""
        return Acknowledgements(self.acknowledgements, self.backchannels)


@dataclass(frozen=True, slots=True)
class IdlePolicy:
    prompt_after_s: float = 0.0
    """Silence after which the agent prompts once (0: never)."""
    prompt_text: str = "Are you still there?"
    end_after_s: float = 0.0
    """Silence after which an abandoned session is ended (0: never)."""


@dataclass(frozen=True, slots=True)
class Deadlines:
    """How long each stage of a turn may take, in seconds (0: no deadline). Checked by the core on every
    event (a ``Tick`` every 250 ms), so a stage that hangs can never wedge the session."""

    asr_s: float = 0.0
    """End of the utterance → its transcript."""
    first_text_s: float = 0.0
    """Transcript → first reply text."""
    first_audio_s: float = 0.0
    """First sentence handed to synthesis → its first audio."""
    reply_s: float = 0.0
    """Transcript → the whole reply synthesized."""


@dataclass(frozen=True, slots=True)
class Phrases:
    """Fixed phrases the agent speaks on its own (played from the voice's stored recordings when it has them)."""

    apology: str = ""
    """Spoken when a turn fails before anything of its reply was said (empty: the failure is only reported)."""
    greeting: str = ""
    """Spoken when the session starts (empty: no greeting)."""
    hold: str = ""
    """Spoken once per turn when its first audio is late (empty: never)."""
    hold_after_ms: int = 0
    """Time after the caller stopped speaking at which the hold phrase is due (0: never)."""
    goodbye: str = ""
    """Spoken before the session is closed because the server shuts down (empty: closed without a word)."""


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """The functions the model may call in this session, and how a reply waits on them (``agent.core.tools``)."""

    specs: tuple[ToolSpec, ...] = ()
    """The server's tools for the call's tenant and the ones the client declared (``runs_on`` says which)."""
    choice: ToolChoice = "auto"
    max_rounds: int = 5
    """Rounds of calls one reply may make; calls past them are answered with an error and not run."""
    filler_after_ms: int = 700
    """A call pending this long, before anything of the reply was said, makes the agent say the hold phrase
    ("One moment.") once (0: never)."""
    client_waits: bool = True
    """A reply that calls a client's tool waits for its ``ToolResult`` and goes on (``/ws``); off: the reply
    ends there and the client asks for the next one (the Realtime API's ``function_call_output`` then
    ``response.create``)."""
    call_id_key: str = field(default="", repr=False)
    """The session's secret, drawn by the runtime (``secrets``; the core draws nothing): a call id the model uses
    twice in one reply gets a new one derived from it (``agent.core.tools.renamed``), which a client cannot guess
    from the ids it sees. Call ids are not secrets all the same: who may answer a call is checked."""

    def spec(self, name: str) -> ToolSpec | None:
        return next((spec for spec in self.specs if spec.name == name), None)


Preemption = Literal["off", "llm", "llm+tts"]
"""What of a reply starts before the end of turn, from the speculative transcript (``agent.core.preemption``)."""


@dataclass(frozen=True, slots=True)
class SessionConfig:
    output_sample_rate: int = 24000
    output_frame_ms: int = 40
    """Size of the reply's audio frames (a resumed reply is sent again in frames of this size)."""
    policy: TurnPolicy = field(default_factory=TurnPolicy)
    endpointing: EndpointPolicy = field(default_factory=EndpointPolicy)
    barge_in: BargeInPolicy = field(default_factory=BargeInPolicy)
    idle: IdlePolicy = field(default_factory=IdlePolicy)
    system_prompt: str = ""
    max_history_messages: int = 20
    first_chunk_min_chars: int = 8
    deadlines: Deadlines = field(default_factory=Deadlines)
    phrases: Phrases = field(default_factory=Phrases)
    preemption: Preemption = "off"
    detect_turns: bool = True
    """The speech detector ends utterances; off: only the client's ``CommitInput`` does (Realtime
    ``turn_detection: null``)."""
    respond: bool = True
    """An utterance that ends is answered at once; off: it only joins the conversation, and the client asks
    for a reply (``CreateResponse``)."""
    tools: ToolPolicy = field(default_factory=ToolPolicy)
    language: str = field(kw_only=True)
    """The language the call starts in: the one the client gave, else the server's (``asr.language``), else the one
    it is answered in until the recogniser has heard the caller (``detect_language``)."""
    detect_language: bool = field(default=False, kw_only=True)
    """Nobody gave the language: the recogniser detects it on the first turn, and a later turn confidently in
    another changes it (``agent.core.call_language``); off: it stays ``language``."""
