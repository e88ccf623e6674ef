"""End to end over /ws with AGENT_TTS__BACKEND=sagemaker pointed at the emulator and an enrolled voice."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.piper_tts import LOCAL_VOICE
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.ports import Voice
from agent.runtime.components import Components
from agent.runtime.server import running_server
from agent.runtime.speech import Fallback
from clients.protocol_client import converse, converse_utterances
from tests.fakes.sagemaker_emulator import SageMakerEmulator
from tests.integration.conftest import local_settings
from tests.integration.sagemaker_fixtures import REFERENCE_TEXT, aws_env, emulator, store, voice  # noqa: F401
from tests.speech import silence, speech_pcm16, wer

pytestmark = pytest.mark.models


def rms(pcm: bytes) -> float:
    x = np.frombuffer(pcm, dtype="<i2").astype(np.float64) / 32768.0
    return float(np.sqrt(np.mean(x * x))) if x.size else 0.0


def cloned(components: Components, emu: SageMakerEmulator, voices: FileVoiceStore) -> tuple[Components, SageMakerTTS]:
    settings = local_settings(tts={"backend": "sagemaker", "endpoint_url": emu.url, "retry_base_s": 0.01})
    tts = SageMakerTTS(settings.tts, voices)
    built = Components(
        stt=components.stt,
        llm=components.llm,
        tts=tts,
        new_detector=components.new_detector,
        fallback=Fallback(components.tts, LOCAL_VOICE),
        voices=voices,
    )
    return built, tts


async def test_the_caller_hears_the_enrolled_voice_from_sagemaker(
    components: Components,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    voice: Voice,  # noqa: F811
) -> None:
    built, tts = cloned(components, emulator, store)
    settings = local_settings(tts={"backend": "sagemaker", "endpoint_url": emulator.url})
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            # A question with a fixed answer (a time would make the check depend on how digits are spoken).
            pcm = silence(400) + speech_pcm16("Could you tell me a joke, please?") + silence(200)
            conversation = await converse(server.ws_url, pcm, 16000, voice="alice", speed=2.0, timeout_s=30)
    finally:
        await tts.aclose()

    assert conversation.session["voice"] == "alice"
    assert conversation.errors == []
    (turn,) = conversation.turns
    assert turn.audio_seconds > 0.5 and rms(bytes(turn.audio)) > 0.02
    assert emulator.requests, "the endpoint was never called"
    for request in emulator.requests:
        assert request.body is not None
        head, _, data = request.body["ref_audio"].partition(",")
        assert head == "data:audio/wav;base64" and base64.b64decode(data) == voice.wav
        assert request.body["ref_text"] == REFERENCE_TEXT
    heard = await components.stt.transcribe(float_to_pcm16(resample(pcm16_to_float(bytes(turn.audio)), 24000, 16000)))
    # what the caller heard is the reply, spoken in the cloned voice (Piper behind the emulator)
    assert "scarecrow" in turn.reply.lower()
    assert wer(turn.reply, heard.text) <= 0.25, heard.text


async def test_a_failing_endpoint_gives_tts_failed_and_an_apology_and_the_next_turn_works(
    components: Components,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    built, tts = cloned(components, emulator, store)
    settings = local_settings(tts={"backend": "sagemaker", "endpoint_url": emulator.url})
    emulator.fail_next("model_error_400", 1)
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            utterances = [speech_pcm16("Hello there."), speech_pcm16("Tell me a joke.")]
            conversation = await converse_utterances(
                server.ws_url, utterances, 16000, voice="alice", speed=2.0, turn_timeout_s=30
            )
    finally:
        await tts.aclose()

    first, second = conversation.turns
    assert [(e["code"], e.get("turn")) for e in conversation.errors] == [("tts_failed", first.turn)]
    assert first.audio_seconds > 1.0 and rms(bytes(first.audio)) > 0.02  # the apology, in the local voice
    assert second.audio_seconds > 0.5 and second.metrics is not None and not second.metrics["interrupted"]
    assert emulator.requests[0].fault == "model_error_400"
    assert all(r.status == 200 for r in emulator.requests[1:])
