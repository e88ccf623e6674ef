"""Settings → the session core's policies (the core itself never sees ``Settings``)."""

from __future__ import annotations

from agent.config import Settings
from agent.core.endpointing import EndpointPolicy
from agent.core.policies import BargeInPolicy, Deadlines, IdlePolicy, Phrases, SessionConfig, ToolPolicy
from agent.core.turn_detector import TurnPolicy
from agent.languages import LanguageChoice, parse_language


def session_config(
    settings: Settings,
    output_rate: int,
    frame_ms: int = 40,
    can_pause: bool = False,
    pause_overrun_ms: int = 0,
    *,
    language: str,
) -> SessionConfig:
    """The session core's rules from the settings, for a call that starts in ``language``; ``can_pause``: the
    client can stop and resume playback, and still plays ``pause_overrun_ms`` of what it was sent after a pause."""
    vad, turn = settings.vad, settings.turn
    return SessionConfig(
        language=language,
        output_sample_rate=output_rate,
        output_frame_ms=frame_ms,
        policy=TurnPolicy(
            onset_ms=vad.onset_ms,
            min_utterance_ms=vad.min_utterance_ms,
            max_utterance_ms=vad.max_utterance_ms,
            preroll_ms=vad.preroll_ms,
        ),
        endpointing=EndpointPolicy(
            speculative_ms=settings.speculative_ms,
            hangover_min_ms=turn.hangover_min_ms,
            hangover_ms=vad.hangover_ms,
            hangover_max_ms=turn.hangover_max_ms,
            fragment_words=turn.fragment_words,
            fragment_numbers=turn.fragment_numbers,
            fragment_ms=turn.fragment_ms,
            acoustic=turn.acoustic != "off",
            sure=turn.acoustic_sure,
            unsure=turn.acoustic_unsure,
            unsure_ms=turn.acoustic_unsure_ms,
            sure_fragments=turn.acoustic_sure_fragments,
            words=turn.text_model != "off",
            words_sure=turn.text_sure,
            words_sure_ms=turn.text_sure_ms,
            words_unsure_ms=turn.text_unsure_ms,
            words_unsure=turn.text_unsure,
        ),
        barge_in=BargeInPolicy(
            enabled=turn.barge_in,
            min_speech_ms=turn.barge_in_min_ms,
            backchannels=tuple(turn.backchannels),
            backchannel_max_ms=turn.backchannel_max_ms,
            pause=can_pause and turn.pause_on_speech,
            pause_overrun_ms=pause_overrun_ms,
            resume_after_ms=turn.resume_after_ms,
            continue_within_ms=turn.continue_within_ms,
        ),
        idle=IdlePolicy(
            prompt_after_s=turn.idle_prompt_s,
            prompt_text=turn.idle_prompt_text,
            end_after_s=turn.idle_end_s,
        ),
        deadlines=Deadlines(
            asr_s=turn.asr_deadline_s,
            first_text_s=turn.reply_first_text_deadline_s,
            first_audio_s=turn.first_audio_deadline_s,
            reply_s=turn.reply_deadline_s,
        ),
        phrases=Phrases(
            apology=turn.apology_text,
            greeting=turn.greeting_text,
            hold=turn.hold_text,
            hold_after_ms=turn.hold_after_ms,
            goodbye=turn.goodbye_text,
        ),
        system_prompt=settings.llm.system_prompt,
        max_history_messages=settings.llm.max_history_messages,
        preemption=turn.preemption,
        tools=ToolPolicy(max_rounds=settings.tools.max_rounds, filler_after_ms=settings.tools.filler_after_ms),
    )


def call_language(settings: Settings, given: str | None) -> LanguageChoice:
    """A call's language: the one its caller gave, else the server's (``asr.language``: a code fixes it for every
    call; ``auto`` lets the recogniser detect it per call, and a recogniser of one language answers in that)."""
    return LanguageChoice(given or parse_language(settings.asr.language))
