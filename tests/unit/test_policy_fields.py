"""Settings reach the session core by one path (issue 31; pure: no models, no loop).

Each setting of the core names the field it sets where it is declared (``agent.config.policy_fields.core``);
``session_config`` builds every policy from those. So a core field with no setting must say here why it has
none, and a turn-taking setting that sets no core field must say what it configures instead.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from agent.config import Settings, build, declared, load_settings
from agent.config.policy_fields import core
from agent.core.endpointing import Acknowledgements, EndpointPolicy, passes
from agent.core.policies import BargeInPolicy, Deadlines, IdlePolicy, Phrases, SessionConfig, ToolPolicy
from agent.core.turn_detector import TurnPolicy
from agent.runtime.call.policies import session_config

NESTED = "built from its own settings (a policy of its own)"

NOT_SETTINGS: dict[type[Any], dict[str, str]] = {
    TurnPolicy: {},
    EndpointPolicy: {
        "speculative_ms": "Settings.speculative_ms: turn.speculative_ms, else the default for the backends",
    },
    BargeInPolicy: {
        "probe_lead_ms": "the core's own: the quick transcript's lead (bench/backchannels.py --probe-lead-ms)",
        "playback_margin_ms": "the core's own: the clients' jitter buffers",
        "pause_overrun_ms": "the wire's: what its far end still plays after a pause (AudioSocket)",
    },
    IdlePolicy: {},
    Deadlines: {},
    Phrases: {},
    ToolPolicy: {
        "specs": "the call's: its tenant's server tools and the ones its client declared",
        "choice": "the client's (a Realtime session.update)",
        "client_waits": "the wire's: /ws waits for a client's tool, the Realtime API asks for the next response",
        "call_id_key": "the session's secret, drawn by the runtime (secrets) for each session",
    },
    SessionConfig: {
        "output_sample_rate": "the wire's",
        "output_frame_ms": "the wire's",
        "policy": NESTED,
        "endpointing": NESTED,
        "barge_in": NESTED,
        "idle": NESTED,
        "deadlines": NESTED,
        "phrases": NESTED,
        "tools": NESTED,
        "first_chunk_min_chars": "the core's own: the shortest first chunk of a reply sent to synthesis",
        "detect_turns": "a Realtime client's turn_detection",
        "respond": "a Realtime client's turn_detection",
        "language": "the call's (given by its caller, else asr.language)",
        "detect_language": "the call's (nobody gave its language)",
    },
}
"""Every core field that no setting sets, and why."""

RUNTIME_SETTINGS: dict[str, str] = {
    "vad.backend": "the speech detector (wiring)",
    "vad.webrtc_mode": "the speech detector (wiring)",
    "vad.confirm": "the second speech detector (wiring)",
    "vad.confirm_threshold": "the second speech detector's verdict (runtime/call/caller_audio.py)",
    "vad.threshold": "the caller's audio (its speech verdict)",
    "vad.tail_floor_db": "the caller's audio (a word's fading tail)",
    "vad.tail_over_noise_db": "the caller's audio (a noisy line's tail)",
    "turn.speculative_ms": "resolved with the backends by Settings.speculative_ms, given to EndpointPolicy",
    "turn.acoustic_model": "the Smart Turn adapter's file (wiring)",
    "turn.text_model_dir": "the text end-of-turn adapter's directory (wiring)",
    "turn.no_voice_text": "said by the runtime before it closes a call it cannot serve",
}
"""Turn-taking settings (``AGENT_VAD__*``, ``AGENT_TURN__*``) that set no core field, and what they set."""


def test_every_core_field_is_set_by_one_setting_or_says_why_not() -> None:
    targets = declared(Settings).values()
    assert {t.policy for t in targets} <= NOT_SETTINGS.keys(), "a setting targets a policy this test does not know"
    for policy, reasons in NOT_SETTINGS.items():
        fields = {f.name for f in dataclasses.fields(policy)}
        set_by = Counter(t.name for t in targets if t.policy is policy)
        assert [name for name, n in set_by.items() if n > 1] == [], f"{policy.__name__}: set by two settings"
        assert set_by.keys().isdisjoint(reasons), f"{policy.__name__}: set by a setting and said not to be"
        assert reasons.keys() <= fields, f"{policy.__name__}: reasons for fields it does not have"
        missing = fields - set_by.keys() - reasons.keys()
        assert missing == set(), f"{policy.__name__}: fields with no setting and no reason: {sorted(missing)}"


def test_every_turn_setting_sets_a_core_field_or_says_what_it_configures() -> None:
    core_settings = declared(Settings).keys()
    assert RUNTIME_SETTINGS.keys().isdisjoint(core_settings)
    for section in ("vad", "turn"):
        names = {f"{section}.{name}" for name in type(getattr(Settings(), section)).model_fields}
        assert {p for p in RUNTIME_SETTINGS if p.startswith(f"{section}.")} <= names
        assert names - core_settings - RUNTIME_SETTINGS.keys() == set(), f"{section}: a setting that sets nothing"


def test_the_settings_give_each_core_field_a_value_of_its_type() -> None:
    config = session_config(Settings(), 24000, language="en")
    parts: tuple[Any, ...] = (
        config,
        *(getattr(config, name) for name, why in NOT_SETTINGS[SessionConfig].items() if why == NESTED),
    )
    for policy in parts:
        for f in dataclasses.fields(policy):
            default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
            if default is not dataclasses.MISSING:
                assert type(getattr(policy, f.name)) is type(default), f"{type(policy).__name__}.{f.name}"
    assert len(parts) == len(NOT_SETTINGS)


def test_one_path_a_field_set_by_a_setting_is_not_given_too() -> None:
    with pytest.raises(TypeError, match="hangover_ms"):
        build(EndpointPolicy, Settings(), hangover_ms=500)
    assert build(EndpointPolicy, Settings(vad={"hangover_ms": 500}), speculative_ms=0).hangover_ms == 500


def test_a_setting_takes_the_core_default_unless_it_gives_its_own() -> None:
    assert Settings().turn.hangover_max_ms == EndpointPolicy().hangover_max_ms
    assert Settings().turn.barge_in_min_ms == BargeInPolicy().min_speech_ms
    assert Settings().turn.fragment_words == 3 != EndpointPolicy().fragment_words  # the server's own
    assert Settings().turn.hangover_min_ms == 500 != EndpointPolicy().hangover_min_ms
    with pytest.raises(TypeError, match="no field"):
        core(EndpointPolicy, "hangover")
    with pytest.raises(TypeError, match="no default"):
        core(SessionConfig, "language")


def test_the_schema_names_each_settings_core_field() -> None:
    turn = Settings.model_json_schema()["$defs"]["TurnSettings"]["properties"]
    assert turn["acoustic_sure"]["core"] == "EndpointPolicy.sure"
    assert "core" not in turn["acoustic_model"]


# --- the acknowledgement switch ---------------------------------------------------------------------------------


def test_acknowledgements_are_on_by_default_with_each_languages_own_table() -> None:
    barge = session_config(Settings(), 24000, language="de").barge_in
    assert barge.acknowledging == Acknowledgements()
    assert passes("Ja, genau.", 1000, barge.acknowledging, barge.backchannel_max_ms, language="de")  # not short


def test_the_switch_off_makes_any_speech_over_the_minimum_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TURN__ACKNOWLEDGEMENTS", "false")
    monkeypatch.setenv("AGENT_TURN__BACKCHANNELS", '["roger"]')
    barge = session_config(load_settings(), 24000, language="de").barge_in
    assert barge.acknowledging == Acknowledgements(on=False, extra=("roger",))
    for text, language in (("Ja, genau.", "de"), ("Uh-huh.", "en"), ("Roger.", "en"), ("はい", "ja")):
        assert not passes(text, 400, barge.acknowledging, barge.backchannel_max_ms, language=language)
    assert passes("", 400, barge.acknowledging, barge.backchannel_max_ms, language="de")  # no words: no bid


def test_the_operators_words_join_every_languages_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TURN__BACKCHANNELS", '["roger"]')
    barge = session_config(load_settings(), 24000, language="en").barge_in
    for text, language in (("Roger.", "en"), ("Roger.", "fr"), ("Uh-huh.", "en"), ("D'accord.", "fr")):
        assert passes(text, 1000, barge.acknowledging, barge.backchannel_max_ms, language=language), text
    assert not passes("Roger.", 1000, Acknowledgements(), barge.backchannel_max_ms, language="en")
