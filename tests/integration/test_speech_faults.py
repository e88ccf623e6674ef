"""The per-turn speech pipeline (``TurnSpeech``) on a cloned voice, through aiobotocore against the emulator:
pipelining, recovered faults, the circuit breaker's fallback voice, and fixed phrases kept with the voice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.piper_tts import LOCAL_VOICE
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.config import TtsSettings
from agent.core.events import APOLOGY_SENTENCE, Event, SpeechAudio, SpeechEnded, StageFailed
from agent.errors import UnknownVoice
from agent.runtime.call.phrases import PhraseBook, asset_key
from agent.runtime.call.speech import TurnSpeech
from agent.runtime.call.voicing import APOLOGY, Fallback, Voicing
from agent.runtime.components import Components
from agent.work.resilience import BreakerState, CircuitBreaker
from testing.emulators.sagemaker import SageMakerEmulator
from tests.integration.sagemaker_fixtures import aws_env, emulator, store, voice  # noqa: F401

pytestmark = pytest.mark.models

VOICE = "default/alice"
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
IDLE = "Are you still there?"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def tts(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    clock: Clock,
) -> AsyncIterator[SageMakerTTS]:
    settings = TtsSettings(
        backend="sagemaker", endpoint_url=emulator.url, retry_base_s=0.01, retry_max_s=0.02, max_attempts=2
    )
    adapter = SageMakerTTS(settings, store, CircuitBreaker("sagemaker:test", 2, 30.0, clock))
    await adapter.resolve_voice("alice")
    yield adapter
    await adapter.aclose()


@pytest.fixture
def voicing(tts: SageMakerTTS, store: FileVoiceStore, components: Components) -> Voicing:  # noqa: F811
    return Voicing(tts, VOICE, Fallback(components.tts, LOCAL_VOICE), PhraseBook(store), depth=3, turn_retries=4)


async def speak(voicing: Voicing, *items: tuple[str, int, str | None]) -> tuple[bytes, list[Event]]:
    """One turn through ``TurnSpeech`` at 24 kHz (the voice's own rate: no resampling)."""
    events: list[Event] = []

    async def post(event: Event) -> None:
        events.append(event)

    async def room() -> None:
        return None

    speech = TurnSpeech(1, voicing, 24000, 40, post, room, language="en")
    for text, sentence, phrase in items:
        speech.add(text, sentence, phrase, language="en")
    speech.finish()
    await speech.wait()
    assert isinstance(events[-1], SpeechEnded)
    return b"".join(e.pcm for e in events if isinstance(e, SpeechAudio)), events


def starts_with(audio: bytes, expected: bytes) -> bool:
    """``expected`` then only the silence that pads the last frame."""
    return audio[: len(expected)] == expected and not any(audio[len(expected) :])


async def test_a_ten_sentence_reply_arrives_complete_and_in_order(
    voicing: Voicing,
    emulator: SageMakerEmulator,  # noqa: F811
) -> None:
    emulator.ttfa_ms, emulator.rtf = 30, 0.05
    audio, events = await speak(voicing, *[(s, i, None) for i, s in enumerate(TEN)])
    assert starts_with(audio, b"".join([await emulator.audio(s) for s in TEN]))
    tags = [e.sentence for e in events if isinstance(e, SpeechAudio)]
    assert tags == sorted(tags) and set(tags) == set(range(10))
    assert sorted(r.body["input"] for r in emulator.requests if r.body) == sorted(TEN)  # one request each


async def test_a_stream_broken_mid_sentence_is_heard_whole_with_the_rest_and_no_error(
    voicing: Voicing,
    emulator: SageMakerEmulator,  # noqa: F811
    tts: SageMakerTTS,
) -> None:
    emulator.break_after_parts = 2
    emulator.fail_next("mid_stream", 1)
    audio, events = await speak(voicing, *[(s, i, None) for i, s in enumerate(TEN[:3])])
    assert not [e for e in events if isinstance(e, StageFailed)]
    assert starts_with(audio, b"".join([await emulator.audio(s) for s in TEN[:3]]))
    assert emulator.requests[0].fault == "mid_stream"
    assert tts.breaker.status().recovered_total == 1


async def test_an_open_breaker_sends_the_reply_to_the_fallback_voice_at_once(
    voicing: Voicing,
    emulator: SageMakerEmulator,  # noqa: F811
    tts: SageMakerTTS,
    clock: Clock,
) -> None:
    emulator.fail_next("unavailable", 2)  # both attempts of the first sentence: the breaker opens
    audio, events = await speak(voicing, (TEN[0], 0, None))
    assert [e.code for e in events if isinstance(e, StageFailed)] == ["tts_failed"]
    assert tts.breaker.status().state is BreakerState.OPEN
    assert audio  # the apology, in the fallback voice (no apology stored yet)

    seen = len(emulator.requests)
    audio, events = await speak(voicing, (TEN[1], 0, None), (TEN[2], 1, None))
    assert not [e for e in events if isinstance(e, StageFailed)]  # spoken, just in another voice
    assert len(emulator.requests) == seen  # no request, so no timeout to wait for
    assert len(audio) > 24000 * 2  # both sentences, more than a second

    clock.now += 30  # half-open: the next request probes, succeeds, and closes the breaker
    audio, events = await speak(voicing, (TEN[3], 0, None))
    assert starts_with(audio, await emulator.audio(TEN[3]))
    assert tts.breaker.status().state is BreakerState.CLOSED and len(emulator.requests) == seen + 1


async def test_fixed_phrases_are_stored_on_first_use_and_played_from_the_store(
    voicing: Voicing,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    tts: SageMakerTTS,
    clock: Clock,
) -> None:
    key = asset_key("idle_prompt", IDLE, 24000, "en")
    assert await store.get_asset("default", "alice", key) is None
    audio, _ = await speak(voicing, (IDLE, 0, "idle_prompt"))  # first use: synthesized, then kept
    cloned = await emulator.audio(IDLE)
    assert starts_with(audio, cloned)
    assert await store.get_asset("default", "alice", key) == cloned
    assert [r.body["input"] for r in emulator.requests if r.body] == [IDLE]

    emulator.fail_next("unavailable", 2)
    await speak(voicing, (TEN[0], 0, None))  # opens the breaker: the endpoint is down
    assert tts.breaker.status().state is BreakerState.OPEN
    seen = len(emulator.requests)
    audio, events = await speak(voicing, (IDLE, 0, "idle_prompt"))
    assert starts_with(audio, cloned)  # still the cloned voice, from the store
    assert len(emulator.requests) == seen and not [e for e in events if isinstance(e, StageFailed)]

    changed = "Hello? Are you still with me?"  # a changed text is synthesized again
    clock.now += 30
    audio, _ = await speak(voicing, (changed, 0, "idle_prompt"))
    assert starts_with(audio, await emulator.audio(changed))
    assert await store.get_asset("default", "alice", asset_key("idle_prompt", changed, 24000, "en")) is not None


async def test_the_apology_after_a_failure_is_the_stored_cloned_one_without_a_request(
    voicing: Voicing,
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    await voicing.phrases.warm(voicing.tts, VOICE, {"apology": APOLOGY, "greeting": ""}, "en")  # type: ignore[union-attr]
    cloned = await emulator.audio(APOLOGY)
    assert await store.get_asset("default", "alice", asset_key("apology", APOLOGY, 24000, "en")) == cloned
    seen = len(emulator.requests)

    emulator.fail_next("model_error_400", 1)  # a final failure of the first sentence
    audio, events = await speak(voicing, (TEN[0], 0, None), (TEN[1], 1, None))
    assert [e.code for e in events if isinstance(e, StageFailed)] == ["tts_failed"]
    assert starts_with(audio, cloned)  # the apology, in the caller's cloned voice
    assert {e.sentence for e in events if isinstance(e, SpeechAudio)} == {APOLOGY_SENTENCE}
    assert APOLOGY not in [r.body["input"] for r in emulator.requests[seen:] if r.body]

    await store.remove("default", "alice")  # the phrases go with the voice
    with pytest.raises(UnknownVoice):
        await store.get_asset("default", "alice", asset_key("apology", APOLOGY, 24000, "en"))


async def test_the_sentences_of_a_turn_share_one_retry_budget(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
    components: Components,
) -> None:
    settings = TtsSettings(
        backend="sagemaker", endpoint_url=emulator.url, retry_base_s=0.01, retry_max_s=0.02, max_attempts=3
    )
    tts = SageMakerTTS(settings, store, CircuitBreaker("sagemaker:test", 100, 30.0, Clock()))
    voicing = Voicing(tts, VOICE, Fallback(components.tts, LOCAL_VOICE), PhraseBook(store), depth=1, turn_retries=1)
    try:
        emulator.fail_next("unavailable", 1)  # the first sentence spends the turn's only retry
        audio, events = await speak(voicing, (TEN[0], 0, None), (TEN[1], 1, None))
        assert not [e for e in events if isinstance(e, StageFailed)]
        assert starts_with(audio, await emulator.audio(TEN[0]) + await emulator.audio(TEN[1]))

        seen = len(emulator.requests)
        emulator.fail_next("unavailable", 2)  # both sentences' first requests (two in flight): one retry for two
        audio, events = await speak(replace(voicing, depth=2), (TEN[2], 0, None), (TEN[3], 1, None))
        assert [e.code for e in events if isinstance(e, StageFailed)] == ["tts_failed"]  # per sentence: no failure
        assert 2 <= len(emulator.requests) - seen <= 3
    finally:
        await tts.aclose()
