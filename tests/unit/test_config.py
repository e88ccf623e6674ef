from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from agent.__main__ import parse_args, settings_from
from agent.config import Settings, TwilioSettings, WithSecrets, declared, load_settings
from agent.runtime.call.policies import session_config
from agent.runtime.call.stages import transcript_job


def test_defaults_are_local() -> None:
    s = Settings()
    assert (s.server.host, s.server.port) == ("127.0.0.1", 8765)
    assert s.asr.model == "" and s.tts.backend == "piper" and s.llm.backend == "local"


def test_environment_nested_with_double_underscore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_SERVER__PORT", "9001")
    monkeypatch.setenv("AGENT_SERVER__HOST", "0.0.0.0")
    monkeypatch.setenv("AGENT_VAD__HANGOVER_MS", "650")
    s = load_settings()
    assert (s.server.host, s.server.port, s.vad.hangover_ms) == ("0.0.0.0", 9001, 650)


def test_flags_override_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_SERVER__PORT", "9001")
    s = settings_from(parse_args(["--port", "9100", "--host", "127.0.0.2"]))
    assert (s.server.host, s.server.port) == ("127.0.0.2", 9100)
    s = settings_from(parse_args(["serve", "--port", "9200"]))
    assert s.server.port == 9200
    assert settings_from(parse_args([])).server.port == 9001


def test_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / "x.env"
    env.write_text("AGENT_SERVER__PORT=9300\nAGENT_ASR__CPU_THREADS=1\n")
    s = load_settings(env)
    assert s.server.port == 9300 and s.asr.cpu_threads == 1
    monkeypatch.setenv("AGENT_SERVER__PORT", "9400")
    assert load_settings(env).server.port == 9400  # the environment wins over the file


def test_documented_local_env_matches_defaults() -> None:
    documented = load_settings(Path(__file__).parents[2] / "config" / "local.env")
    assert documented == Settings()


def test_connections_without_a_credential_take_a_share_of_those_opening() -> None:
    assert Settings().server.opening_anonymous == 48  # of 64: a quarter is kept for credentialed upgrades
    assert Settings(server={"max_opening": 10}).server.opening_anonymous == 8
    assert Settings(server={"max_opening": 10, "max_opening_anonymous": 10}).server.opening_anonymous == 10
    with pytest.raises(ValidationError, match="max_opening_anonymous"):
        Settings(server={"max_opening": 10, "max_opening_anonymous": 11})


@pytest.mark.parametrize(
    ("env", "value"),
    [("AGENT_AUDIO__OUTPUT_SAMPLE_RATE", "44100"), ("AGENT_VAD__BACKEND", "magic"), ("AGENT_SERVER__PORT", "70000")],
)
def test_invalid_values_are_rejected(monkeypatch: pytest.MonkeyPatch, env: str, value: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ValidationError):
        load_settings()


def test_a_default_hangover_below_the_shortest_wait_is_refused_with_the_three_waits() -> None:
    # The shortest wait is 500 ms by default: an old AGENT_VAD__HANGOVER_MS=420 alone says what to change.
    with pytest.raises(ValidationError, match="got 500 / 420 / 1500"):
        Settings(vad={"hangover_ms": 420})


def test_a_longest_turn_shorter_than_the_longest_utterance_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"max_turn_ms must be at least vad\.max_utterance_ms"):
        Settings(vad={"max_utterance_ms": 15000, "max_turn_ms": 10000})
    assert Settings(vad={"max_utterance_ms": 15000, "max_turn_ms": 15000}).vad.max_turn_ms == 15000


def test_the_speculative_transcript_comes_earlier_where_the_reply_is_remote() -> None:
    assert Settings().speculative_ms == 120  # local models: the reply is ready by the end of turn anyway
    assert Settings(llm={"backend": "openai", "model": "m"}).speculative_ms == 60
    assert Settings(tts={"backend": "sagemaker"}).speculative_ms == 60
    assert Settings(llm={"backend": "bedrock", "model": "m"}, turn={"speculative_ms": 120}).speculative_ms == 120
    assert Settings(tts={"backend": "sagemaker"}, turn={"speculative_ms": 0}).speculative_ms == 0  # off
    remote = Settings(tts={"backend": "sagemaker"})
    assert session_config(remote, 24000, language="en").endpointing.speculative_ms == 60  # what the core is given
    assert transcript_job("speculative", remote).slack_s == (520 - 60) / 1000  # due by the default hangover


# --- secrets given empty or blank are unset (issue 19) --------------------------------------------------------

