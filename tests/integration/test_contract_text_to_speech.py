"""The ``TextToSpeech`` contract, run against every adapter: Piper (the bundled local voice), espeak-ng, SageMaker
and vLLM-Omni (both against ``testing.emulators.sagemaker``, speaking with the local Piper voice, and a voice
enrolled in a file store).

What every adapter does: it resolves its voice and speaks a sentence as PCM16LE mono at the ``sample_rate`` it
declares; it refuses a voice it does not know with ``UnknownVoice`` before any audio; it stops when its consumer
closes the stream and then speaks the next sentence. Where adapters legitimately differ, the case says so: the
local voices (Piper, espeak-ng) are the same for every tenant and are the default voice, while a cloned voice
belongs to one tenant and there is no default without one (``VoiceRequired``). A remote backend's refusal reaches
the caller as ``ProviderError``, never a vendor type (the local voices have no vendor, so they are not in that
case).
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass

import numpy as np
import pytest

from agent.adapters.clone_tts import CloneTTS
from agent.adapters.espeak_tts import EspeakTTS
from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.adapters.vllm_omni_tts import VllmOmniTTS
from agent.config import TtsSettings
from agent.errors import AgentError, ProviderError, ProviderUnavailable, UnknownVoice, VoiceRequired
from agent.ports import TextToSpeech
from agent.runtime.components import Components
from testing.emulators.sagemaker import SageMakerEmulator
from tests.integration.sagemaker_fixtures import REFERENCE_TEXT, aws_env, emulator, store, voice  # noqa: F401

pytestmark = pytest.mark.models

SENTENCE = "Your order will arrive on Tuesday morning."
TWO_SENTENCES = "The first sentence is short. The second one takes a little longer to say out loud."
VOICES = ["piper", "espeak", "sagemaker", "vllm-omni"]
REMOTE = ["sagemaker", "vllm-omni"]


@dataclass(frozen=True, slots=True)
class TtsCase:
    """One adapter under the contract, with what the contract expects of it.

    ``voice``: a voice name it speaks; ``handle``: what ``resolve_voice(voice)`` gives; ``unknown_handle``: a
    handle of a voice it does not have; ``sample_rate``: the rate it must declare; ``tenant_scoped``: whether
    its voices belong to one tenant (cloned voices) rather than to every tenant (local voices);
    ``has_default``: whether ``resolve_voice(None)`` gives a voice of its own.
    """

    tts: TextToSpeech
    voice: str
    handle: str
    unknown_handle: str
    sample_rate: int
    tenant_scoped: bool
    has_default: bool
    emulator: SageMakerEmulator | None = None


def _clone(kind: str, emu: SageMakerEmulator, voices: FileVoiceStore) -> CloneTTS:
    common = {"retry_base_s": 0.01, "retry_max_s": 0.05}
    if kind == "sagemaker":
        return SageMakerTTS(
            TtsSettings.model_validate({"backend": "sagemaker", "endpoint_url": emu.url, **common}), voices
        )
    return VllmOmniTTS(TtsSettings.model_validate({"backend": "vllm-omni", "base_url": emu.url, **common}), voices)


@dataclass(frozen=True, slots=True)
class Backend:
    """Which adapter, and for a cloned-voice one its emulator and the store that holds ``alice``."""

    kind: str
    emulator: SageMakerEmulator | None = None
    store: FileVoiceStore | None = None


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Backend:
    """Asks for the emulator only for the adapters that speak to it (a plain fixture: it may do so by name)."""
    kind: str = request.param
    if kind not in REMOTE:
        return Backend(kind)
    return Backend(kind, request.getfixturevalue("emulator"), request.getfixturevalue("store"))


@pytest.fixture
async def case(backend: Backend, components: Components) -> AsyncIterator[TtsCase]:
    if backend.kind == "piper":  # the server's own local voice, shared by the session: not closed here
        yield TtsCase(components.tts, "local-preview", "local-preview", "nobody", 22050, False, True)
    elif backend.kind == "espeak":
        espeak = EspeakTTS.find(22050)
        assert espeak is not None, "espeak-ng is not installed (apt-get install espeak-ng)"
        try:
            yield TtsCase(espeak, "espeak-ng", "espeak-ng", "nobody", 22050, False, True)
        finally:
            espeak.close()
    else:
        assert backend.emulator is not None and backend.store is not None  # "alice" enrolled in tenant "default"
        tts = _clone(backend.kind, backend.emulator, backend.store)
        try:
            yield TtsCase(tts, "alice", "default/alice", "default/nobody", 24000, True, False, backend.emulator)
        finally:
            await tts.aclose()


async def _speak(tts: TextToSpeech, text: str, handle: str) -> list[bytes]:
    return [chunk async for chunk in tts.synthesize(text, handle)]


@pytest.mark.parametrize("backend", VOICES, indirect=True)
async def test_speaks_a_sentence_as_pcm_at_the_declared_rate(case: TtsCase) -> None:
    assert case.tts.sample_rate == case.sample_rate
    handle = await case.tts.resolve_voice(case.voice)
    assert handle == case.handle
    chunks = await _speak(case.tts, SENTENCE, handle)
    assert chunks and all(isinstance(chunk, bytes) and chunk for chunk in chunks)
    pcm = b"".join(chunks)
    assert len(pcm) % 2 == 0  # whole PCM16 samples
    seconds = len(pcm) / 2 / case.sample_rate
    assert 1.2 < seconds < 6.0, seconds  # seven words, read at a speaking pace at the declared rate
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    assert math.sqrt(float(np.mean(samples**2))) > 300  # speech, not silence


@pytest.mark.parametrize("backend", VOICES, indirect=True)
async def test_an_unknown_voice_is_refused_before_any_audio(case: TtsCase) -> None:
    with pytest.raises(UnknownVoice):
        await case.tts.resolve_voice("nobody")
    chunks: list[bytes] = []
    with pytest.raises(UnknownVoice):
        async for chunk in case.tts.synthesize(SENTENCE, case.unknown_handle):
            chunks.append(chunk)
    assert chunks == []


@pytest.mark.parametrize("backend", VOICES, indirect=True)
async def test_voices_per_tenant_and_the_default_voice(case: TtsCase) -> None:
    if case.tenant_scoped:
        with pytest.raises(UnknownVoice):  # another tenant's voice is none of this one's
            await case.tts.resolve_voice(case.voice, tenant="globex")
    else:
        assert await case.tts.resolve_voice(case.voice, tenant="globex") == case.handle
    if case.has_default:
        assert await case.tts.resolve_voice(None) == case.handle
    else:
        with pytest.raises(VoiceRequired):
            await case.tts.resolve_voice(None)


@pytest.mark.parametrize("backend", VOICES, indirect=True)
async def test_stops_when_the_consumer_stops(case: TtsCase) -> None:
    stream = case.tts.synthesize(TWO_SENTENCES, case.handle)
    assert await anext(stream)
    assert isinstance(stream, AsyncGenerator)  # a stream the consumer can close
    await stream.aclose()  # the consumer has heard enough (a barge-in)
    assert b"".join(await _speak(case.tts, SENTENCE, case.handle))  # and the next sentence is spoken


@pytest.mark.parametrize("backend", VOICES, indirect=True)
async def test_whitespace_is_spoken_as_nothing(case: TtsCase) -> None:
    assert await _speak(case.tts, " \n ", case.handle) == []


@pytest.mark.parametrize("backend", REMOTE, indirect=True)
async def test_a_backend_refusal_is_ours(case: TtsCase) -> None:
    assert case.emulator is not None
    case.emulator.fail_next("model_error_400", 1)
    with pytest.raises(AgentError) as caught:
        await _speak(case.tts, SENTENCE, case.handle)
    assert isinstance(caught.value, ProviderError) and not isinstance(caught.value, ProviderUnavailable)
