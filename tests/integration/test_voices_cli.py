"""``python -m agent voices ...`` as a user runs it: subprocesses with a temporary voice directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.reference_files import encode
from testing.speech import silence, speech_pcm16

ROOT = Path(__file__).parents[2]
SENTENCE = "Good morning, this is a short recording of my natural speaking voice."


def voices(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENT_VOICES__DIR": str(directory), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "agent", "voices", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


@pytest.fixture
def mp3_named_wav(tmp_path: Path) -> Path:
    path = tmp_path / "me.wav"  # an MP3 under a .wav name: decided by content
    path.write_bytes(encode(silence(400, 24000) + speech_pcm16(SENTENCE, 24000), 24000, "mp3"))
    return path


def test_add_list_show_remove(tmp_path: Path, mp3_named_wav: Path) -> None:
    store = tmp_path / "voices"
    added = voices(
        store, "add", "Me", "--audio", str(mp3_named_wav), "--transcript", SENTENCE, "--consent", "I agree",
        "--speaker", "Mo Jones",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "enrolled voice 'me'" in added.stdout and "decoding" in added.stderr and "storing" in added.stderr
    listed = voices(store, "list")
    assert listed.returncode == 0 and "me" in listed.stdout.split()
    shown = voices(store, "show", "me", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["transcript"] == SENTENCE
    consent = json.loads(shown.stdout)["consent"]
    assert (consent["statement"], consent["speaker"], consent["enrolled_by"], consent["tenant"]) == (
        "I agree", "Mo Jones", "cli", "default",
    )  # fmt: skip
    assert consent["audio_sha256"] == json.loads(shown.stdout)["sha256"] and consent["consented_at"]
    text = voices(store, "show", "me").stdout
    assert "consent:     valid" in text and "speaker:       Mo Jones" in text and "enrolled by:   cli" in text
    again = voices(store, "add", "me", "--audio", str(mp3_named_wav), "--transcript", "x", "--consent", "y")
    assert again.returncode == 1 and "voice_exists" in again.stderr
    assert voices(store, "remove", "me").returncode == 0
    gone = voices(store, "show", "me")
    assert gone.returncode == 1 and "unknown_voice" in gone.stderr
    assert json.loads(voices(store, "list", "--json").stdout) == []


def test_refusals_have_clear_messages_and_exit_codes(tmp_path: Path) -> None:
    store = tmp_path / "voices"
    text = tmp_path / "notes.mp3"
    text.write_text("not audio at all " * 20)
    bad = voices(store, "add", "x", "--audio", str(text), "--transcript", "t", "--consent", "c")
    assert bad.returncode == 1 and "bad_audio" in bad.stderr and "Traceback" not in bad.stderr
    missing = voices(store, "add", "x", "--audio", str(tmp_path / "nope.wav"), "--consent", "c")
    assert missing.returncode == 1 and "no such file" in missing.stderr
    usage = voices(store, "add", "x", "--audio", str(text))
    assert usage.returncode == 2 and "--consent" in usage.stderr
    name = voices(store, "add", "no/slashes", "--audio", str(text), "--transcript", "t", "--consent", "c")
    assert name.returncode == 1 and "bad_name" in name.stderr
    helped = voices(store, "--help")
    assert helped.returncode == 0 and all(c in helped.stdout for c in ("add", "list", "show", "remove"))
    add_help = voices(store, "add", "--help")
    assert all(flag in add_help.stdout for flag in ("--speaker", "--tenant", "--consent", "consent record"))
    tenant = voices(store, "list", "--tenant", "Not/A/Tenant")
    assert tenant.returncode == 2 and "tenant" in tenant.stderr


def test_tenants_are_separate_and_remove_deletes_everything(tmp_path: Path, mp3_named_wav: Path) -> None:
    store = tmp_path / "voices"
    for tenant in ("acme", "globex"):
        added = voices(
            store, "add", "me", "--audio", str(mp3_named_wav), "--transcript", SENTENCE, "--consent", "I agree",
            "--tenant", tenant,
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
    assert json.loads(voices(store, "list", "--json").stdout) == []  # the default tenant has none
    acme = json.loads(voices(store, "show", "me", "--tenant", "acme", "--json").stdout)
    assert acme["tenant"] == "acme" and acme["consent"]["tenant"] == "acme"
    missing = voices(store, "remove", "me")
    assert missing.returncode == 1 and "unknown_voice" in missing.stderr and "'default'" in missing.stderr
    asset_dir = store / "assets" / acme["voice_id"]
    asset_dir.mkdir(parents=True)
    (asset_dir / "phrase-apology").write_bytes(b"derived audio")
    removed = voices(store, "remove", "me", "--tenant", "acme")
    assert removed.returncode == 0 and "tenant 'acme'" in removed.stdout
    assert not asset_dir.exists()
    assert not (store / "audio" / f"{acme['voice_id']}.wav").exists()
    assert not (store / "consent" / f"{acme['voice_id']}.json").exists()
    assert [v["name"] for v in json.loads(voices(store, "list", "--tenant", "globex", "--json").stdout)] == ["me"]
