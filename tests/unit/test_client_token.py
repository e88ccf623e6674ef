"""Clients carry the access token as ``Authorization: Bearer`` on the upgrade (never in the URL)."""

from __future__ import annotations

import pytest

from clients.cli import parse_args
from clients.protocol_client import bearer


def test_cli_token_flag_and_environment_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_TOKEN", raising=False)
    assert parse_args(["--wav", "a.wav"]).token is None
    assert parse_args(["--wav", "a.wav", "--token", "T1"]).token == "T1"
    monkeypatch.setenv("AGENT_TOKEN", "T2")
    assert parse_args(["--wav", "a.wav"]).token == "T2"
    assert parse_args(["--wav", "a.wav", "--token", "T3"]).token == "T3"


def test_bearer_header() -> None:
    assert bearer(None) == {} and bearer("") == {}
    assert bearer("abc") == {"Authorization": "Bearer abc"}
