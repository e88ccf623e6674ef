"""``python -m agent voices check`` as a user runs it: a subprocess against the SageMaker emulator (the Piper voice
behind the real wire protocol), with a voice enrolled in a temporary store."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.piper_tts import PiperTTS
from agent.cli.voices_check import SENTENCES
from agent.config import TtsSettings
from testing.emulators.sagemaker import SageMakerEmulator, make_voice

ROOT = Path(__file__).parents[2]
REFERENCE_TEXT = "The quick brown fox jumps over the lazy dog, and then it runs back into the forest."
AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_CONFIG_FILE": "/dev/null",
    "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def environment(store: Path, **settings: str) -> dict[str, str]:
    env = {**os.environ, **AWS, "AGENT_VOICES__DIR": str(store), "HF_HUB_OFFLINE": "1"}
    env.pop("AWS_PROFILE", None)
    return env | {f"AGENT_{name.upper()}": value for name, value in settings.items()}


def check(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "agent", "voices", "check", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


@pytest.mark.models
async def test_check_scores_each_sentence_against_the_reference(tmp_path: Path) -> None:
    piper = PiperTTS.load(TtsSettings(max_concurrency=1))
    try:
        async with SageMakerEmulator(piper) as emulator:
            store = FileVoiceStore(tmp_path / "voices")
            await store.add(await make_voice(emulator, "alice", REFERENCE_TEXT, language="de"))
            env = environment(tmp_path / "voices", tts__backend="sagemaker", tts__endpoint_url=emulator.url)
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agent", "voices", "check", "alice", "--sentences", "2",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=ROOT,
            )  # fmt: skip
            out, err = await asyncio.wait_for(process.communicate(), 120)
            asked = [(r.body or {}).get("language") for r in emulator.requests]
    finally:
        piper.close()
    stdout, stderr = out.decode(), err.decode()
    assert process.returncode == 0, stderr
    assert "sentence 1/2: synthesizing" in stderr and "sentence 2/2: scoring" in stderr  # progress on stderr
    assert "voice 'alice' in tenant 'default', German (de)" in stdout  # the voice's own language by default
    assert set(asked) == {"German"}  # ...asked of the endpoint for every sentence
    rows = re.findall(r"^ *(\d) +(0\.\d{3}) +[\d.]+ s +(.+)$", stdout, re.MULTILINE)
    assert [(int(n), text) for n, _, text in rows] == [(1, SENTENCES["de"][0]), (2, SENTENCES["de"][1])]
    scores = [float(score) for _, score, _ in rows]
    # The emulator speaks every voice in the Piper voice the reference was made with: the same speaker.
    assert min(scores) > 0.75
    summary = re.search(r"^mean (0\.\d{3}), min (0\.\d{3}) over 2 sentence\(s\)$", stdout, re.MULTILINE)
    assert summary is not None and float(summary.group(2)) == min(scores)
    assert "drift signal, not a verifier" in " ".join(stdout.split())


def test_check_refusals_and_help(tmp_path: Path) -> None:
    store = tmp_path / "voices"
    helped = check(environment(store), "--help")
    assert helped.returncode == 0
    text = " ".join(helped.stdout.split())  # argparse wraps to the terminal's width
    assert all(word in text for word in ("--language", "--sentences", "--tenant", "not a verifier"))
    assert check(environment(store), "x", "--sentences", "9").returncode == 2
    language = check(environment(store), "x", "--language", "klingon")
    assert language.returncode == 2 and "one of en, zh" in language.stderr
    local = check(environment(store), "alice")  # the default backend, piper: no cloned voices
    assert local.returncode == 1 and "cloning backend" in local.stderr and "Traceback" not in local.stderr
    sagemaker = {"tts__backend": "sagemaker", "tts__endpoint_url": "http://127.0.0.1:9"}
    missing = check(environment(store, fidelity__model=str(tmp_path / "none.pt"), **sagemaker), "alice")
    assert missing.returncode == 1 and "run make" in missing.stderr
    unknown = check(environment(store, **sagemaker), "nobody", "--tenant", "acme")
    assert unknown.returncode == 1 and "unknown_voice" in unknown.stderr and "'acme'" in unknown.stderr
