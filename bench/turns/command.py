"""The end-of-turn bench's command line (``python bench/end_of_turn.py``): its options, their checks, and which run
they start (``offline``, or ``live`` with ``--live``, ``live_human_run`` with ``--live --human``); the seal is
applied before anything runs. It changes only with the options. What the bench measures and how: the package's doc
(``bench/turns/__init__.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agent.config import Settings
from bench.turns import live_human_run
from bench.turns.corpus import VOICES
from bench.turns.delays import Delays
from bench.turns.live import add_arguments, check_arguments, run_live
from bench.turns.offline import run_offline
from bench.turns.policies import DEFAULT_POLICIES, parse_policy, select_policies
from bench.turns.seal import seal, uncommitted


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/end_of_turn.py",
        description=(
            "End-of-turn evaluation on two spoken sets made at run time. Thresholds and rules are chosen on dev; "
            "test is only scored (never tuned on: other sentences, other voices, room noise, longer pauses); a "
            "change that moves a threshold reports dev and test side by side. Each utterance is streamed in "
            "audio time through the server's VAD, session core, faster-whisper and acoustic turn model; per "
            "policy, set and category (short, long, question, breath, thinking): false cut-offs (the turn ended "
            "before the audible end), splits (more than one turn), the latency from the audible end to the end "
            "of turn, and the WER of the transcript the turn was answered with."
        ),
        epilog=(
            "default policies: "
            + "; ".join(f"{name}={json.dumps(o, separators=(',', ':'))}" for name, o in DEFAULT_POLICIES.items())
            + ". Settings not overridden come from the environment (AGENT_*), as for the server."
        ),
    )
    parser.add_argument(
        "--split",
        choices=("dev", "test", "both"),
        default="both",
        help="which set to run: dev (tune on it), test (only ever scored) or both, side by side (default)",
    )
    parser.add_argument(
        "--policy",
        action="append",
        type=parse_policy,
        default=[],
        metavar="NAME=JSON",
        help="add a policy (or replace a default of that name): settings overrides as JSON, e.g. "
        '\'sure70={"turn":{"acoustic_sure":0.7}}\'; repeatable',
    )
    parser.add_argument(
        "--only",
        default=None,
        metavar="NAME[,NAME...]",
        help="run only these policies, in this order (default: the defaults, then those added)",
    )
    parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N utterances of each set")
    parser.add_argument(
        "--engine",
        choices=("piper", "espeak"),
        default=None,
        help="only the utterances said by this speech engine (Piper is the more natural voice)",
    )
    most = min(len(v) for v in VOICES.values())
    parser.add_argument(
        "--renditions",
        type=int,
        default=3,
        help=f"voices per sentence, 1-{most} (default: 3: about 110 utterances per set)",
    )
    parser.add_argument(
        "--asr-latency-ms",
        type=int,
        default=0,
        help="deliver each transcript and sound score this much audio after it was asked for (default: 0)",
    )
    parser.add_argument(
        "--asr-latency",
        type=Path,
        default=None,
        metavar="FILE",
        help="offline: draw each transcript's and score's delay from the distribution a live run saved "
        "(--live --save-latency FILE); seeded per utterance, reproducible",
    )
    parser.add_argument(
        "--languages",
        default="en",
        metavar="CODE[,CODE...]",
        help="utterances in these languages: synthetic en, de; recorded (bench/turns/recorded.py, when its packages "
        "are installed) en and others; --limit applies to each language (default: en)",
    )
    parser.add_argument(
        "--noise-dbfs",
        type=float,
        default=-60.0,
        help="dev: white noise level (RMS, dBFS) under the whole utterance; 0 or above = none (default: -60); "
        "test has its own room noise",
    )
    parser.add_argument("--plot", type=Path, default=None, metavar="FILE.png", help="plot cut-offs against latency")
    parser.add_argument("--save-wav", type=Path, default=None, metavar="DIR", help="also write the sets here")
    parser.add_argument(
        "--list-cutoffs",
        action="store_true",
        help="after each table, list the utterances cut off or split (where, and the transcripts heard)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable results instead of tables")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the server's INFO log on stderr")
    add_arguments(parser)
    live_human_run.add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    most = min(len(v) for v in VOICES.values())
    if not 1 <= args.renditions <= most:
        parser.error(f"--renditions must be 1..{most}")
    if args.asr_latency_ms < 0:
        parser.error("--asr-latency-ms must be >= 0")
    if args.asr_latency is not None and (args.asr_latency_ms or args.live):
        parser.error("--asr-latency FILE is for the offline mode, instead of --asr-latency-ms")
    live_human_run.check_arguments(args, parser.error)
    seal(args, parser.error, uncommitted)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    policies = select_policies(args, Settings(), parser.error)
    if args.live:
        check_arguments(args, policies, parser.error)
        if args.human:
            rows, unsealed = live_human_run.load_rows(args, parser.error)
            return asyncio.run(live_human_run.run_human(args, policies, rows, unsealed))
        return asyncio.run(run_live(args, policies))
    if args.asr_latency is not None:
        try:
            Delays.load(args.asr_latency)
        except ValueError as exc:
            parser.error(f"--asr-latency: {exc}")
    return asyncio.run(run_offline(args, policies))
