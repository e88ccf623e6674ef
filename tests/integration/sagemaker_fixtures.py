"""Fixtures shared by the SageMaker / vLLM-Omni tests: the emulator (Piper voice) and an enrolled voice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.ports import TextToSpeech, Voice
from agent.runtime.components import Components
from testing.emulators.sagemaker import SageMakerEmulator, make_voice

REFERENCE_TEXT = "The quick brown fox jumps over the lazy dog."


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials, no config files, no instance metadata: the emulator ignores signatures."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
async def emulator(components: Components, aws_env: None) -> AsyncIterator[SageMakerEmulator]:
    piper: TextToSpeech = components.tts  # the session's local Piper voice
    async with SageMakerEmulator(piper) as emu:
        yield emu


@pytest.fixture
async def voice(emulator: SageMakerEmulator) -> Voice:
    return await make_voice(emulator, "alice", REFERENCE_TEXT)


@pytest.fixture
async def store(tmp_path: Path, voice: Voice) -> FileVoiceStore:
    voices = FileVoiceStore(tmp_path / "voices")
    await voices.add(voice)
    return voices
