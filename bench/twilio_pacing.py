"""Twilio gateway pacing and barge-in reaction, against a real in-process server (tiny.en, Piper).

    .venv/bin/python bench/twilio_pacing.py --calls 5

Each call is a simulated Twilio caller (``clients/twilio_client.py``) on ``/twilio``: it asks for a story
(the reply text comes from the OpenAI-compatible emulator, so it is long and the same every time), listens to
``--listen-ms`` of it, then talks over it. Reported:

- outbound inter-frame gap: time between consecutive ``media`` messages of one reply as the caller receives
  them (target p95 ≤ 30 ms, no gap over 100 ms inside a reply);
- barge-in reaction: the first voiced frame of the interrupting speech sent → ``clear`` received
  (target p95 ≤ 400 ms), with the default backchannel rule and with acknowledgements off
  (``AGENT_TURN__ACKNOWLEDGEMENTS=false``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from websockets.asyncio.client import connect

from agent.config import Settings
from agent.runtime.components import Components
from agent.wiring import build_components
from bench.server import emulated_llm, serving
from bench.speech import onset_offset_s
from bench.stats import pct
from clients.twilio_client import TwilioCaller
from testing.emulators.openai import OpenAIEmulator
from testing.speech import silence, speech_pcm16

STORY = [
    "Once upon a time, a small fox lived at the edge of a quiet forest. ",
    "Every morning she walked to the river to watch the fish jump. ",
    "One day she found a lost duckling crying under a willow tree. ",
    "The fox carried the duckling home across three wide fields. ",
]


async def one_call(url: str, emulator: OpenAIEmulator, listen_ms: int) -> tuple[list[float], float | None]:
    question = silence(300, 8000) + speech_pcm16("Please tell me a long story.", 8000)
    interrupt = speech_pcm16("Stop. What time is it?", 8000)
    async with connect(url) as ws:
        caller = TwilioCaller(ws)
        await caller.begin()
        caller.say(question)
        got = caller.received
        await caller.run_until(lambda: len(got.media_times) >= listen_ms // 20, 60)
        story_frames = len(got.media_times)
        caller.say(interrupt)
        await caller.run_until(lambda: bool(got.clears), 10)
        await asyncio.sleep(0.3)
        await caller.hang_up()
    times = got.media_times[:story_frames]
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(times)]
    if not got.clears or len(caller.speech_onsets) < 2:
        return gaps, None
    onset = caller.speech_onsets[1] + onset_offset_s(interrupt, 8000)
    return gaps, (got.clears[0] - onset) * 1000


async def run(
    calls: int, listen_ms: int, backchannels: bool, components: Components
) -> tuple[list[float], list[float]]:
    gaps: list[float] = []
    reactions: list[float] = []
    async with OpenAIEmulator(default_reply=STORY) as emulator:  # every reply is the story
        llm = emulated_llm(emulator.base_url)
        served = dataclasses.replace(components, llm=llm)
        turn: dict[str, Any] = {} if backchannels else {"acknowledgements": False}
        settings = Settings(server={"port": 0}, turn=turn)
        try:
            async with serving(settings, lambda: served) as server:
                for _ in range(calls):
                    g, r = await one_call(server.url("twilio"), emulator, listen_ms)
                    gaps += g
                    if r is not None:
                        reactions.append(r)
        finally:
            await llm.aclose()
    return gaps, reactions


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=5, help="calls per configuration (default 5)")
    parser.add_argument("--listen-ms", type=int, default=1500, help="story audio received before barging in")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    components = build_components(Settings())
    print(f"calls per row: {args.calls}; barge-in after {args.listen_ms} ms of reply received; cpus: {os.cpu_count()}")
    print("| backchannels | gaps | gap p50 ms | gap p95 ms | gap max ms | barge-ins | react p50 ms | react p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for backchannels in (True, False):
        started = time.monotonic()
        gaps, reactions = asyncio.run(run(args.calls, args.listen_ms, backchannels, components))
        print(
            f"| {'default' if backchannels else 'off'} | {len(gaps)} | {pct(gaps, 50):.1f} | {pct(gaps, 95):.1f} "
            f"| {max(gaps, default=math.nan):.1f} | {len(reactions)}/{args.calls} | {pct(reactions, 50):.0f} "
            f"| {pct(reactions, 95):.0f} |",
            flush=True,
        )
        print(f"  ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
