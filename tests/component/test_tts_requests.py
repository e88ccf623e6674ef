"""Clone requests, made on the event loop, carry the language of the text."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import cast

import pytest

from agent.adapters.clone_tts import CloneTTS
from agent.audio.wav import wav_bytes
from agent.config import TtsSettings
from agent.errors import UnknownVoice
from agent.ports import ConsentRecord, Voice, VoiceRecord, VoiceStore


class _Store:
    """One enrolled voice, ``alice`` of tenant ``default``, enrolled in ``language``."""

    def __init__(self, language: str) -> None:
        audio = wav_bytes(b"\x00\x01" * 2400, 24000)
        sha = hashlib.sha256(audio).hexdigest()
        consent = ConsentRecord("I agree.", "Alice", "2025-01-01T00:00:00Z", sha, "cli", "default")
        record = VoiceRecord("alice", "v1", "Hello there.", language, consent, sha, 0.1, "2025-01-01", "default")
        self.voice = Voice(record, audio)

    async def get(self, tenant: str, name: str) -> Voice:
        if (tenant, name) != ("default", "alice"):
            raise UnknownVoice(name)
        return self.voice


class _Transport:
    """Answers every request with a short WAV and keeps the request bodies."""

    provider = "fake"
    endpoint = "fake-endpoint"

    def __init__(self) -> None:
        self.bodies: list[dict[str, object]] = []

    async def invoke(self, body: bytes) -> tuple[bytes, str | None]:
        self.bodies.append(json.loads(body))
        return wav_bytes(b"\x00\x10" * 240, 24000), "audio/wav"

    async def open_stream(self, body: bytes) -> tuple[str | None, AsyncIterator[bytes]]:
        self.bodies.append(json.loads(body))

        async def parts() -> AsyncIterator[bytes]:
            yield b"\x00\x10" * 240

        return "audio/pcm", parts()

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize(
    ("asked", "configured", "enrolled", "sent"),
    [
        ("de", "", "en", "German"),  # the synthesize argument first
        ("de", "French", "en", "German"),
        (None, "French", "en", "French"),  # then AGENT_TTS__LANGUAGE
        (None, "", "ja", "Japanese"),  # then the language the voice was enrolled in
    ],
)
@pytest.mark.parametrize("streaming", [True, False])
async def test_clone_requests_carry_the_language_of_the_text(
    asked: str | None, configured: str, enrolled: str, sent: str, streaming: bool
) -> None:
    transport = _Transport()
    settings = TtsSettings(backend="vllm-omni", language=configured, streaming=streaming)
    tts = CloneTTS(settings, cast(VoiceStore, _Store(enrolled)), transport)
    handle = await tts.resolve_voice("alice")
    text = "Guten Tag. Wie kann ich Ihnen heute helfen? Sagen Sie es mir einfach."
    audio = [chunk async for chunk in tts.synthesize(text, handle, language=asked)]
    assert audio and transport.bodies
    assert {body["language"] for body in transport.bodies} == {sent}
