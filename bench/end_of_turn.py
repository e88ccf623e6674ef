"""End-of-turn benchmark: false cut-offs, splits, end-of-turn latency and WER per policy, on a dev and a test set.

    python bench/end_of_turn.py --split dev              # the tuning set, every default policy, tables on stdout
    python bench/end_of_turn.py                          # dev + test, policy current only (test is sealed: below)
    python bench/end_of_turn.py --split dev --limit 12   # a quick look (12 utterances per language, every category)
    python bench/end_of_turn.py --split dev --policy 'sure70={"turn":{"acoustic_sure":0.7}}' --only current,sure70
    python bench/end_of_turn.py --split dev --policy 'gate={"vad":{"tail_floor_db":20}}' --list-cutoffs
    python bench/end_of_turn.py --split test --only max1200    # the one policy chosen on dev, scored on test
    python bench/end_of_turn.py --asr-latency-ms 150     # transcripts and sound scores arrive 150 ms later
    python bench/end_of_turn.py --asr-latency /tmp/asr.json    # ... or as late as a live run measured
    python bench/end_of_turn.py --languages en,de        # German sentences too; recorded speech in these languages
    python bench/end_of_turn.py --json > eot.json        # machine-readable, with every utterance
    python bench/end_of_turn.py --split dev --plot /tmp/eot.png   # false cut-offs against latency, per policy
    python bench/end_of_turn.py --save-wav /tmp/eot      # also write the sets as WAV files (never commit them)
    python bench/end_of_turn.py --live --split dev --limit 10 --save-latency /tmp/asr.json   # a real server

**Dev and test.** Thresholds and rules are chosen on the ``dev`` set; the ``test`` set is only ever scored, never
tuned on. A change that moves a threshold or a rule reports dev and test side by side (the default, ``--split
both``): a gain on dev that does not show on test is a fit to dev. **The seal** (``bench/eot_seal.py``): a run
that touches test runs one policy that is in the code (``--only NAME``; ``current`` without it) and refuses a grid
or ``--policy``, and a tree with uncommitted changes (commit first: the log names the commit scored); every such
run, offline or live, appends a line to ``docs/eot-test-log.md``. The sets share no
sentence and no voice; test adds room noise (pink, brown, mains hum at 20-35 dB SNR), longer pauses (breath up to
400 ms, thinking up to 1.5 s) and Piper with its sampling noise on. Both are made at start-up, nothing downloaded,
no audio committed (``bench/eot_corpus.py`` says how): about 110 utterances each, in five categories reported on
their own: ``short`` (1-3 word turns), ``long`` statements, ``question``s, ``breath`` (a 150-400 ms pause
mid-sentence) and ``thinking`` (0.5-1.5 s after "um", "and", "to", "the", half a number, a list item, a spelled
name). Their utterances are synthetic speech (Piper and espeak-ng); where the packages of
``bench/eot_recorded.py`` are installed, recorded human speech (other speakers per set) is added to each.

**The pipeline** is the server's own, driven purely in audio time (no sockets, no clock): each utterance is cut
into 20 ms chunks and fed to ``CallerAudio`` (the VAD from settings, exactly as a connection builds it), whose
frames go to a fresh ``agent.core.session.Session`` configured by ``agent.runtime.call.policies.session_config``. The
bench carries out the effects the end of turn depends on: ``Transcribe`` (the real faster-whisper model,
``agent.wiring.build_stt``) posts ``TranscriptReady``; ``ScoreTurn`` (the acoustic turn-completion model,
``agent.adapters.smart_turn.SmartTurnModel``, when the settings turn it on) posts ``TurnScored``; both **at once
in audio time** (zero latency; ``--asr-latency-ms`` delays both by that much audio; ``--asr-latency FILE`` by
delays drawn from a live run's measurements, ``bench/eot_delays.py``); ``CancelTranscription``
drops a pending answer. Identical audio is transcribed and scored once, and reused across policies. Replies are
never produced (the agent stays silent), so what is measured is the core's own decision, not a copy of it.

**Per utterance**: the turn ends at the core's ``Notify(SpeechStopped)``; the server releases a prepared reply
exactly then. A *false cut-off*: the first end of turn came before the audible end of the final part (reply
audio would reach the caller before they finished). Then the rest of the utterance is streamed on and every
further end of turn counted: a *split* is an utterance that made more than one turn. *Latency* = end of turn -
audible end, over utterances not cut off (the VAD's tail plus the hangover). *WER*: the transcript the turn was
answered with (the final transcript, or the speculative one the core reused), fillers left out of both sides,
over utterances not cut off. A turn that never ends within the audio is *no end*.

**Policies** are ``Settings`` overrides on top of the environment's settings (``AGENT_*``), so every rule is the
server's: ``current`` (as configured), ``text_only`` (acoustic model off: the words alone, by the rules and the
text model), ``rules_sound`` (text model off: the rules and the sound, as before issue 29), ``fixed420`` (one
420 ms hangover whatever was said or how it sounded; the speculative transcript still runs, as the answer),
``sure_fragments`` (a sure score ends fragments at the minimum too: "Hello world."), ``sure90``
(``turn.acoustic_sure``: the score that ends a turn at the minimum hangover), ``unsure40``
(``turn.acoustic_unsure``: the score at or below which the caller sounds unfinished), ``wait1500`` (a
sentence that sounds unfinished waits 1.5 s, not 700 ms: the fewest cut-offs on dev, at a p95 of 1.5 s) and
``max1200`` (words that trail off and unsure fragments wait up to 1.2 s instead of 1.5 s). ``--policy
NAME=JSON`` adds one (or replaces a default of that name).

**Output**: per policy one table by category, dev and test side by side; then one summary line per policy per
set, and rows by source (``human``: ``bench/eot_recorded.py``'s recordings, when installed; ``synthetic``) and
language. Progress goes to stderr. A dev run of the 8 policies takes about 2-3 minutes on 2 cores, most of it
transcribing each distinct audio once.

**Live** (``--live``, ``bench/eot_live.py``): the same sets through a real server (``python -m agent``, one per
policy, or ``--url``) over a socket in real time, one call per utterance, scored at the caller: reply audio
before the audible end is a false cut-off, latency runs from the last audible frame sent to the first reply
audio received; ``--load N`` adds N other callers.

**This module** changes only with the offline run and its command line; the policies are
``bench/eot_policies.py``, one utterance through the pipeline ``bench/eot_run.py``, the sets a run uses
``bench/eot_sets.py`` (made by ``bench/eot_corpus.py``), the figures and tables ``bench/eot_report.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings
from agent.wiring import build_detector_factory
from bench.eot_corpus import VOICES, Utterance
from bench.eot_delays import Delays
from bench.eot_models import Transcriber, TurnScorer
from bench.eot_policies import DEFAULT_POLICIES, Policy, acoustic_on, parse_policy, with_overrides
from bench.eot_report import (
    PolicyResult,
    SetResult,
    format_cutoffs,
    format_summary,
    format_table,
    result_json,
    stats,
    summary_rows,
)
from bench.eot_run import run_utterance
from bench.eot_seal import LOG, append, seal, test_log_lines, uncommitted
from bench.eot_sentences import Split
from bench.eot_sets import make_sets, save_wav
from bench.progress import progress

# --- command line ---------------------------------------------------------------------------------------


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
        help="utterances in these languages: synthetic en, de; recorded (bench/eot_recorded.py, when its packages "
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
    from bench.eot_live import add_arguments

    add_arguments(parser)
    return parser


def select_policies(args: argparse.Namespace, base: Settings, error: Callable[[str], Any]) -> list[Policy]:
    known: dict[str, dict[str, Any]] = dict(DEFAULT_POLICIES)
    for name, overrides in args.policy:
        known[name] = overrides
    names = list(known) if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    missing = [n for n in names if n not in known]
    if missing or not names:
        error(f"--only: unknown policy {', '.join(missing) or '(none given)'}; known: {', '.join(known)}")
    policies = []
    for name in dict.fromkeys(names):
        try:
            policies.append(Policy(name, known[name], with_overrides(base, known[name])))
        except (ValueError, TypeError) as exc:
            error(f"policy {name}: {exc}")
    return policies


async def run_policies(
    policies: Sequence[Policy], sets: dict[Split, list[Future[Utterance]]], latency: int | Delays
) -> tuple[list[PolicyResult], Transcriber, TurnScorer]:
    transcriber, scorer = Transcriber(), TurnScorer()
    results: list[PolicyResult] = []
    try:
        for policy in policies:
            if acoustic_on(policy.settings):
                scorer.load(policy.settings)  # a missing model fails here, before anything is run
            new_detector = build_detector_factory(policy.settings)
            result = PolicyResult(policy, {})
            for split, made in sets.items():
                began = time.perf_counter()
                outcomes = []
                for n, future in enumerate(made, 1):
                    u = future.result()
                    delay = latency.for_utterance(u.id) if isinstance(latency, Delays) else latency
                    outcome = await run_utterance(u, policy.settings, new_detector, transcriber, scorer, delay)
                    outcomes.append(outcome)
                    verdict = "CUT OFF" if outcome.cut_off else "no end" if outcome.end_ms is None else "ok"
                    verdict += ", split" if outcome.split else ""
                    progress(f"policy {policy.name} {split}: utterance {n}/{len(made)} {u.category}: {verdict}")
                result.sets[split] = SetResult(split, outcomes, time.perf_counter() - began)
            results.append(result)
    finally:
        transcriber.close()
    return results, transcriber, scorer


async def amain(args: argparse.Namespace, policies: list[Policy]) -> int:
    started = time.perf_counter()
    with ThreadPoolExecutor(1, thread_name_prefix="eot-corpus") as pool:
        made = make_sets(args, pool)
        if args.save_wav is not None:
            save_wav(args.save_wav, {s: [f.result() for f in fs] for s, fs in made.items()})
        latency = Delays.load(args.asr_latency) if args.asr_latency is not None else args.asr_latency_ms
        asr = latency.describe() if isinstance(latency, Delays) else f"ASR latency {args.asr_latency_ms} ms"
        results, transcriber, scorer = await run_policies(policies, made, latency)
    sets = {s: [f.result() for f in fs] for s, fs in made.items()}
    seconds = sum(u.duration_ms for us in sets.values() for u in us) / 1000
    sizes = ", ".join(f"{s} {len(us)}" for s, us in sets.items())
    progress(
        f"{sizes} utterances ({seconds:.0f} s of audio); ASR: {transcriber.runs} transcriptions in "
        f"{transcriber.seconds:.1f} s, {transcriber.reused} reused; total {time.perf_counter() - started:.1f} s"
    )
    if scorer.runs:
        cost = stats([1000 * x for x in scorer.seconds])
        progress(
            f"acoustic turn model: {scorer.runs} calls, {scorer.reused} reused; per call p50 {cost['p50']} ms, "
            f"p95 {cost['p95']} ms, max {cost['max']} ms (wall clock, this machine)"
        )
    noise = args.noise_dbfs if args.noise_dbfs < 0 else None
    if args.plot is not None:
        from bench.eot_plot import plot

        title = f"end of turn: {sizes} utterances, {asr}"
        plot(summary_rows(results), args.plot, title)
        progress(f"wrote {args.plot}")
    if args.json:
        document = {
            "utterances": {s: len(us) for s, us in sets.items()},
            "asr_latency_ms": args.asr_latency_ms,
            "asr_latency_file": None if args.asr_latency is None else str(args.asr_latency),
            "dev_noise_dbfs": noise,
            "policies": {r.policy.name: result_json(r) for r in results},
        }
        print(json.dumps(document, indent=2))
    else:
        from bench.eot_call import format_groups

        blocks = [
            format_table(r) + "\n" + format_groups(r) + ("\n" + format_cutoffs(r) if args.list_cutoffs else "")
            for r in results
        ]
        print(
            f"end of turn: {sizes} utterances; thresholds are chosen on dev, test is only scored; {asr} "
            f"(audio time); dev noise {'none' if noise is None else f'white {noise:g} dBFS'}"
            ", test room noise 20-35 dB SNR\n"
        )
        print("\n\n".join([*blocks, format_summary(results)]))
    asr_cell = f"{args.asr_latency.name}" if args.asr_latency is not None else f"{args.asr_latency_ms} ms"
    log = test_log_lines(results, mode="offline", asr=asr_cell, load=0, note=run_note(args))
    append(log)
    if log:
        progress(f"appended {len(log)} line(s) to {LOG}")
    return 0


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
    seal(args, parser.error, uncommitted)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    policies = select_policies(args, Settings(), parser.error)
    if args.live:
        from bench.eot_live import check_arguments, run_live

        check_arguments(args, policies, parser.error)
        return asyncio.run(run_live(args, policies))
    if args.asr_latency is not None:
        try:
            Delays.load(args.asr_latency)
        except ValueError as exc:
            parser.error(f"--asr-latency: {exc}")
    return asyncio.run(amain(args, policies))


def run_note(args: argparse.Namespace) -> str:
    """The test log's note: ``smoke`` for a run cut short, and what else narrowed the sets."""
    notes = ["smoke"] if args.limit is not None else []
    notes += [f"engine {args.engine}"] if args.engine else []
    notes += [f"renditions {args.renditions}"] if args.renditions != 3 else []
    notes += [f"languages {args.languages}"] if args.languages != "en" else []
    return ", ".join(notes)


if __name__ == "__main__":
    from bench import end_of_turn as module  # one copy of this module, whoever imports it

    sys.exit(module.main())
