"""The SageMaker adapter through the real aiobotocore client against the local SageMaker emulator."""

from __future__ import annotations

import base64
import io
import time
import wave
from collections.abc import AsyncIterator

import pytest
from aiobotocore.session import get_session

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.sagemaker_tts import SageMakerTTS, client_config
from agent.adapters.tts_requests import split_text, wav_data_uri
from agent.config import TtsSettings
from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable, UnknownVoice, VoiceRequired
from agent.ports import Voice
from tests.fakes.sagemaker_emulator import SageMakerEmulator
from tests.integration.sagemaker_fixtures import REFERENCE_TEXT, aws_env, emulator, store, voice  # noqa: F401

pytestmark = pytest.mark.models

SENTENCE = "Your order will arrive on Tuesday morning."
TEN = [
    "One apple fell from the tall tree.",
    "Two birds sang on the fence all day.",
    "Three cats slept in the warm sun.",
    "Four dogs ran across the green field.",
    "Five fish swam in the cold river.",
    "Six horses pulled the heavy cart home.",
    "Seven kids played near the old school.",
    "Eight boats sailed into the quiet bay.",
    "Nine stars shone over the dark hills.",
    "Ten bells rang for the new year.",
]


def settings(emu: SageMakerEmulator, **overrides: object) -> TtsSettings:
    values: dict[str, object] = {
        "backend": "sagemaker",
        "endpoint_url": emu.url,
        "retry_base_s": 0.01,
        "retry_max_s": 0.05,
    }
    values.update(overrides)
    return TtsSettings.model_validate(values)


@pytest.fixture
async def tts(emulator: SageMakerEmulator, store: FileVoiceStore) -> AsyncIterator[SageMakerTTS]:  # noqa: F811
    adapter = SageMakerTTS(settings(emulator), store)
    yield adapter
    await adapter.aclose()


async def speak(tts: SageMakerTTS, text: str, name: str = "alice") -> bytes:
    return b"".join([chunk async for chunk in tts.synthesize(text, name)])


async def test_streaming_request_has_the_exact_shape(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
    voice: Voice,  # noqa: F811
) -> None:
    assert tts.sample_rate == 24000
    assert await tts.resolve_voice("alice") == "alice"
    audio = await speak(tts, SENTENCE)

    assert audio == await emulator.audio(SENTENCE)  # all of it, in order, odd PayloadPart cuts re-joined
    (request,) = emulator.requests
    assert request.path == "/endpoints/qwen3-tts-voice-clone/invocations-response-stream"
    assert request.headers["X-Amzn-SageMaker-Custom-Attributes"] == "route=/v1/audio/speech"
    assert request.headers["Content-Type"] == "application/json"
    assert request.body == {
        "input": SENTENCE,
        "task_type": "Base",
        "ref_audio": wav_data_uri(voice.wav),
        "ref_text": REFERENCE_TEXT,
        "language": "English",
        "stream": True,
        "stream_format": "audio",
        "response_format": "pcm",
    }
    head, _, data = request.body["ref_audio"].partition(",")
    assert head == "data:audio/wav;base64"
    with wave.open(io.BytesIO(base64.b64decode(data))) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (24000, 1, 2)


