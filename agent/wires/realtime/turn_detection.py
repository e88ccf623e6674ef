"""A Realtime client's ``turn_detection`` → the session core's turn-taking rules (pure).

- ``server_vad``: the server ends turns. ``silence_duration_ms`` becomes the hangover after a sentence that
  may go on (the server still ends a clearly finished one sooner, and waits longer after "um", "and"...:
  ``EndpointPolicy``), ``prefix_padding_ms`` the pre-roll kept before speech, ``threshold`` the speech
  detector's threshold (the connection applies it), ``create_response`` whether a turn is answered at once,
  ``interrupt_response`` whether caller speech interrupts a reply (barge-in).
- ``semantic_vad``: the server's own end-of-turn policy, made more patient (``low``) or quicker (``high``).
- ``None``: no turn detection: the client commits the audio and asks for each response.
"""

from __future__ import annotations

from dataclasses import replace

from agent.core.policies import SessionConfig
from agent.wires.realtime.session_update import TurnDetection


def turn_rules(current: SessionConfig, base: SessionConfig, detection: TurnDetection | None) -> SessionConfig:
    """``current`` with the rules ``detection`` asks for; ``base``: the server's own rules (from its settings)."""
    if detection is None:
        return replace(current, detect_turns=False, respond=False)
    endpointing, policy = base.endpointing, base.policy
    if detection.kind == "server_vad":
        if detection.silence_duration_ms is not None:
            silence = detection.silence_duration_ms
            endpointing = replace(
                endpointing,
                hangover_ms=silence,
                hangover_min_ms=min(endpointing.hangover_min_ms, silence),
                hangover_max_ms=max(endpointing.hangover_max_ms, silence),
            )
        if detection.prefix_padding_ms is not None:
            policy = replace(policy, preroll_ms=detection.prefix_padding_ms)
    elif detection.eagerness == "low":  # patient: every turn waits as long as an unfinished one would
        endpointing = replace(
            endpointing, hangover_min_ms=endpointing.hangover_ms, hangover_ms=endpointing.hangover_max_ms
        )
    elif detection.eagerness == "high":  # quick: every turn ends as soon as a finished one would
        endpointing = replace(
            endpointing, hangover_ms=endpointing.hangover_min_ms, hangover_max_ms=endpointing.hangover_ms
        )
    barge_in = replace(current.barge_in, enabled=detection.interrupt_response)
    return replace(
        current,
        policy=policy,
        endpointing=endpointing,
        barge_in=barge_in,
        detect_turns=True,
        respond=detection.create_response,
    )
