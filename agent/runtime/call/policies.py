"""Settings → the session core's policies (the core itself never sees ``Settings``).

Each policy is built from the settings that name its fields (``agent.config.policy_fields``); only what the
settings cannot say is given here: the wire's rate, frames and pausing, the call's language, the speculative
wait the settings compute from the backends (``Settings.speculative_ms``), and the session's secret that call ids
the model repeats are renamed with (``ToolPolicy.call_id_key``: the core draws nothing random itself).
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from agent.config import Settings, build
from agent.core.endpointing import EndpointPolicy
from agent.core.policies import BargeInPolicy, Deadlines, IdlePolicy, Phrases, SessionConfig, ToolPolicy
from agent.core.turn_detector import TurnPolicy
from agent.languages import DEFAULT, parse_language


def session_config(
    settings: Settings,
    output_rate: int,
    frame_ms: int = 40,
    can_pause: bool = False,
    pause_overrun_ms: int = 0,
    *,
    language: str | None,
) -> SessionConfig:
    """The session core's rules from the settings, for a call whose caller gave ``language`` (``None``: the
    server's ``asr.language``, a code that fixes it for every call, or ``auto``: the recogniser detects it, and
    the call is answered in ``agent.languages.DEFAULT`` until then); ``can_pause``: the client can stop and resume
    playback, and still plays ``pause_overrun_ms`` of what it was sent after a pause."""
    given = language or parse_language(settings.asr.language)
    barge_in = build(BargeInPolicy, settings, pause_overrun_ms=pause_overrun_ms)
    return build(
        SessionConfig,
        settings,
        language=given or DEFAULT,
        detect_language=given is None,
        output_sample_rate=output_rate,
        output_frame_ms=frame_ms,
        policy=build(TurnPolicy, settings),
        endpointing=build(EndpointPolicy, settings, speculative_ms=settings.speculative_ms),
        barge_in=replace(barge_in, pause=can_pause and barge_in.pause),  # yielding needs a client that can pause
        idle=build(IdlePolicy, settings),
        deadlines=build(Deadlines, settings),
        phrases=build(Phrases, settings),
        tools=build(ToolPolicy, settings, call_id_key=secrets.token_hex(16)),
    )