async def test_non_streaming_asks_for_a_wav_and_reuses_the_same_data_uri(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    tts = SageMakerTTS(settings(emulator, streaming=False), store)
    try:
        first = await speak(tts, SENTENCE)
        await tts.resolve_voice("alice")  # a new session resolving the same voice
        await speak(tts, "And a second sentence for the same voice.")
    finally:
        await tts.aclose()
    assert first == await emulator.audio(SENTENCE)
    one, two = emulator.requests
    assert one.path == "/endpoints/qwen3-tts-voice-clone/invocations"
    assert one.body is not None and two.body is not None
    assert one.body["response_format"] == "wav" and "stream" not in one.body
    assert one.body["ref_audio"] == two.body["ref_audio"]  # byte-identical: hits the server's ref-audio cache


async def test_the_container_rejects_a_request_without_the_route(
    emulator: SageMakerEmulator,  # noqa: F811
    voice: Voice,  # noqa: F811
) -> None:
    session = get_session()
    async with session.create_client(
        "sagemaker-runtime", region_name="us-east-1", endpoint_url=emulator.url, config=client_config(TtsSettings())
    ) as client:
        with pytest.raises(client.exceptions.ModelError) as caught:
            await client.invoke_endpoint(
                EndpointName="qwen3-tts-voice-clone", Body=b'{"input": "hi"}', ContentType="application/json"
            )
    assert caught.value.response["OriginalStatusCode"] == 400
    assert len(emulator.requests) == 1


@pytest.mark.parametrize("fault", ["throttling", "unavailable", "internal", "not_ready", "model_error_500"])
async def test_transient_errors_are_retried(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
    fault: str,
) -> None:
    emulator.fail_next(fault, 2)
    assert await speak(tts, SENTENCE) == await emulator.audio(SENTENCE)
    assert [r.fault for r in emulator.requests] == [fault, fault, None]


@pytest.mark.parametrize("fault", ["model_error_400", "validation"])
async def test_request_errors_are_not_retried(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
    fault: str,
) -> None:
    emulator.fail_next(fault, 1)
    with pytest.raises(ProviderError) as caught:
        await speak(tts, SENTENCE)
    assert not isinstance(caught.value, ProviderUnavailable)
    assert caught.value.provider == "sagemaker"
    assert len(emulator.requests) == 1


async def test_retries_stop_after_max_attempts(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    emulator.fail_next("unavailable", 5)
    with pytest.raises(ProviderUnavailable):
        await speak(tts, SENTENCE)
    assert len(emulator.requests) == 3


async def test_a_hanging_endpoint_times_out_at_the_deadline(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    tts = SageMakerTTS(settings(emulator, deadline_s=2.0), store)  # room for a loaded 2-core CI machine
    emulator.fail_next("hang", 1)
    started = time.perf_counter()
    try:
        with pytest.raises(ProviderTimeout):
            await speak(tts, SENTENCE)
    finally:
        await tts.aclose()
    assert time.perf_counter() - started < 6
    assert len(emulator.requests) == 1


async def test_a_stream_broken_before_audio_is_resent_without_streaming(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    emulator.fail_next("stream_error", 1)
    assert await speak(tts, SENTENCE) == await emulator.audio(SENTENCE)
    assert [(r.streaming, r.fault) for r in emulator.requests] == [(True, "stream_error"), (False, None)]


async def test_a_stream_broken_after_audio_was_played_is_not_repeated(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    expected = await emulator.audio(SENTENCE)  # synthesized now, so the emulator's pacing is exact
    emulator.rtf = 1.0  # 80 ms between parts: the first part surely reached the caller before the break
    emulator.fail_next("mid_stream", 1)
    heard = bytearray()
    with pytest.raises(ProviderUnavailable):
        async for chunk in tts.synthesize(SENTENCE, "alice"):
            heard += chunk
    assert 0 < len(heard) < len(expected)
    assert len(emulator.requests) == 1


async def test_server_sent_events_are_detected_and_decoded(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    emulator.force_sse = True
    assert await speak(tts, SENTENCE) == await emulator.audio(SENTENCE)


async def test_a_ten_sentence_reply_arrives_complete_and_in_order(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    emulator.ttfa_ms, emulator.rtf = 30, 0.05
    tts = SageMakerTTS(settings(emulator, pipeline_depth=3), store)

    async def sentences() -> AsyncIterator[str]:
        for sentence in TEN:
            yield sentence

    try:
        audio = b"".join([chunk async for chunk in tts.synthesize_stream(sentences(), "alice")])
        whole = await speak(tts, " ".join(TEN))  # one long text: cut into sentences by the adapter
    finally:
        await tts.aclose()
    expected = b"".join([await emulator.audio(s) for s in TEN])
    assert audio == expected
    assert whole == b"".join([await emulator.audio(p) for p in split_text(" ".join(TEN))])
    inputs = [r.body["input"] for r in emulator.requests[:10] if r.body]
    assert sorted(inputs) == sorted(TEN)  # one request per sentence


async def test_voice_resolution(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    tts = SageMakerTTS(settings(emulator), store)
    with pytest.raises(UnknownVoice):
        await tts.resolve_voice("nobody")
    with pytest.raises(VoiceRequired, match="AGENT_TTS__DEFAULT_VOICE"):
        await tts.resolve_voice(None)
    with_default = SageMakerTTS(settings(emulator, default_voice="alice"), store)
    assert await with_default.resolve_voice(None) == "alice"
    assert emulator.requests == []
