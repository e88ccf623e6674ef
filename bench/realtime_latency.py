"""The Realtime path against protocol v1 on the same server, the same audio and the same models.

    python bench/realtime_latency.py                 # 3 rounds of 10 turns on each path, table on stdout
    python bench/realtime_latency.py --rounds 1 --turns 4

One in-process server with the bundled local models (tiny.en, the offline responder, Piper) serves both paths.
Each round speaks the same sentences (``bench/latency.py``'s, made with Piper) once over ``/ws`` (protocol v1,
16 kHz, 20 ms frames: ``clients.protocol_client``) and once over ``/v1/realtime`` (the same audio resampled to
24 kHz and appended in 20 ms base64 events: ``clients.realtime_client``), alternating which goes first. Each
turn waits for its reply before the next sentence. The headline is the caller's voice-to-voice: last audible
frame sent → first reply audio received. A Realtime client reports no playback, so before its next sentence
it waits until the reply would have played out and the server's allowance for its buffer has passed (as the
/ws caller waits for ``turn.metrics``): each sentence is a turn of its own, not a barge-in. ``--ws-rate
24000`` streams /ws at the Realtime path's rate too, so that only the codecs differ: JSON and base64 both ways,
item and response bookkeeping.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from websockets.asyncio.client import connect

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.config import Settings
from agent.front_door.listener import RunningServer
from agent.wiring import build_components
from bench.latency_sets import RATE, SENTENCES, caller_speech
from bench.server import serving
from bench.stats import summarize
from clients import realtime_client
from clients.protocol_client import converse_utterances
from clients.realtime_client import RealtimeCaller

FRAME_MS = 20
PLAYBACK_MARGIN_S = 0.4
"""The server's allowance for a client's playout buffer (``BargeInPolicy.playback_margin_ms``, 300 ms), and a
little more: a Realtime client reports no playback, so the server ends a turn by its clock."""


async def over_ws(server: RunningServer, utterances: Sequence[bytes], gap_s: float, rate: int) -> list[float]:
    if rate != RATE:
        utterances = [float_to_pcm16(resample(pcm16_to_float(u), RATE, rate)) for u in utterances]
    conversation = await converse_utterances(server.ws_url, utterances, rate, gap_s=gap_s)
    return [t.client_voice_to_voice_ms for t in conversation.turns if t.client_voice_to_voice_ms is not None]


async def over_realtime(server: RunningServer, utterances: Sequence[bytes], gap_s: float) -> list[float]:
    url = server.realtime_base_url.replace("http://", "ws://") + "/realtime?model=bench"
    async with connect(url, additional_headers={"Authorization": "Bearer bench"}, max_size=None) as ws:
        caller = RealtimeCaller(ws)
        await caller.begin()
        await caller.stream(b"", trailing_s=0.5, chunk_ms=FRAME_MS)
        for n, utterance in enumerate(utterances, 1):
            pcm = float_to_pcm16(resample(pcm16_to_float(utterance), RATE, realtime_client.RATE))
            await caller.stream(pcm, trailing_s=gap_s, chunk_ms=FRAME_MS)
            # Silence until it is answered and played out, and the server's allowance for the client's buffer
            # has passed (as /ws waits for turn.metrics): the next sentence is a new turn, not a barge-in.
            while not (len(caller.responses) >= n and all(r.status for r in caller.responses.values())):
                await caller.stream(b"", trailing_s=0.1, chunk_ms=FRAME_MS)
            while not await caller.settle(0):
                await caller.stream(b"", trailing_s=0.1, chunk_ms=FRAME_MS)
            await caller.stream(b"", trailing_s=PLAYBACK_MARGIN_S, chunk_ms=FRAME_MS)
        await caller.close()
    return [v for r in caller.responses.values() if (v := r.client_voice_to_voice_ms) is not None]


def table(results: dict[str, list[float]]) -> str:
    lines = [
        "caller-side voice-to-voice (last audible frame sent -> first reply audio received), ms",
        f"{'path':<14}{'n':>4}{'p50':>9}{'p95':>9}{'mean':>9}{'max':>9}",
    ]
    for path, values in results.items():
        s = summarize(values)
        cells = "".join(f"{'-' if s[k] is None else s[k]:>9}" for k in ("p50", "p95", "mean", "max"))
        lines.append(f"{path:<14}{s['n']:>4}{cells}")
    ws, rt = (np.asarray(results[p]) for p in ("/ws", "/v1/realtime"))
    if ws.size and rt.size:
        p50 = float(np.percentile(rt, 50) - np.percentile(ws, 50))
        mean = float(rt.mean() - ws.mean())
        lines.append(f"/v1/realtime - /ws: p50 {p50:+.1f} ms, mean {mean:+.1f} ms")
    return "\n".join(lines)


async def amain(args: argparse.Namespace) -> int:
    sentences = list(itertools.islice(itertools.cycle(SENTENCES), args.turns))
    speech = {text: caller_speech(text) for text in dict.fromkeys(sentences)}
    utterances = [speech[text] for text in sentences]
    settings = Settings(server={"port": 0, "admission_wait_ms": 0})
    started = time.perf_counter()
    components = build_components(settings)
    print(f"models loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    results: dict[str, list[float]] = {"/ws": [], "/v1/realtime": []}
    async with serving(settings, lambda: components) as server:
        for round_ in range(args.rounds):
            order = ("/ws", "/v1/realtime") if round_ % 2 == 0 else ("/v1/realtime", "/ws")
            for path in order:
                if path == "/ws":
                    values = await over_ws(server, utterances, args.gap, args.ws_rate)
                else:
                    values = await over_realtime(server, utterances, args.gap)
                results[path] += values
                p50 = summarize(values)["p50"]
                print(f"round {round_ + 1}/{args.rounds} {path}: {len(values)} turns, p50 {p50} ms", file=sys.stderr)
    await components.aclose()
    print(table(results))
    expected = args.rounds * args.turns
    return 0 if all(len(v) == expected for v in results.values()) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/realtime_latency.py",
        description="Caller-side voice-to-voice over /v1/realtime and /ws, same server, same audio, same models.",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each path once per round (default: 3)")
    parser.add_argument("--turns", type=int, default=10, help="spoken turns per path per round (default: 10)")
    parser.add_argument("--gap", type=float, default=1.5, help="silence after each sentence, seconds (default: 1.5)")
    parser.add_argument(
        "--ws-rate",
        type=int,
        choices=(16000, 24000),
        default=16000,
        help="sample rate /ws streams at (default: 16000; 24000: as the Realtime path, only the codecs differ)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show the server's INFO log on stderr")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.turns < 1:
        parser.error("--rounds and --turns must be at least 1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    return asyncio.run(amain(args))


if __name__ == "__main__":
    sys.exit(main())
