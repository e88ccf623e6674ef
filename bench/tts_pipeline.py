"""TTS pipeline benchmark: the SageMaker adapter and the per-turn speech pipeline against the local emulator.

The emulator (in this process, real HTTP and AWS event-stream framing, the real aiobotocore client) answers
with a set time to first audio and real-time factor. Each turn goes through ``TurnSpeech`` exactly as in a
session. Measured per turn:

- time to first audio: first sentence handed to ``TurnSpeech`` → first output frame posted;
- our own delay: the emulator writing the first audio bytes → that first frame posted (the adapter, the
  SDK's event-stream parsing, resampling and framing; the HTTP hop on loopback is included);
- gaps: the longest wait for the next frame after the first (a stall between sentences shows here).

Usage: ``python bench/tts_pipeline.py [--ttfa-ms 150] [--rtf 0.3] [--runs 10] [--no-streaming]``. Progress
goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the emulator lives in testing/emulators

import itertools

from agent.adapters.file_voice_store import FileVoiceStore
from agent.adapters.piper_tts import PiperTTS
from agent.adapters.sagemaker_tts import SageMakerTTS
from agent.config import TtsSettings
from agent.core.events import Event, SpeechAudio
from agent.runtime.call.speech import TurnSpeech
from agent.runtime.call.voicing import Voicing
from testing.emulators.sagemaker import SageMakerEmulator, make_voice

ONE = ["Your order will arrive on Tuesday morning."]
TEN = [
    "Your order will arrive on Tuesday morning.",
    "The driver will call you when he is close.",
    "Please make sure someone is at home to sign.",
    "If nobody answers, he will leave a card.",
    "You can then pick it up at the post office.",
    "The office opens at nine in the morning.",
    "Bring the card and a photo ID with you.",
    "You can also change the date on our website.",
    "We are sorry for the long wait this week.",
    "Thank you for shopping with us today.",
]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def one_turn(tts: SageMakerTTS, emu: SageMakerEmulator, sentences: list[str], turn: int) -> dict[str, float]:
    frames: list[float] = []

    async def post(event: Event) -> None:
        if isinstance(event, SpeechAudio):
            frames.append(time.perf_counter())

    async def room() -> None:
        return None

    seen = len(emu.requests)
    speech = TurnSpeech(turn, Voicing(tts, "default/bench"), 24000, 40, post, room, language="en")
    started = time.perf_counter()
    for sentence in sentences:
        speech.add(sentence, language="en")
    speech.finish()
    await speech.wait()
    first_request = emu.requests[seen]
    assert first_request.first_audio_at is not None and frames, "no audio"
    gaps = [b - a for a, b in itertools.pairwise(frames)]
    return {
        "ttfa_ms": (frames[0] - started) * 1000,
        "ours_ms": (frames[0] - first_request.first_audio_at) * 1000,
        "max_gap_ms": max(gaps, default=0.0) * 1000,
        "total_s": frames[-1] - started,
        "audio_s": len(frames) * 0.040,
    }


async def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    print("loading the Piper voice...", file=sys.stderr)
    piper = PiperTTS.load(TtsSettings(max_concurrency=2))
    async with SageMakerEmulator(piper) as emu:
        voices = FileVoiceStore(Path(tempfile.mkdtemp(prefix="tts-bench-")))
        await voices.add(await make_voice(emu, "bench", "The quick brown fox jumps over the lazy dog."))
        for sentence in TEN:  # synthesize once: the emulator's latency is then exactly what is set
            await emu.audio(sentence)
        emu.ttfa_ms, emu.rtf = args.ttfa_ms, args.rtf
        settings = TtsSettings(backend="sagemaker", endpoint_url=emu.url, streaming=not args.no_streaming)
        tts = SageMakerTTS(settings, voices)
        await tts.resolve_voice("bench")
        results: dict[str, list[dict[str, float]]] = {"1 sentence": [], "10 sentences": []}
        try:
            await one_turn(tts, emu, ONE, 0)  # warm the connection pool
            for run_index in range(args.runs):
                for label, sentences in (("1 sentence", ONE), ("10 sentences", TEN)):
                    results[label].append(await one_turn(tts, emu, sentences, run_index + 1))
                print(f"run {run_index + 1}/{args.runs} done", file=sys.stderr)
        finally:
            await tts.aclose()
    mode = "streaming" if not args.no_streaming else "non-streaming"
    print(f"\nTTS pipeline, SageMaker emulator ({mode}, ttfa {args.ttfa_ms:g} ms, rtf {args.rtf:g}), {args.runs} runs")
    print("| reply | TTFA p50 ms | TTFA p95 ms | our delay p50 ms | our delay p95 ms | longest gap p95 ms | total s |")
    print("|---|---|---|---|---|---|---|")
    for label, rows in results.items():
        ttfa = [r["ttfa_ms"] for r in rows]
        ours = [r["ours_ms"] for r in rows]
        gaps = [r["max_gap_ms"] for r in rows]
        total = statistics.median(r["total_s"] for r in rows)
        print(
            f"| {label} | {statistics.median(ttfa):.1f} | {p95(ttfa):.1f} | {statistics.median(ours):.2f} "
            f"| {p95(ours):.2f} | {p95(gaps):.1f} | {total:.2f} |"
        )
    one = statistics.median(r["ttfa_ms"] for r in results["1 sentence"])
    ten = statistics.median(r["ttfa_ms"] for r in results["10 sentences"])
    ours_p95 = p95([r["ours_ms"] for rows in results.values() for r in rows])
    print(f"\nTTFA 10 sentences / 1 sentence: {ten / one:.2f} (target <= 1.2); our delay p95 {ours_p95:.2f} ms (<= 15)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ttfa-ms", type=float, default=150.0, help="emulator time to first audio (default 150)")
    parser.add_argument("--rtf", type=float, default=0.3, help="emulator real-time factor (default 0.3)")
    parser.add_argument("--runs", type=int, default=10, help="turns per reply length (default 10)")
    parser.add_argument("--no-streaming", action="store_true", help="one WAV per sentence instead of streaming")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
