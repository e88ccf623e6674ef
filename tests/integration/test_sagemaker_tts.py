"""The SageMaker adapter through the real aiobotocore client against the local SageMaker emulator."""

from __future__ import annotations

import base64
import io
import json
import logging
import wave
from collections.abc import AsyncIterator

import pytest
from aiobotocore.session import get_session

from agent.adapters.clone_voices import VOICE_RECHECK_S
from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.sagemaker_tts import SageMakerTTS, client_config
from agent.adapters.tts_requests import split_text, wav_data_uri
from agent.config import TtsSettings
from agent.errors import CircuitOpen, ProviderError, ProviderTimeout, ProviderUnavailable, UnknownVoice, VoiceRequired
from agent.ports import Voice
from agent.work.resilience import BreakerState, CircuitBreaker, RetryBudget
from testing.emulators.sagemaker import SageMakerEmulator, make_voice
from testing.waits import within
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


async def speak(tts: SageMakerTTS, text: str, name: str = "default/alice", budget: RetryBudget | None = None) -> bytes:
    return b"".join([chunk async for chunk in tts.synthesize(text, name, budget)])


async def test_streaming_request_has_the_exact_shape(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
    voice: Voice,  # noqa: F811
) -> None:
    assert tts.sample_rate == 24000
    assert await tts.resolve_voice("alice") == "default/alice"
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
    # Nothing but the deadline can end this request first: the endpoint hangs for 15 times the deadline, then
    # answers a retryable 500 (the retry would succeed), and the read timeout is longer still. So a
    # ProviderTimeout naming the deadline, after one request, is the deadline firing, on no wall-clock bound.
    emulator.hang_s = 30.0
    tts = SageMakerTTS(settings(emulator, deadline_s=2.0, read_timeout_s=60.0), store)
    emulator.fail_next("hang", 1)
    try:
        with pytest.raises(ProviderTimeout) as caught:
            await within(speak(tts, SENTENCE), what="the deadline to end the hanging request")
    finally:
        await tts.aclose()
    assert "no audio within 2 s" in str(caught.value), caught.value
    assert len(emulator.requests) == 1


