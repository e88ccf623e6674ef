"""Voice-to-voice latency benchmark: N spoken turns over a real WebSocket against an in-process server.

    python bench/latency.py                      # real and instant modes, 20 turns each, table on stdout
    python bench/latency.py --mode real --turns 6
    python bench/latency.py --mode real --set short --turns 10   # only the short utterances (1-4 words)
    python bench/latency.py --mode remote --turns 6 --preemption off,llm,llm+tts
    python bench/latency.py --json > latency.json

Modes (``both`` = real and instant, ``all`` = real, remote and instant):

- ``real``: the bundled local models (faster-whisper tiny.en, the offline responder, Piper joe), loaded by
  ``agent.wiring.build_components`` exactly as ``python -m agent`` does.
- ``remote``: the real tiny.en and VAD, with the reply text and speech from remote-like services reached
  through the production adapters (``openai_compat_llm``, ``sagemaker_tts`` with an enrolled voice): the
  project's emulators on loopback, paced like hosted services (first LLM token after 350 ms, then 40 tokens/s;
  first TTS audio after 250 ms, then real-time factor 0.3). See ``bench/remote_backends.py``.
- ``instant``: instant stand-ins for ASR (a fixed transcript) and TTS (one short tone), with the real webrtc
  VAD and offline responder. What remains is the end-of-turn hangover plus the server's own overhead.

``--preemption off,llm,llm+tts`` runs each mode once per value of the server setting ``turn.preemption``
(without it: the setting's own value, from ``AGENT_TURN__PREEMPTION`` or its default), one table each.

The caller's speech is made with Piper at start-up from two sets of complete utterances (``--set``):
``short``, ten complete utterances of 1-4 words ("Hello.", "Thanks!", "What time is it?", ...; ~0.4-1 s each), and
``long``, ten varied 1.5-3.5 s sentences, five with a short pause inside (``--pause-ms``). With ``--set both``
(the default) the run alternates short and long, ``--turns`` in all, half each. Each utterance is followed by
at least ``--gap`` seconds of silence, all streamed at real-time pace in 20 ms frames (the hangover is measured
in audio time), in one session. The next utterance starts once the previous turn has finished (its
``turn.metrics``). For each stage of ``turn.metrics`` and for the client-measured voice-to-voice time (last
non-silent frame sent → first reply audio frame received) the table shows n, p50, p95, mean and max in
milliseconds; the caller's voice-to-voice is also shown per set (``short``, ``long``, ``all``: a turn belongs to
the utterance whose audio held its last speech frame). Progress goes to stderr.

**This module** changes only with how the bench runs (modes, preemption, the command line); what the caller
says is ``bench/latency_sets.py``, the tables ``bench/latency_report.py``, the instant stand-ins and the server
``bench/server.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings
from bench.latency_report import ModeResult, format_table, result_json, stage_values
from bench.latency_sets import RATE, SET_CHOICES, caller_speech, utterance_plan, values_by_set
from bench.server import instant_components, real_loader, serving
from clients.conversation import Message
from clients.protocol_client import converse_utterances

if TYPE_CHECKING:
    from bench.remote_backends import RemoteLatency

MODES: dict[str, tuple[str, ...]] = {
    "real": ("real",),
    "remote": ("remote",),
    "instant": ("instant",),
    "both": ("real", "instant"),
    "all": ("real", "remote", "instant"),
}
PREEMPTIONS = ("off", "llm", "llm+tts")


class _Progress:
    def __init__(self, label: str, total: int) -> None:
        self.label = label
        self.total = total
        self.transcripts: dict[int, str] = {}

    def __call__(self, msg: Message) -> None:
        kind = msg.get("type")
        if kind == "transcript":
            self.transcripts[int(msg["turn"])] = str(msg.get("text") or "")
        elif kind == "turn.metrics":
            turn = int(msg["turn"])
            v2v = msg.get("voice_to_voice_ms")
            shown = "-" if v2v is None else f"{float(v2v):.0f} ms"
            text = self.transcripts.get(turn, "")
            print(f"[{self.label}] turn {turn}/{self.total}: voice-to-voice {shown}  {text!r}", file=sys.stderr)
        elif kind == "error":
            print(f"[{self.label}] server error [{msg.get('code')}]: {msg.get('message')}", file=sys.stderr)


def remote_latency(args: argparse.Namespace) -> RemoteLatency:
    from bench.remote_backends import RemoteLatency

    return RemoteLatency(args.llm_first_token_ms, args.llm_tokens_per_s, args.tts_first_audio_ms, args.tts_rtf)


async def run_mode(
    mode: str,
    preemption: str | None,
    utterances: Sequence[bytes],
    args: argparse.Namespace,
    labels: Sequence[str] = (),
) -> ModeResult:
    """One session of ``utterances`` against a fresh server in ``mode``; ``preemption`` None = the setting's.

    ``labels[i]``: the set of utterance ``i`` (for ``ModeResult.by_set``; default: all ``long``).
    """
    overrides: dict[str, Any] = {"server": {"port": 0}, "vad": {"backend": args.vad}}
    if preemption is not None:
        overrides["turn"] = {"preemption": preemption}
    async with contextlib.AsyncExitStack() as stack:
        if mode == "remote":
            from bench.remote_backends import remote_backends

            latency = remote_latency(args)
            overrides |= await stack.enter_async_context(remote_backends(latency))
            print(f"[{mode}] emulators: {latency.describe()}", file=sys.stderr)
        settings = Settings(**overrides)
        label = f"{mode}/{settings.turn.preemption}"
        load = instant_components if mode == "instant" else real_loader(settings)
        started = time.perf_counter()
        async with serving(settings, load) as server:
            load_s = time.perf_counter() - started
            print(f"[{label}] server ready at {server.ws_url} (load {load_s:.1f} s)", file=sys.stderr)
            started = time.perf_counter()
            conversation = await converse_utterances(
                server.ws_url,
                utterances,
                RATE,
                gap_s=args.gap,
                speed=args.speed,
                wait_for_playback=args.playback_wait,
                turn_timeout_s=args.turn_timeout,
                on_event=_Progress(label, len(utterances)),
            )
            elapsed_s = time.perf_counter() - started
            components = server.state.components
            preemptions = preemption_counts(server.state.metrics.render())
        if components is not None:  # HTTP pools and threads, before the emulators stop
            await components.aclose()
    result = ModeResult(mode, settings.turn.preemption, len(utterances), load_s, elapsed_s, conversation)
    result.values = stage_values(result.turns)
    result.by_set = values_by_set(
        ((t.last_voice_sent_at, t.client_voice_to_voice_ms) for t in result.turns),
        conversation.segment_ends,
        list(labels) or ["long"] * len(utterances),
    )
    result.preemptions = preemptions
    return result


def preemption_counts(exposition: str) -> dict[str, float]:
    """Preemptive replies released (hit) and discarded (miss), and the speech synthesized for nothing."""
    counts = {"hit": 0.0, "miss": 0.0, "wasted_speech_s": 0.0}
    for line in exposition.splitlines():
        name, _, value = line.rpartition(" ")
        if name.startswith("voice_agent_preemptive_replies_total{"):
            counts["hit" if 'outcome="hit"' in name else "miss"] += float(value)
        elif name == "voice_agent_preemption_wasted_speech_seconds_total":
            counts["wasted_speech_s"] = float(value)
    return counts


def preemption_list(value: str) -> list[str]:
    """``--preemption``: comma-separated values of ``turn.preemption``."""
    values = [v.strip() for v in value.split(",") if v.strip()]
    wrong = [v for v in values if v not in PREEMPTIONS]
    if wrong or not values:
        raise argparse.ArgumentTypeError(f"expected one or more of {', '.join(PREEMPTIONS)}, comma separated")
    return list(dict.fromkeys(values))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/latency.py",
        description=(
            "Measure voice-to-voice latency per stage over a real WebSocket against an in-process server: "
            "real local models, remote-like services (emulators on loopback) and/or instant stand-ins "
            "(server overhead). The headline is the caller's voice-to-voice (last audible frame sent -> first "
            "reply audio received), also per utterance set (short: 1-4 words; long: 1.5-3.5 s sentences); the "
            "server's turn.metrics stages are shown beside it."
        ),
    )
    parser.add_argument(
        "--mode",
        choices=tuple(MODES),
        default="both",
        help="real: bundled tiny.en + offline responder + Piper; remote: real tiny.en and VAD, reply text from "
        "the OpenAI-compatible emulator and speech from the SageMaker emulator (enrolled voice), through the "
        "production adapters; instant: instant ASR/TTS stand-ins; both = real,instant; all = "
        "real,remote,instant (default: both)",
    )
    parser.add_argument(
        "--preemption",
        type=preemption_list,
        default=None,
        metavar="off|llm|llm+tts[,...]",
        help="server setting turn.preemption (start the reply / its first speech from the speculative "
        "transcript); several values comma separated run each mode once per value, one table each "
        "(default: the setting's own value, AGENT_TURN__PREEMPTION or llm+tts)",
    )
    parser.add_argument(
        "--set",
        dest="sets",
        choices=tuple(SET_CHOICES),
        default="both",
        help="what the caller says: short = 1-4-word complete utterances ('Hello.', 'Thanks!', 'What time is "
        "it?'), long = 1.5-3.5 s sentences, both = the two alternating (default: both); caller voice-to-voice "
        "is reported per set",
    )
    parser.add_argument(
        "--turns",
        type=int,
        default=20,
        help="spoken utterances per run, shared by the sets in turn (default: 20; with --set both, 10 each)",
    )
    parser.add_argument(
        "--gap", type=float, default=1.5, help="minimum silence after each sentence, seconds (default: 1.5)"
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="stream the sentences this many times faster than real time (default: 1.0; the waits for "
        "replies are always real time)",
    )
    parser.add_argument(
        "--playback-wait",
        action="store_true",
        help="before the next sentence, also wait until the reply audio would have finished playing",
    )
    parser.add_argument(
        "--pause-ms", type=int, default=250, help="pause inside sentences marked with '|' (default: 250)"
    )
    parser.add_argument("--turn-timeout", type=float, default=60.0, help="give up waiting for one turn after this (s)")
    parser.add_argument(
        "--vad", choices=("webrtc", "silero"), default="webrtc", help="speech detector (real and remote modes)"
    )
    remote = parser.add_argument_group("remote mode: how slow the emulated services are")
    remote.add_argument(
        "--llm-first-token-ms", type=float, default=350.0, help="LLM time to first token (default: 350)"
    )
    remote.add_argument("--llm-tokens-per-s", type=float, default=40.0, help="LLM tokens per second (default: 40)")
    remote.add_argument(
        "--tts-first-audio-ms", type=float, default=250.0, help="TTS time to first audio (default: 250)"
    )
    remote.add_argument(
        "--tts-rtf",
        type=float,
        default=0.3,
        help="TTS real-time factor after the first audio: seconds to make one second of audio (default: 0.3)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable results instead of tables")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the server's INFO log on stderr")
    return parser


async def amain(args: argparse.Namespace) -> int:
    modes = MODES[args.mode]
    preemptions: list[str | None] = list(args.preemption) if args.preemption else [None]
    started = time.perf_counter()
    plan = utterance_plan(SET_CHOICES[args.sets], args.turns)
    speech = {text: caller_speech(text, pause_ms=args.pause_ms) for _, text in dict.fromkeys(plan)}
    utterances = [speech[text] for _, text in plan]
    labels = [name for name, _ in plan]
    seconds = sum(len(u) for u in utterances) / 2 / RATE
    print(
        f"made {len(speech)} utterances with Piper in {time.perf_counter() - started:.1f} s; "
        f"{args.turns} turns ({args.sets}), {seconds:.1f} s of speech per run",
        file=sys.stderr,
    )
    results = [await run_mode(mode, p, utterances, args, labels) for mode in modes for p in preemptions]
    if args.json:
        # Keyed by mode; by mode/preemption when several preemption values ran.
        several = len(preemptions) > 1
        print(json.dumps({r.label if several else r.mode: result_json(r) for r in results}, indent=2))
    else:
        print("\n\n".join(format_table(r) for r in results))
    failed = any(r.conversation.timed_out or not r.turns for r in results)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.turns < 1:
        build_parser().error("--turns must be at least 1")
    if min(args.llm_first_token_ms, args.tts_first_audio_ms, args.tts_rtf) < 0 or args.llm_tokens_per_s <= 0:
        build_parser().error("emulated latencies must be >= 0 and --llm-tokens-per-s > 0")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    return asyncio.run(amain(args))


if __name__ == "__main__":
    sys.exit(main())
