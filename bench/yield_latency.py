"""Yield at once, resume if it was not an interruption (issue 10, item 3): how fast a reply stops when the caller
makes a sound over it, and whether it comes back with no word lost.

    .venv/bin/python bench/yield_latency.py                      # 5 trials per row, every row, tables
    .venv/bin/python bench/yield_latency.py --trials 2 --paths ws --sounds talk-over,cough
    .venv/bin/python bench/yield_latency.py --modes yield,off --json > yield.json
    .venv/bin/python bench/yield_latency.py --trials 5 --save yield.json     # tables, and every trial to a file

An in-process server with the real local models (webrtcvad, tiny.en, Piper, as ``build_components`` loads them)
and the reply text from the OpenAI-compatible emulator (every reply is the same long story). Each trial is one
call: the caller asks for a story, listens to ``--listen-ms`` of it (played, on /ws; received, on /twilio,
whose audio comes paced in real time), then makes one sound over it:

- ``talk-over``: a real interruption, "Stop. What time is it?" (Piper, espeak-ng en-us+m3, en-gb; in turn);
- ``cough``: a 200 ms burst of voice (the start of Piper's "Hah!", faded in and out, as in the tests);
- ``uh-huh``: an acknowledgement, "Uh-huh." / "Mm-hmm." / "Yeah." by Piper and espeak-ng voices (in turn).

**Rows** (``--modes``): ``yield`` = the server's default (``AGENT_TURN__PAUSE_ON_SPEECH=true``), the /ws client
sends the ``playback.pause`` capability; ``no-cap`` = the same server, a /ws client without the capability
(today's browsers); ``off`` = ``AGENT_TURN__PAUSE_ON_SPEECH=false``, the behaviour before the change. /twilio
has no capability: it runs ``yield`` and ``off``.

**The callers**: on /ws, 16 kHz PCM16 in 20 ms frames at real-time pace, the reply played by a simulated player
in real time (``playback.mark`` every 100 ms; on ``playback.pause`` it drops its buffer and goes on from
``played_ms``; on ``playback.clear`` it stops); on /twilio, the simulated Twilio caller of
``clients/twilio_client.py`` (μ-law 8 kHz, marks echoed as they play, ``clear`` honoured); on AudioSocket
(``--paths audiosocket``), the simulated Asterisk of ``clients/audiosocket_client.py`` (8 kHz PCM, no marks, no
clear: the reply stops when its paced frames stop coming, a gap of 100 ms or more).

**Measured** from the sound's onset (when its first frame was sent, plus the offset of its first frame above
-40 dBFS):

- ``stop``: onset → the reply stopped at the caller: ``playback.pause`` on /ws (``playback.clear`` without the
  capability or with yielding off), the first ``clear`` on /twilio (target p95 <= 150 ms), the last frame before
  the gap on AudioSocket (whose far end still plays the lead it was sent, 100 ms);
- ``barge-in``: the reply was cut for a new turn: ``playback.clear`` (or a transcript for turn 2) on /ws; on
  /twilio the ``clear`` before the first ``mark`` of turn 2's reply. ``barge`` = onset → that clear. Expected
  for every talk-over, never for a cough or an uh-huh;
- ``resumed``: after a pause, more audio of the same turn (binary before any ``audio.start`` of turn 2 on /ws;
  marks ``1:<ms>:<segment>`` on /twilio); ``gap`` = stop → first resumed audio received;
- ``words lost``: the reply resumed from a position later than what the caller had played when it stopped
  (/ws: the pause's ``played_ms`` against the player's own position, 2 ms of rounding allowed; /twilio: the first
  resumed mark's position minus 20 ms against the simulated caller's playout), or the resumed audio is not the
  reply's audio from that position byte for byte; ``rewind`` = played position - resume position (audio heard
  twice).

A talk-over that paused, resumed and paused again (a short first word, "Stop.", then the rest) counts every
pause; the row's ``pauses`` column shows it. Progress lines go to stderr.

This module changes only with the run, its command line and its tables; the caller's sounds are
``bench/yield_sounds.py``, one trial per path ``bench/yield_trials.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings
from agent.runtime.components import Components
from agent.wiring import build_components
from bench.progress import progress
from bench.server import emulated_llm, serving
from bench.stats import pct
from bench.yield_sounds import RATE, SOUNDS, Sound, make_sounds, speech_question
from bench.yield_trials import Trial, audiosocket_trial, twilio_trial, ws_trial
from testing.emulators.openai import OpenAIEmulator

STORY = [
    "Once upon a time, a small fox lived at the edge of a quiet forest. ",
    "Every morning she walked to the river to watch the fish jump. ",
    "One day she found a lost duckling crying under a willow tree. ",
    "The fox carried the duckling home across three wide fields. ",
    "The duck family thanked her with a song that lasted until sunset. ",
]
PATHS = ("ws", "twilio", "audiosocket")
MODES = ("yield", "no-cap", "off")


# --- the caller's sounds ------------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    path: str
    mode: str
    kind: str
    trials: list[Trial] = field(default_factory=list)

    def stats(self) -> dict[str, Any]:
        ok = [t for t in self.trials if t.error is None]
        stops = [t.stop_ms for t in ok if t.stop_ms is not None]
        barges = [t.barge_ms for t in ok if t.barge_ms is not None]
        gaps = [t.gap_ms for t in ok if t.gap_ms is not None]
        rewinds = [t.rewind_ms for t in ok if t.rewind_ms is not None]
        return {
            "path": self.path,
            "mode": self.mode,
            "sound": self.kind,
            "trials": len(self.trials),
            "errors": len(self.trials) - len(ok),
            "stops": len(stops),
            "stop_p50_ms": pct(stops, 50),
            "stop_p95_ms": pct(stops, 95),
            "pauses": sum(len(t.pauses) for t in ok),
            "barge_ins": sum(t.barged for t in ok),
            "barge_p50_ms": pct(barges, 50),
            "resumed": sum(t.resumed for t in ok),
            "words_lost": sum(t.words_lost for t in ok),
            "gap_p50_ms": pct(gaps, 50),
            "rewind_p50_ms": pct(rewinds, 50),
        }


MODE_LABEL = {
    "yield": "yield (pause on, capability)",
    "no-cap": "no capability",
    "off": "pause_on_speech=false",
}


def label(row: Row) -> str:
    if row.path in ("twilio", "audiosocket") and row.mode == "yield":
        return "yield (pause on)"  # telephony has no capability: it can always pause
    return MODE_LABEL[row.mode]


def format_tables(rows: list[Row]) -> str:
    def f(v: float) -> str:
        return "-" if math.isnan(v) else f"{v:.0f}"

    out: list[str] = []
    for path in dict.fromkeys(r.path for r in rows):
        out.append(f"/{path}")
        out.append(
            "| sound | server / client | trials | stops | stop p50 ms | stop p95 ms | pauses | barge-ins "
            "| barge p50 ms | resumed | words lost | gap p50 ms | rewind p50 ms |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for row in (r for r in rows if r.path == path):
            s = row.stats()
            errors = f" ({s['errors']} failed)" if s["errors"] else ""
            out.append(
                f"| {row.kind} | {label(row)} | {s['trials']}{errors} | {s['stops']} | {f(s['stop_p50_ms'])} "
                f"| {f(s['stop_p95_ms'])} | {s['pauses']} | {s['barge_ins']} | {f(s['barge_p50_ms'])} | {s['resumed']} "
                f"| {s['words_lost']} | {f(s['gap_p50_ms'])} | {f(s['rewind_p50_ms'])} |"
            )
        out.append("")
    return "\n".join(out)


async def run_server(
    components: Components, pause_on: bool, plan: list[tuple[str, str]], sounds: dict[str, list[Sound]], args: Any
) -> list[Row]:
    rows: list[Row] = []
    async with OpenAIEmulator(default_reply=STORY) as emulator:
        llm = emulated_llm(emulator.base_url)
        served = dataclasses.replace(components, llm=llm)
        settings = Settings(
            server={"port": 0, "admission_wait_ms": 0}, turn={"pause_on_speech": pause_on}, audiosocket={"port": 0}
        )
        try:
            async with serving(settings, lambda: served) as server:
                for path, mode in plan:
                    for kind in args.sounds:
                        row = Row(path, mode, kind)
                        rows.append(row)
                        for i, sound in enumerate(sounds[kind]):
                            trial = Trial(path, mode, kind, sound.label)
                            try:
                                if path == "ws":
                                    await ws_trial(server.ws_url, mode, sound, args.listen_ms, trial)
                                elif path == "twilio":
                                    await twilio_trial(server.url("twilio"), sound, args.listen_ms, trial)
                                else:
                                    await audiosocket_trial(server, sound, args.listen_ms, trial)
                            except Exception as exc:  # one failed call is reported, the run goes on
                                trial.error = f"{type(exc).__name__}: {exc}"
                            row.trials.append(trial)
                            progress(
                                f"/{path} {mode} {kind} {i + 1}/{len(sounds[kind])} {sound.label}: {trial.summary()}"
                            )
        finally:
            await llm.aclose()
    return rows


def csv_of(choices: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(value: str) -> list[str]:
        values = [v.strip() for v in value.split(",") if v.strip()]
        wrong = [v for v in values if v not in choices]
        if wrong or not values:
            raise argparse.ArgumentTypeError(f"expected one or more of {', '.join(choices)}, comma separated")
        return list(dict.fromkeys(values))

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/yield_latency.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=5, help="calls per path, row and sound (default 5)")
    parser.add_argument("--paths", type=csv_of(PATHS), default=list(PATHS), help="ws,twilio,audiosocket (default all)")
    parser.add_argument(
        "--sounds", type=csv_of(SOUNDS), default=list(SOUNDS), help="talk-over,cough,uh-huh (default all)"
    )
    parser.add_argument(
        "--modes",
        type=csv_of(MODES),
        default=list(MODES),
        help="yield,no-cap,off (default all; no-cap is /ws only)",
    )
    parser.add_argument(
        "--listen-ms", type=int, default=1500, help="reply played (/ws) or received (/twilio) before the sound"
    )
    parser.add_argument("--json", action="store_true", help="print every trial and the rows as JSON instead of tables")
    parser.add_argument("--save", type=Path, metavar="FILE", help="also write that JSON to FILE")
    return parser


def describe_run(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    """What the numbers depend on: the code (commit, files changed since), the settings that matter, the load."""
    root = Path(__file__).resolve().parents[1]

    def git(*command: str) -> str:
        try:
            done = subprocess.run(["git", *command], cwd=root, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout

    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines() if line]
    turn, vad = settings.turn, settings.vad
    return {
        "commit": git("rev-parse", "--short", "HEAD").strip() or "unknown",
        "modified": changed,
        "cpus": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "trials": args.trials,
        "listen_ms": args.listen_ms,
        "settings": {
            "vad.onset_ms": vad.onset_ms,
            "vad.tail_floor_db": vad.tail_floor_db,
            "turn.barge_in_min_ms": turn.barge_in_min_ms,
            "turn.backchannel_max_ms": turn.backchannel_max_ms,
            "turn.resume_after_ms": turn.resume_after_ms,
            "echo.mode": settings.echo.mode,
            "twilio.lead_ms": settings.twilio.lead_ms,
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.trials < 1:
        build_parser().error("--trials must be at least 1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    sounds = {kind: make_sounds(kind, args.trials) for kind in args.sounds}
    speech_question(RATE)
    progress(f"made the caller's sounds in {time.monotonic() - started:.1f} s; loading the models")
    base = Settings()
    components = build_components(base)
    run = describe_run(base, args)
    plans: dict[bool, list[tuple[str, str]]] = {True: [], False: []}
    for path in args.paths:
        for mode in args.modes:
            if path != "ws" and mode == "no-cap":
                continue
            plans[mode != "off"].append((path, mode))
    progress(
        f"{args.trials} trials per row, the sound after {args.listen_ms} ms of the reply; cpus: {run['cpus']}, "
        f"load average {run['load_average']:.2f}; commit {run['commit']}"
        + (f" with {len(run['modified'])} modified file(s): {' '.join(run['modified'])}" if run["modified"] else "")
    )
    progress("settings: " + ", ".join(f"{k}={v}" for k, v in run["settings"].items()))
    rows: list[Row] = []
    for pause_on in (True, False):
        if plans[pause_on]:
            rows += asyncio.run(run_server(components, pause_on, plans[pause_on], sounds, args))
    rows.sort(key=lambda r: (PATHS.index(r.path), SOUNDS.index(r.kind), MODES.index(r.mode)))
    progress(f"done in {time.monotonic() - started:.0f} s; load average {os.getloadavg()[0]:.2f}")
    run["load_average_end"] = round(os.getloadavg()[0], 2)
    rows_json = [
        {**{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.stats().items()}}
        | {"runs": [t.as_json() for t in r.trials]}
        for r in rows
    ]
    report = json.dumps({"run": run, "rows": rows_json}, indent=2)
    if args.save:
        args.save.write_text(report + "\n", encoding="utf-8")
    if args.json:
        print(report)
    else:
        print(format_tables(rows))
    return 1 if any(t.error for r in rows for t in r.trials) else 0


if __name__ == "__main__":
    raise SystemExit(main())
