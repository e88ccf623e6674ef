"""Whisper's prompt with the real bundled tiny.en: a thinking pause keeps its filler, so the end-of-turn rules
see a caller who is not done; the loops a prompt makes more likely in the short window are cut, not redone.

Speech from espeak-ng (deterministic). Marked ``models``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np
import pytest

from agent.adapters.faster_whisper_asr import FasterWhisperASR
from agent.audio.pcm import float_to_pcm16
from agent.config import AsrSettings, Settings
from agent.core.endpointing import Completeness, completeness
from agent.ports import JobInfo, Work
from agent.runtime.call.stages import transcript_job
from testing.echo_audio import espeak

pytestmark = pytest.mark.models


def _said(text: str, voice: str = "en-us") -> bytes:
    """``text`` by espeak-ng at 16 kHz, with the pre-roll and trailing silence the turn detector keeps."""
    quiet = np.zeros(16 * 300, dtype=np.float32)
    return float_to_pcm16(np.concatenate([quiet, espeak(text, voice, 170, 16000), quiet[: 16 * 200]]))


@pytest.fixture(scope="module")
def prompted() -> Iterator[FasterWhisperASR]:
    engine = FasterWhisperASR.load(AsrSettings())  # the default: the filler prompt
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def plain() -> Iterator[FasterWhisperASR]:
    engine = FasterWhisperASR.load(AsrSettings(prompt=""))
    yield engine
    engine.close()


@pytest.mark.parametrize("voice", ["en-us", "en-gb"])
async def test_a_thinking_pause_keeps_its_filler_so_the_turn_is_not_over(
    prompted: FasterWhisperASR, plain: FasterWhisperASR, voice: str
) -> None:
    audio = _said("I was thinking, um", voice)
    with_prompt = (await prompted.transcribe(audio)).text
    without = (await plain.transcribe(audio)).text
    assert "um" in with_prompt.lower().replace(",", " ").split()
    assert completeness(with_prompt, language="en") is Completeness.TRAILING
    # the same audio without the prompt: the "um" is dropped, and the caller seems to have finished
    assert "um" not in without.lower().replace(",", " ").split()
    assert completeness(without, language="en") is not Completeness.TRAILING


@pytest.mark.parametrize(("text", "voice"), [("Sure.", "en-us"), ("Okay, sure.", "en-gb")])
async def test_a_decoding_that_says_the_answer_over_and_over_is_cut_not_redone_in_the_full_window(
    prompted: FasterWhisperASR, text: str, voice: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agent.adapters.faster_whisper_asr")
    heard = (await prompted.transcribe(_said(text, voice))).text
    assert heard == text
    assert "retrying with the full window" not in caplog.text


@pytest.mark.parametrize("purpose", ["quick", "speculative", "final"])
async def test_a_sound_made_over_the_agent_is_transcribed_plain(
    prompted: FasterWhisperASR, plain: FasterWhisperASR, purpose: str
) -> None:
    """The session marks it ``over_agent``; the job says ``plain``; the engine leaves its prompt out."""
    job = transcript_job(purpose, Settings(), over_agent=True)
    assert job.plain and not transcript_job(purpose, Settings()).plain
    audio = _said("I was thinking, um", "en-gb")
    assert (await prompted.transcribe(audio, job)).text == (await plain.transcribe(audio)).text
    assert (await prompted.transcribe(audio, JobInfo(Work.FINAL_TRANSCRIPT))).text != (
        await plain.transcribe(audio)
    ).text
