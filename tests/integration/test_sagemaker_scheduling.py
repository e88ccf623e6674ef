"""A saturated cloned-voice endpoint serves first sentences before later ones (SageMaker emulator, real adapter).

``AGENT_TTS__ENDPOINT_CONCURRENCY=1``: while one request holds the only slot, a later sentence of one reply and
the first sentence of another wait; when the slot frees, the emulator receives the first sentence first.
Nothing is timed: the test waits for the queue to hold both, then frees the slot.
"""

from __future__ import annotations

import asyncio

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.config import TtsSettings
from agent.ports import URGENT, JobInfo, Work
from testing.emulators.sagemaker import SageMakerEmulator
from testing.waits import until
from tests.integration.sagemaker_fixtures import aws_env, emulator, store, voice  # noqa: F401

LATER = "The second sentence of a long reply, needed only in a while."
FIRST = "Hello, this is the first sentence of another call."


async def speak(tts: SageMakerTTS, text: str, job: JobInfo) -> bytes:
    return b"".join([chunk async for chunk in tts.synthesize(text, "default/alice", None, job)])


async def test_a_saturated_endpoint_sends_a_first_sentence_before_a_later_one(
    emulator: SageMakerEmulator,  # noqa: F811
    store: FileVoiceStore,  # noqa: F811
) -> None:
    settings = TtsSettings.model_validate(
        {"backend": "sagemaker", "endpoint_url": emulator.url, "endpoint_concurrency": 1}
    )
    tts = SageMakerTTS(settings, store)
    try:
        await tts.resolve_voice("alice")
        release = asyncio.Event()
        holding = asyncio.Event()

        async def request_in_flight() -> None:
            async with tts.slots.slot(URGENT, 10):
                holding.set()
                await release.wait()

        holder = asyncio.create_task(request_in_flight())
        await holding.wait()
        later = asyncio.create_task(speak(tts, LATER, JobInfo(Work.LATER_SENTENCE, 20.0)))
        first = asyncio.create_task(speak(tts, FIRST, URGENT))
        await until(lambda: tts.slots.stats().models["sagemaker"].queued >= 2, what="both sentences to queue")
        release.set()
        await holder
        assert (await first) and (await later)
    finally:
        await tts.aclose()
    spoken = [r.body["input"] for r in emulator.requests if r.body and "input" in r.body]
    assert spoken == [FIRST, LATER]
