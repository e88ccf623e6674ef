"""Turn-taking settings: speech detection (``AGENT_VAD__*``) and the end of turn, barge-in, idle handling and
the fixed phrases (``AGENT_TURN__*``).

A setting of the session core names the core field it sets (``core(...)``, ``agent.config.policy_fields``) and
takes that field's default unless it gives the server's own; the rest configure the runtime (the speech
detector, the turn-completion models).

Reason to change: the turn-taking policy gains or loses a knob.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agent.config.policy_fields import core
from agent.core.endpointing import EndpointPolicy
from agent.core.policies import BargeInPolicy, Deadlines, IdlePolicy, Phrases, SessionConfig
from agent.core.turn_detector import TurnPolicy


def _on(choice: str) -> bool:
    """A model's choice (``"smart-turn"``, ``"smollm2"``, ``"off"``) → whether the core asks it."""
    return choice != "off"


class VadSettings(BaseModel):
    """Speech detection and the end-of-turn policy."""

    backend: Literal["webrtc", "silero"] = "webrtc"
    webrtc_mode: int = Field(3, ge=0, le=3)
    confirm: Literal["silero", "off"] = Field(
        "silero",
        description="With webrtc: Silero hears each frame too, and in a pause a voiced frame it does not hear as "
        "speech (a keyboard's click, a knock) is part of the pause (agent/audio/speech_confirm.py); off = "
        "webrtc alone.",
    )
    confirm_threshold: float = Field(
        0.25,
        gt=0,
        lt=1,
        description="Silero's speech probability at or above which it hears a pause's voiced frame as speech.",
    )
    threshold: float = Field(0.5, gt=0, lt=1, description="Speech probability threshold (silero).")
    onset_ms: int = core(TurnPolicy, "onset_ms", ge=0, description="Voiced audio needed to declare speech started.")
    hangover_ms: int = core(
        EndpointPolicy,
        "hangover_ms",
        520,
        ge=60,
        description="Silence that ends a turn when its ending is unclear; kept above turn.hangover_min_ms.",
    )
    min_utterance_ms: int = core(TurnPolicy, "min_utterance_ms", ge=0, description="Shorter blips are ignored.")
    max_utterance_ms: int = core(
        TurnPolicy,
        "max_utterance_ms",
        ge=1000,
        description="The longest audio transcribed at once: a caller talking on past it is transcribed in pieces "
        "and keeps the floor.",
    )
    max_turn_ms: int = core(
        TurnPolicy,
        "max_turn_ms",
        ge=1000,
        description="The longest turn: a caller still talking this long into it is cut off and answered.",
    )
    preroll_ms: int = core(TurnPolicy, "preroll_ms", ge=0, description="Audio kept from before the onset.")
    resume_ms: int = core(
        TurnPolicy,
        "resume_ms",
        ge=0,
        le=500,
        description="Voiced audio needed to go on after a pause; a shorter blip (a click, a knock) is part of the "
        "pause; 0 = any voiced frame.",
    )
    tail_floor_db: float = Field(
        30.0,
        ge=0,
        le=60,
        description="Voiced frames this far below the speaker's recent level count as silence (the fading "
        "tail of the last word); 0 = off.",
    )
    tail_over_noise_db: float = Field(
        0.0,
        ge=0,
        le=30,
        description="Voiced frames less than this above the line's noise count as silence too (a noisy line's "
        "tail); 0 = off.",
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
    hangover_min_ms: int = core(
        EndpointPolicy,
        "hangover_min_ms",
        500,
        ge=60,
        description="Silence that ends a turn that sounds finished: the shortest wait. 500 ms, the field's own "
        "minimum (OpenAI's server VAD, LiveKit's endpointing), chosen on the human dev rows live over 320 ms: "
        'fewer hesitations cut off for about 140 ms at p50 (docs/benchmarks.md, "The shortest wait").',
    )
    hangover_max_ms: int = core(
        EndpointPolicy, "hangover_max_ms", ge=60, description="Silence that ends a turn that trails off."
    )
    fragment_words: int = core(
        EndpointPolicy,
        "fragment_words",
        3,
        ge=0,
        le=10,
        description="A transcript of at most this many words (not a short answer) waits FRAGMENT_MS.",
    )
    fragment_numbers: bool = core(
        EndpointPolicy, "fragment_numbers", True, description="A transcript ending in a number waits FRAGMENT_MS."
    )
    fragment_ms: int = core(
        EndpointPolicy, "fragment_ms", 700, ge=0, le=5000, description="Hangover of a fragment; 0 = HANGOVER_MAX_MS."
    )
    acoustic: Literal["smart-turn", "off"] = core(
        EndpointPolicy,
        "acoustic",
        "smart-turn",
        convert=_on,
        description="Acoustic turn completion: Smart Turn v3.2 (installed by make) scores the sound of each pause "
        "with the speculative transcript, and both decide the hangover; off = the words alone.",
    )
    acoustic_model: str = Field(
        "",
        description="Smart Turn ONNX file; empty = the one the install step extracted into the environment. Another"
        " path must hold the same file (its sha256 is checked at load: a copy, not another model).",
    )
    acoustic_sure: float = core(
        EndpointPolicy,
        "sure",
        ge=0.0,
        le=1.0,
        description="Sound score at or above which a sentence that reads finished ends at HANGOVER_MIN_MS (a fragment "
        "at AGENT_VAD__HANGOVER_MS, or HANGOVER_MIN_MS with ACOUSTIC_SURE_FRAGMENTS).",
    )
    acoustic_unsure: float = core(
        EndpointPolicy,
        "unsure",
        ge=0.0,
        le=1.0,
        description="Sound score at or below which the caller sounds unfinished: a fragment waits HANGOVER_MAX_MS, a "
        "sentence ACOUSTIC_UNSURE_MS; between the two thresholds the wait goes in proportion.",
    )
    acoustic_unsure_ms: int = core(
        EndpointPolicy,
        "unsure_ms",
        700,
        ge=0,
        le=5000,
        description="Wait of a sentence that reads finished but sounds unfinished; 0 = FRAGMENT_MS.",
    )
    acoustic_rescore_ms: int = core(
        EndpointPolicy,
        "rescore_ms",
        ge=0,
        le=2000,
        description="Score the sound of a pause again every this much more of its silence, with all of it, while "
        "the turn waits; the latest score decides; 0 = one score per pause.",
    )
    acoustic_rescores: int = core(
        EndpointPolicy, "rescores", ge=0, le=20, description="The most re-scores of one pause (each a model call)."
    )
    acoustic_sure_fragments: bool = core(
        EndpointPolicy,
        "sure_fragments",
        description="A sure sound ends a fragment at HANGOVER_MIN_MS too; false = it waits AGENT_VAD__HANGOVER_MS.",
    )
    text_model: Literal["smollm2", "off"] = core(
        EndpointPolicy,
        "words",
        "smollm2",
        convert=_on,
        description="Text end-of-turn model: SmolLM2-135M (installed by make) reads the speculative transcript of "
        "each pause (English) and its probability that the turn is over joins the rules and the sound; off = the "
        "rules alone read the words.",
    )
    text_model_dir: str = Field(
        "",
        description="Directory of the built text model; empty = the one the install step built in the environment."
        " Another directory must hold the same files (their sha256 is checked at load).",
    )
    text_sure: float = core(
        EndpointPolicy,
        "words_sure",
        ge=0.0,
        le=1.0,
        description="Text score at or above which the words read finished (no fragment, whatever the word count).",
    )
    text_sure_ms: int = core(
        EndpointPolicy,
        "words_sure_ms",
        ge=0,
        le=5000,
        description="Silence that ends a turn the text model reads finished and the sound is sure of; 0 = "
        "HANGOVER_MIN_MS.",
    )
    text_unsure_ms: int = core(
        EndpointPolicy,
        "words_unsure_ms",
        ge=0,
        le=5000,
        description="Silence that ends a sentence the text model reads unfinished but that sounds sure; 0 = "
        "HANGOVER_MAX_MS (an unsure sound waits HANGOVER_MAX_MS either way).",
    )
    text_unsure: float = core(
        EndpointPolicy,
        "words_unsure",
        ge=0.0,
        le=1.0,
        description='Text score at or below which the words read unfinished ("The quick brown fox."): three words or '
        "more wait HANGOVER_MAX_MS, whatever the sound.",
    )
    text_doubt: float = core(
        EndpointPolicy,
        "words_doubt",
        0.1,
        ge=0.0,
        le=1.0,
        description="Text score at or below which the words read unfinished as at TEXT_UNSURE, but only where the "
        "sound is not sure either (below ACOUSTIC_SURE) and the words ask nothing; 0 = off. 0.1 chosen on the human "
        "dev rows (docs/benchmarks.md).",
    )
    preemption: Literal["off", "llm", "llm+tts"] = core(
        SessionConfig,
        "preemption",
        "llm+tts",
        description="Start the reply (llm) and its first sentence's speech (llm+tts) from the speculative "
        "transcript, before the end of turn; held until the turn ends, discarded if the caller goes on.",
    )
    barge_in: bool = core(BargeInPolicy, "enabled", description="Caller speech interrupts the agent.")
    barge_in_min_ms: int = core(
        BargeInPolicy, "min_speech_ms", ge=60, description="Speech needed to interrupt; coughs and clicks are shorter."
    )
    acknowledgements: bool = core(
        BargeInPolicy,
        "acknowledgements",
        description="Acknowledgements ('uh-huh', 'ja', 'はい': each language's own) do not interrupt; false = any "
        "speech over BARGE_IN_MIN_MS interrupts, in every language.",
    )
    backchannels: list[str] = core(
        BargeInPolicy,
        "backchannels",
        default_factory=list,
        convert=tuple,
        description="The operator's own acknowledgements, added to every language's (with ACKNOWLEDGEMENTS).",
    )
    backchannel_max_ms: int = core(
        BargeInPolicy, "backchannel_max_ms", ge=60, description="Speech this long interrupts even if it is 'yeah'."
    )
    pause_on_speech: bool = core(
        BargeInPolicy,
        "pause",
        True,
        description="Yield at once: the reply pauses the moment the caller starts speaking over it and resumes "
        "from where it was heard if the sound was not an interruption (a cough, an 'uh-huh'). Telephony, and "
        "/ws clients that send the 'playback.pause' capability.",
    )
    resume_after_ms: int = core(
        BargeInPolicy,
        "resume_after_ms",
        ge=60,
        le=2000,
        description="Paused: silence after a short sound or an acknowledgement before resuming.",
    )
    continue_within_ms: int = core(
        BargeInPolicy,
        "continue_within_ms",
        1000,
        ge=0,
        le=5000,
        description="Speech that takes the floor from a reply and began at most this long after the end of the "
        "words that reply answers goes on with them (the caller had only paused): one turn of both; 0 = never.",
    )
    idle_prompt_s: float = core(
        IdlePolicy, "prompt_after_s", 20.0, ge=0, description="Silence before the agent prompts once; 0 = never."
    )
    idle_prompt_text: str = core(IdlePolicy, "prompt_text")
    idle_end_s: float = core(
        IdlePolicy, "end_after_s", 60.0, ge=0, description="Silence before an abandoned session ends; 0 = never."
    )
    greeting_text: str = core(Phrases, "greeting", description="Spoken when a session starts; empty = no greeting.")
    apology_text: str = core(
        Phrases,
        "apology",
        "Sorry, something went wrong on my side. Could you say that again?",
        description="Spoken when a turn fails before anything was said; empty = the failure is only reported.",
    )
    hold_text: str = core(
        Phrases, "hold", "One moment.", description="Spoken once when a reply is late; empty = never."
    )
    hold_after_ms: int = core(
        Phrases, "hold_after_ms", 2500, ge=0, description="Caller stopped -> no reply audio yet: hold phrase; 0 = off."
    )
    goodbye_text: str = core(
        Phrases,
        "goodbye",
        "Sorry, I have to end the call now. Goodbye.",
        description="Spoken before a call is closed because the server shuts down; empty = closed without a word.",
    )
    no_voice_text: str = Field(
        "Sorry, this line cannot take your call right now. Please try again later. Goodbye.",
        description="Spoken in the fallback voice to a phone caller whose voice (and the default voice) is not "
        "enrolled, before the call is closed; empty = closed without a word.",
    )
    asr_deadline_s: float = core(
        Deadlines, "asr_s", 15.0, ge=0, description="End of utterance -> transcript; 0 = no deadline."
    )
    reply_first_text_deadline_s: float = core(
        Deadlines, "first_text_s", 15.0, ge=0, description="Transcript -> first reply text; 0 = none."
    )
    first_audio_deadline_s: float = core(
        Deadlines, "first_audio_s", 15.0, ge=0, description="Sentence queued -> its first audio; 0 = none."
    )
    reply_deadline_s: float = core(
        Deadlines, "reply_s", 120.0, ge=0, description="Transcript -> whole reply synthesized; 0 = none."
    )
