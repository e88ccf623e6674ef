"""bench/load.py's measure of what the turn models cost in compute while the callers talk: changes only with how
that compute is read and put per 100 ms of a caller's audio.

Issue 38's budget: the turn models together (Smart Turn, the text model, the second speech detector) may cost at
most 20 ms of compute (p95) per 100 ms of a caller's audio. Two of them run as jobs on the server's model workers,
which count the CPU time of each job's thread by model (``ModelStats.cpu_s_total``, ``/metrics``
``voice_agent_model_cpu_seconds_total``): the level samples that count once a second with the number of callers in
a call, and each second's compute over the audio those callers sent in it is one window (``window_rates``); the
level's mean is its whole compute over all the audio its callers sent. Silero, the second detector, runs inline on
every 32 ms of every call (``agent.audio.speech_confirm``), not on the workers: its cost per 100 ms of audio is
measured apart, on the bench's own speech, in this process (``silero_ms_per_100ms``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from agent.adapters.smart_turn import SmartTurn
from agent.adapters.smollm2_text_turn import SmolLM2TextTurn

TURN_MODELS = (SmartTurn.MODEL, SmolLM2TextTurn.MODEL)
"""The turn models that run on the model workers (their queue names)."""
BUDGET_MS = 20.0
"""The issue's budget: ms of compute per 100 ms of a caller's audio, p95, for the turn models together."""


def turn_cpu_s(model_cpu_s: Mapping[str, float]) -> float:
    """The turn models' CPU seconds in a server's per-model counts (models it does not run count 0)."""
    return sum(model_cpu_s.get(model, 0.0) for model in TURN_MODELS)


@dataclass(frozen=True, slots=True)
class Sample:
    at_s: float
    """When (monotonic seconds)."""
    cpu_s: float
    """The turn models' CPU seconds so far (``turn_cpu_s``)."""
    in_call: int
    """Callers in a call then."""


def window_rates(samples: Sequence[Sample]) -> list[float]:
    """Per window between consecutive samples, the turn models' compute in ms per 100 ms of the audio the callers
    sent in it (every caller in a call streams in real time, speech or silence; the mean of the two ends' counts
    stands for the window). Windows without a caller in a call are left out."""
    rates = []
    for before, after in itertools.pairwise(samples):
        audio_s = (before.in_call + after.in_call) / 2 * (after.at_s - before.at_s)
        if audio_s > 0:
            rates.append(1000 * (after.cpu_s - before.cpu_s) / (audio_s * 10))
    return rates


async def sample_every(
    read_cpu: Callable[[], Awaitable[Mapping[str, float] | None]],
    in_call: Callable[[], int],
    into: list[Sample],
    stop: asyncio.Event,
    every_s: float = 1.0,
) -> None:
    """Append a ``Sample`` every ``every_s`` until ``stop`` (and one at the start and one at the end); nothing when
    the server cannot say (``read_cpu`` returns ``None``)."""
    while True:
        counts = await read_cpu()
        if counts is None:
            return
        into.append(Sample(time.monotonic(), turn_cpu_s(counts), in_call()))
        if stop.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)


def silero_ms_per_100ms(pcm16: bytes, repeats: int = 3) -> float:
    """What Silero costs per 100 ms of audio, fed ``pcm16`` (16 kHz) 32 ms at a time as a call feeds it: this
    thread's CPU time over ``repeats`` passes (a fresh detector each), in ms per 100 ms."""
    from agent.adapters.silero_vad import FRAME_SAMPLES, SileroModel

    model = SileroModel.load()
    frame = 2 * FRAME_SAMPLES
    frames = [pcm16[i : i + frame] for i in range(0, len(pcm16) - frame + 1, frame)]
    if not frames:
        raise ValueError("silero_ms_per_100ms needs at least one 32 ms frame of audio")
    detector = model.detector()
    detector.speech_probability(frames[0])  # ONNX Runtime's lazy set-up is not a call's cost
    started = time.thread_time()
    for _ in range(repeats):
        detector = model.detector()
        for f in frames:
            detector.speech_probability(f)
    cpu_s = time.thread_time() - started
    audio_s = repeats * len(frames) * FRAME_SAMPLES / 16000
    return 1000 * cpu_s / (audio_s * 10)
