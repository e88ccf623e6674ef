"""The self-hosted vLLM-Omni backend: the same payload over plain HTTP to the emulator's /v1/audio/speech."""

from __future__ import annotations

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.vllm_omni_tts import VllmOmniTTS
from agent.config import TtsSettings
from agent.errors import ProviderError, ProviderUnavailable
from testing.emulators.sagemaker import SageMakerEmulator
from tests.integration.sagemaker_fixtures import REFERENCE_TEXT, aws_env, emulator, store, voice  # noqa: F401

pytestmark = pytest.mark.models
SENTENCE = "Your order will arrive on Tuesday morning."


async def test_streams_retries_and_fails_cleanly(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    settings = TtsSettings(backend="vllm-omni", base_url=emulator.url, retry_base_s=0.01, retry_max_s=0.02)
    tts = VllmOmniTTS(settings, store)
    try:
        audio = b"".join([c async for c in tts.synthesize(SENTENCE, "default/alice")])
        assert audio == await emulator.audio(SENTENCE)
        request = emulator.requests[-1]
        assert request.path == "/v1/audio/speech" and request.body is not None
        assert request.body["ref_text"] == REFERENCE_TEXT and request.body["stream_format"] == "audio"

        emulator.fail_next("unavailable", 2)
        assert b"".join([c async for c in tts.synthesize(SENTENCE, "default/alice")]) == audio

        emulator.fail_next("stream_error", 1)  # the connection is cut before audio: re-sent without streaming
        assert b"".join([c async for c in tts.synthesize(SENTENCE, "default/alice")]) == audio

        emulator.break_after_parts = 2  # the connection is cut after audio: continued without streaming
        emulator.fail_next("mid_stream", 1)
        assert b"".join([c async for c in tts.synthesize(SENTENCE, "default/alice")]) == audio
        asked = [(bool((r.body or {}).get("stream")), r.fault) for r in emulator.requests[-2:]]
        assert asked == [(True, "mid_stream"), (False, None)]
        assert tts.breaker.status().recovered_total == 3  # the two retries above, and this one

        emulator.fail_next("model_error_400", 1)
        with pytest.raises(ProviderError) as caught:
            b"".join([c async for c in tts.synthesize(SENTENCE, "default/alice")])
        assert not isinstance(caught.value, ProviderUnavailable)
    finally:
        await tts.aclose()
