"""End to end over /ws with AGENT_TTS__BACKEND=sagemaker pointed at the emulator and an enrolled voice."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.request

import numpy as np
import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.piper_tts import LOCAL_VOICE
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.adapters.tts_requests import split_text
from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.front_door.listener import RunningServer, running_server
from agent.ports import Voice
from agent.runtime.call.phrases import PhraseBook, asset_key
from agent.runtime.call.voicing import Fallback
from agent.runtime.components import Components
from agent.work.resilience import BreakerState, CircuitBreaker
from clients.protocol_client import converse, converse_utterances
from testing.emulators.sagemaker import SageMakerEmulator
from testing.speech import silence, speech_pcm16, wer
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.sagemaker_fixtures import REFERENCE_TEXT, aws_env, emulator, store, voice  # noqa: F401
from tests.unit.test_metrics import parse

pytestmark = pytest.mark.models

ONE_REQUEST_PER_SENTENCE = {"preemption": "off"}
"""For the tests that make the endpoint's next requests fail: with a preemptive reply, whether the first
sentence is first asked for before the end of turn (and its failure absorbed by asking again at the end of
turn) depends on how fast the transcript came; these tests are about what follows a failure of the turn's
own request. Preemption and failure is a core unit test (tests/unit/test_preemption.py)."""


def rms(pcm: bytes) -> float:
    x = np.frombuffer(pcm, dtype="<i2").astype(np.float64) / 32768.0
    return float(np.sqrt(np.mean(x * x))) if x.size else 0.0


JOKE = "Could you tell me a joke, please?"


def tts_settings(emu: SageMakerEmulator, **extra: object) -> dict[str, object]:
    # No phrase warming unless a test asks: it would add requests at session start.
    return {"backend": "sagemaker", "endpoint_url": emu.url, "retry_base_s": 0.01, "warm_phrases": False, **extra}


def cloned(
    components: Components,
    emu: SageMakerEmulator,
    voices: FileVoiceStore,
    breaker: CircuitBreaker | None = None,
    **extra: object,
) -> tuple[Components, SageMakerTTS]:
    settings = local_settings(tts=tts_settings(emu, **extra))
    tts = SageMakerTTS(settings.tts, voices, breaker)
    built = Components(
        stt=components.stt,
        llm=components.llm,
        tts=tts,
        new_detector=components.new_detector,
        fallback=Fallback(components.tts, LOCAL_VOICE),
        voices=voices,
        breakers=(tts.breaker,),
        phrases=PhraseBook(voices),
    )
    return built, tts


def _get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=5) as response:
        data: dict[str, object] = json.loads(response.read())
        return data


def _get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


async def scrape(server: RunningServer) -> list[tuple[str, dict[str, str], float]]:
    return parse(await asyncio.to_thread(_get_text, f"{server.http_url}/metrics"))[2]


async def health(server: RunningServer) -> dict[str, object]:
    return await asyncio.to_thread(_get_json, f"{server.http_url}/healthz")


def in_order(emu: SageMakerEmulator, start: int = 0) -> list[str]:
    """The texts requested from ``start`` on, each once, in the order first asked."""
    texts: list[str] = []
    for request in emu.requests[start:]:
        text = (request.body or {}).get("input")
        if isinstance(text, str) and text not in texts:
            texts.append(text)
    return texts


async def test_the_caller_hears_the_enrolled_voice_from_sagemaker(
    components: Components,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    voice: Voice,  # noqa: F811
) -> None:
    built, tts = cloned(components, emulator, store)
    settings = local_settings(tts=tts_settings(emulator))
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            # A question with a fixed answer (a time would make the check depend on how digits are spoken).
            pcm = silence(400) + speech_pcm16("Could you tell me a joke, please?") + silence(200)
            conversation = await converse(server.ws_url, pcm, 16000, voice="alice", speed=2.0, timeout_s=30)
    finally:
        await tts.aclose()

    assert conversation.session["voice"] == "alice"  # the handle default/alice, shown by its name
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
    settings = local_settings(tts=tts_settings(emulator), turn=ONE_REQUEST_PER_SENTENCE)
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


async def test_a_stream_broken_after_its_first_audio_is_heard_whole_and_the_reply_goes_on(
    components: Components,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    built, tts = cloned(components, emulator, store)
    settings = local_settings(tts=tts_settings(emulator), turn={"hold_after_ms": 0, **ONE_REQUEST_PER_SENTENCE})
    emulator.break_after_parts = 2
    emulator.fail_next("mid_stream", 1)
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            pcm = silence(400) + speech_pcm16(JOKE) + silence(200)
            conversation = await converse(server.ws_url, pcm, 16000, voice="alice", speed=2.0, timeout_s=30)
            samples = await scrape(server)
    finally:
        await tts.aclose()

    assert conversation.errors == []  # recovered: no tts_failed
    (turn,) = conversation.turns
    texts = in_order(emulator)
    assert len(texts) >= 2 and "scarecrow" in texts[0].lower()  # the broken sentence and the rest of the reply
    expected = b"".join([await emulator.audio(text) for text in texts])
    heard = bytes(turn.audio)
    assert heard[: len(expected)] == expected and not any(heard[len(expected) :])  # whole, once, in order
    assert emulator.requests[0].fault == "mid_stream"
    endpoint = {"endpoint": "sagemaker:qwen3-tts-voice-clone"}
    assert ("voice_agent_tts_recovered_faults_total", endpoint, 1.0) in samples


async def test_an_open_breaker_speaks_the_next_reply_in_the_fallback_voice_then_a_probe_closes_it(
    components: Components,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    now = [0.0]
    breaker = CircuitBreaker("sagemaker:qwen3-tts-voice-clone", 2, 30.0, lambda: now[0])
    built, tts = cloned(components, emulator, store, breaker, max_attempts=2, pipeline_depth=1)
    settings = local_settings(
        tts=tts_settings(emulator, max_attempts=2, pipeline_depth=1), turn=ONE_REQUEST_PER_SENTENCE
    )
    endpoint = {"endpoint": "sagemaker:qwen3-tts-voice-clone"}
    pcm = silence(400) + speech_pcm16(JOKE) + silence(200)
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            emulator.fail_next("unavailable", 2)  # both attempts at the first sentence: K = 2 failures
            first = await converse(server.ws_url, pcm, 16000, voice="alice", speed=2.0, timeout_s=30)
            assert [e["code"] for e in first.errors] == ["tts_failed"]
            assert breaker.status().state is BreakerState.OPEN
            assert ("voice_agent_tts_breaker_state", endpoint, 2.0) in await scrape(server)
            detail = await health(server)
            assert detail["status"] == "degraded"
            assert detail["speech"] == [
                {
                    "endpoint": "sagemaker:qwen3-tts-voice-clone",
                    "breaker": "open",
                    "consecutive_failures": 2,
                    "retry_after_s": 30.0,
                }
            ]

            seen = len(emulator.requests)
            second = await converse(server.ws_url, pcm, 16000, voice="alice", speed=2.0, timeout_s=30)
            assert second.errors == []  # spoken, in the local voice
            (turn,) = second.turns
            assert turn.audio_seconds > 1.0 and rms(bytes(turn.audio)) > 0.02
            assert len(emulator.requests) == seen  # refused at once: nothing sent, no timeout waited for

            now[0] += 30.0  # half-open: the next reply's first request is the probe
            third = await converse(server.ws_url, pcm, 16000, voice="alice", speed=2.0, timeout_s=30)
            assert third.errors == []
            assert len(emulator.requests) > seen and all(r.status == 200 for r in emulator.requests[seen:])
            assert breaker.status().state is BreakerState.CLOSED
            samples = await scrape(server)
            assert ("voice_agent_tts_breaker_state", endpoint, 0.0) in samples
            assert ("voice_agent_tts_breaker_opened_total", endpoint, 1.0) in samples
            assert (await health(server))["status"] == "ok"
    finally:
        await tts.aclose()


async def test_the_apology_is_played_in_the_cloned_voice_from_the_store_when_the_endpoint_is_down(
    components: Components,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    built, tts = cloned(components, emulator, store, warm_phrases=True)
    settings = local_settings(
        tts=tts_settings(emulator, warm_phrases=True),
        turn={"idle_prompt_s": 0, "hold_after_ms": 0, **ONE_REQUEST_PER_SENTENCE},
    )
    apology = settings.turn.apology_text
    key = asset_key("apology", apology, 24000, "en")
    try:
        async with running_server(settings, lambda: built) as server:
            await server.wait_ready()
            # A session that only starts: its voice's phrases are prepared in the background and stored.
            await converse(server.ws_url, silence(300), 16000, voice="alice", timeout_s=30)

            async def stored() -> bool:
                return await store.get_asset("default", "alice", key) is not None

            await until(stored, what="the voice's apology to be stored", every_s=0.05)
            cloned_apology = b"".join([await emulator.audio(piece) for piece in split_text(apology)])
            assert await store.get_asset("default", "alice", key) == cloned_apology
            seen = len(emulator.requests)

            emulator.fail_next("model_error_400", 1)  # the reply's first sentence fails for good
            pcm = silence(400) + speech_pcm16(JOKE) + silence(200)
            conversation = await converse(server.ws_url, pcm, 16000, voice="alice", speed=2.0, timeout_s=30)
    finally:
        await tts.aclose()

    assert [e["code"] for e in conversation.errors] == ["tts_failed"]
    (turn,) = conversation.turns
    heard = bytes(turn.audio)
    assert heard[: len(cloned_apology)] == cloned_apology  # the caller's own (cloned) voice, from the store
    assert not set(split_text(apology)) & set(in_order(emulator, seen))  # no request was made for it