async def test_a_stream_broken_before_audio_is_resent_without_streaming(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    emulator.fail_next("stream_error", 1)
    assert await speak(tts, SENTENCE) == await emulator.audio(SENTENCE)
    assert [(r.streaming, r.fault) for r in emulator.requests] == [(True, "stream_error"), (False, None)]


@pytest.mark.parametrize("parts", [1, 3])
async def test_a_stream_broken_after_audio_continues_from_where_it_broke(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
    parts: int,
) -> None:
    expected = await emulator.audio(SENTENCE)
    emulator.break_after_parts = parts
    emulator.fail_next("mid_stream", 1)
    heard = bytearray()
    pieces = 0
    with caplog.at_level(logging.INFO):
        async for chunk in tts.synthesize(SENTENCE, "default/alice"):
            if pieces == 0:
                assert [r.fault for r in emulator.requests] == ["mid_stream"]  # audio came before the break
            heard += chunk
            pieces += 1
    assert bytes(heard) == expected  # all of it, nothing twice, nothing missing
    assert [(r.streaming, r.fault) for r in emulator.requests] == [(True, "mid_stream"), (False, None)]
    assert tts.breaker.status().recovered_total == 1
    assert any("stream broke after" in r.getMessage() for r in caplog.records)


async def test_retries_come_from_one_budget_per_reply(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    budget = RetryBudget(2)
    emulator.fail_next("unavailable", 1)
    assert await speak(tts, SENTENCE, budget=budget) == await emulator.audio(SENTENCE)  # one retry spent
    emulator.fail_next("unavailable", 5)
    seen = len(emulator.requests)
    with pytest.raises(ProviderUnavailable):
        await speak(tts, "And a second sentence of the same reply.", budget=budget)
    assert len(emulator.requests) - seen == 2  # max_attempts would allow 3; the reply had one retry left
    assert budget.left == 0 and budget.spent == 2


async def test_the_breaker_opens_fails_fast_and_closes_after_a_probe(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    now = [0.0]
    breaker = CircuitBreaker("sagemaker:test", 2, 30.0, lambda: now[0])
    tts = SageMakerTTS(settings(emulator, max_attempts=1), store, breaker)
    try:
        for _ in range(2):
            emulator.fail_next("unavailable", 1)
            with pytest.raises(ProviderUnavailable):
                await speak(tts, SENTENCE)
        assert breaker.status().state is BreakerState.OPEN
        seen = len(emulator.requests)
        with pytest.raises(CircuitOpen):
            await speak(tts, SENTENCE)
        assert len(emulator.requests) == seen  # refused without a request
        now[0] += 30.0
        assert await speak(tts, SENTENCE) == await emulator.audio(SENTENCE)  # the half-open probe
        assert breaker.status().state is BreakerState.CLOSED and len(emulator.requests) == seen + 1
    finally:
        await tts.aclose()


async def test_a_timeout_counts_as_a_failure(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    breaker = CircuitBreaker("sagemaker:test", 1, 30.0, lambda: 0.0)
    tts = SageMakerTTS(settings(emulator, deadline_s=0.5), store, breaker)
    emulator.fail_next("hang", 1)
    try:
        with pytest.raises(ProviderTimeout):
            await speak(tts, SENTENCE)
    finally:
        await tts.aclose()
    assert breaker.status().state is BreakerState.OPEN


async def test_one_audit_line_per_request_without_the_text(
    tts: SageMakerTTS,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="agent.audit"):
        await speak(tts, SENTENCE)
        await speak(tts, "   ")  # nothing to say: no request, no line
    (line,) = [r for r in caplog.records if r.name == "agent.audit"]
    assert line.levelno == logging.INFO
    message = line.getMessage()
    assert "tenant=default" in message and "voice=alice" in message and "backend=sagemaker" in message
    assert f"characters={len(SENTENCE)}" in message
    assert SENTENCE not in message and "Tuesday" not in message


async def test_server_sent_events_are_detected_and_decoded(
    tts: SageMakerTTS,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    emulator.force_sse = True
    assert await speak(tts, SENTENCE) == await emulator.audio(SENTENCE)


async def test_a_long_text_is_cut_into_pieces_spoken_in_order(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    emulator.ttfa_ms, emulator.rtf = 30, 0.05
    tts = SageMakerTTS(settings(emulator), store)
    try:
        whole = await speak(tts, " ".join(TEN))  # one long text: cut into sentences by the adapter
    finally:
        await tts.aclose()
    pieces = split_text(" ".join(TEN))
    assert whole == b"".join([await emulator.audio(p) for p in pieces])
    assert [r.body["input"] for r in emulator.requests if r.body] == pieces  # one request per piece, in order


async def test_voice_resolution(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    tts = SageMakerTTS(settings(emulator), store)
    with pytest.raises(UnknownVoice):
        await tts.resolve_voice("nobody")
    with pytest.raises(VoiceRequired, match="AGENT_TTS__DEFAULT_VOICE"):
        await tts.resolve_voice(None)
    with pytest.raises(UnknownVoice):
        await tts.resolve_voice("alice", "acme")  # another tenant's voice is no voice
    with_default = SageMakerTTS(settings(emulator, default_voice="alice"), store)
    assert await with_default.resolve_voice(None) == "default/alice"
    assert emulator.requests == []


@pytest.mark.parametrize(("field", "value"), [("audio_sha256", "0" * 64), ("tenant", "acme"), ("statement", "  ")])
async def test_a_voice_without_a_valid_consent_record_is_refused(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    field: str,
    value: str,
) -> None:
    await store.add(await make_voice(emulator, "bob", "A different reference sentence for bob."))
    # The store refuses such a record, so damage it on disk, as a tampered or half-migrated store would.
    registry = store.directory / "registry.json"
    data = json.loads(registry.read_text())
    data["tenants"]["default"]["bob"]["consent"][field] = value
    registry.write_text(json.dumps(data))
    tts = SageMakerTTS(settings(emulator), store)
    with pytest.raises(UnknownVoice):
        await tts.resolve_voice("bob")
    with pytest.raises(UnknownVoice):  # nor by its handle
        await speak(tts, SENTENCE, "default/bob")
    assert await tts.resolve_voice("alice") == "default/alice"  # the valid voice next to it still works
    assert emulator.requests == []


async def test_a_voice_removed_during_a_call_stops_at_the_next_check(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    now = [0.0]
    tts = SageMakerTTS(settings(emulator), store, clock=lambda: now[0])
    try:
        handle = await tts.resolve_voice("alice")
        await store.remove("default", "alice")
        now[0] += VOICE_RECHECK_S - 1
        assert await speak(tts, SENTENCE, handle)  # as loaded, until it is checked again
        now[0] += 1
        with pytest.raises(UnknownVoice):
            await speak(tts, SENTENCE, handle)
        assert len(emulator.requests) == 1
    finally:
        await tts.aclose()