SECRET_SETTINGS = [
    ("AGENT_TWILIO__AUTH_TOKEN", "twilio", "auth_token"),
    ("AGENT_TELNYX__STREAM_AUTH_TOKEN", "telnyx", "stream_auth_token"),
    ("AGENT_VONAGE__SIGNATURE_SECRET", "vonage", "signature_secret"),
    ("AGENT_VONAGE__AUTHORIZATION", "vonage", "authorization"),
    ("AGENT_LLM__API_KEY", "llm", "api_key"),
    ("AGENT_TTS__API_KEY", "tts", "api_key"),
]


@pytest.mark.parametrize(("env", "section", "field"), SECRET_SETTINGS)
@pytest.mark.parametrize("blank", ["", " ", "\t\n "])
def test_an_empty_or_blank_secret_is_unset_and_remembered(
    monkeypatch: pytest.MonkeyPatch, env: str, section: str, field: str, blank: str
) -> None:
    monkeypatch.setenv(env, blank)
    settings = load_settings()
    part = getattr(settings, section)
    assert getattr(part, field) is None  # never the HMAC key ''
    assert part.blank_secrets == {field}
    assert getattr(settings.model_copy(update={"log_level": "DEBUG"}), section).blank_secrets == {field}


@pytest.mark.parametrize(("env", "section", "field"), SECRET_SETTINGS)
def test_a_secret_with_a_value_is_kept_as_given(
    monkeypatch: pytest.MonkeyPatch, env: str, section: str, field: str
) -> None:
    monkeypatch.setenv(env, " s3cret ")
    part = getattr(load_settings(), section)
    assert getattr(part, field).get_secret_value() == " s3cret " and part.blank_secrets == frozenset()
    assert getattr(Settings(), section).blank_secrets == frozenset()


def test_blank_secrets_from_arguments_and_from_an_env_file(tmp_path: Path) -> None:
    assert TwilioSettings(auth_token="").blank_secrets == {"auth_token"}
    assert TwilioSettings(auth_token=SecretStr(" ")).auth_token is None
    env = tmp_path / "agent.env"
    env.write_text("AGENT_VONAGE__SIGNATURE_SECRET=\nAGENT_VONAGE__AUTHORIZATION=Bearer x\n")
    vonage = load_settings(env).vonage
    assert vonage.signature_secret is None and vonage.blank_secrets == {"signature_secret"}
    assert vonage.authorization is not None and vonage.authorization.get_secret_value() == "Bearer x"
    built = Settings(twilio=TwilioSettings(auth_token=""))  # a section built already keeps what it noted
    assert built.twilio.blank_secrets == {"auth_token"}


def test_every_secret_of_these_sections_is_covered_by_the_shared_check() -> None:
    sections = {section for _, section, _ in SECRET_SETTINGS}
    for name in sections:
        model = type(getattr(Settings(), name))
        assert issubclass(model, WithSecrets)
        assert set(model.secret_fields()) == {field for _, s, field in SECRET_SETTINGS if s == name}


INERT_SETTINGS: frozenset[str] = frozenset()
"""``AGENT_*`` fields documented as having no effect (none today): a field named here must say so in
config/local.env. Any other field must be read by the server outside ``agent/config``: itself, or, for a setting
of the session core, the core field it sets (``agent.config.policy_fields``)."""


def test_every_setting_is_read_by_the_server_or_documented_as_inert() -> None:
    import re

    from pydantic import BaseModel

    agent = Path(__file__).parents[2] / "agent"
    source = "\n".join(p.read_text() for p in agent.rglob("*.py") if "config" not in p.relative_to(agent).parts)
    targets = declared(Settings)
    unread = []
    for section, info in Settings.model_fields.items():
        model = info.annotation
        fields = model.model_fields if isinstance(model, type) and issubclass(model, BaseModel) else {section: None}
        for name in fields:
            path = f"{section}.{name}" if name != section else name
            read = targets[path].name if path in targets else name
            if path not in INERT_SETTINGS and not re.search(rf"\.{read}\b", source):
                unread.append(path)
    assert unread == [], f"settings nothing reads (a dead setting, or one to list in INERT_SETTINGS): {unread}"


def test_the_turn_detector_waits_as_long_as_the_end_of_turn_may_and_no_setting_says_otherwise() -> None:
    # The detector's hangover was once a copy of vad.hangover_ms that the core overwrote: one path now.
    config = session_config(Settings(vad={"hangover_ms": 500}, turn={"hangover_max_ms": 1300}), 24000, language="en")
    assert not hasattr(config.policy, "hangover_ms")
    assert (config.endpointing.hangover_ms, config.endpointing.hangover_max_ms) == (500, 1300)
