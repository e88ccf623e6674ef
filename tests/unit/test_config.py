from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.__main__ import parse_args, settings_from
from agent.config import Settings, load_settings
from agent.runtime.policy import session_config
from agent.runtime.stages import transcript_job


def test_defaults_are_local() -> None:
    s = Settings()
    assert (s.server.host, s.server.port) == ("127.0.0.1", 8765)
    assert s.asr.model == "" and s.tts.backend == "piper" and s.llm.backend == "local"


def test_environment_nested_with_double_underscore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_SERVER__PORT", "9001")
    monkeypatch.setenv("AGENT_SERVER__HOST", "0.0.0.0")
    monkeypatch.setenv("AGENT_VAD__HANGOVER_MS", "450")
    s = load_settings()
    assert (s.server.host, s.server.port, s.vad.hangover_ms) == ("0.0.0.0", 9001, 450)


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


@pytest.mark.parametrize(
    ("env", "value"),
    [("AGENT_AUDIO__OUTPUT_SAMPLE_RATE", "44100"), ("AGENT_VAD__BACKEND", "magic"), ("AGENT_SERVER__PORT", "70000")],
)
def test_invalid_values_are_rejected(monkeypatch: pytest.MonkeyPatch, env: str, value: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ValidationError):
        load_settings()


def test_the_speculative_transcript_comes_earlier_where_the_reply_is_remote() -> None:
    assert Settings().speculative_ms == 120  # local models: the reply is ready by the end of turn anyway
    assert Settings(llm={"backend": "openai", "model": "m"}).speculative_ms == 60
    assert Settings(tts={"backend": "sagemaker"}).speculative_ms == 60
    assert Settings(llm={"backend": "bedrock", "model": "m"}, turn={"speculative_ms": 120}).speculative_ms == 120
    assert Settings(tts={"backend": "sagemaker"}, turn={"speculative_ms": 0}).speculative_ms == 0  # off
    remote = Settings(tts={"backend": "sagemaker"})
    assert session_config(remote, 24000).endpointing.speculative_ms == 60  # what the core is given
    assert transcript_job("speculative", remote).slack_s == (420 - 60) / 1000
