"""Backchannels over a playing reply: does a real "uh-huh" interrupt the agent? (issue 10, item 3)

    python bench/backchannels.py                           # every phrase x voice x path, one table
    python bench/backchannels.py --phrases uh-huh,mm-hmm --voices piper,en-us+f3
    python bench/backchannels.py --paths ws --asr-latency-ms 150   # probe answers arrive 150 ms later
    python bench/backchannels.py --json > bc.json          # every run, with every transcript
    python bench/backchannels.py --save-wav /tmp/bc        # the caller audio as WAV files (never commit)

**The phrases** are said at run time (nothing downloaded) by the bundled Piper voice (the tests' one, at three
speeds, without sampling noise) and by espeak-ng voices (en-us, en-gb and the variants +f3, +m3, +f2 at 140 and
175 words per minute): the acknowledgements in ``BACKCHANNELS`` as people write them ("uh-huh", "mm-hmm",
"yeah", "okay"...), a few doubled ones ("yeah yeah", "okay, got it") and, as the control group, real
interruptions ("wait", "stop", "no, I meant", "hold on", "what about tomorrow"). Each is trimmed to its audible
span (``bench.turns.corpus``) and laid out as 1000 ms of silence, the phrase, 1500 ms of silence, at peak 0.7 with
white noise at -60 dBFS.

**The paths**: ``ws`` is a browser on /ws (16 kHz PCM16; no ``playback.pause`` capability); ``twilio`` is a phone
call on /twilio (the phrase band-limited to 8 kHz, G.711 mu-law encoded and decoded, 8 kHz into the front end;
the reply pauses at the caller's onset, as telephony always can). Both run the server's own pipeline in audio
time: ``CallerAudio`` with the settings' detector (webrtcvad mode 3 by default), a fresh
``agent.core.session.Session`` from ``agent.runtime.call.policies.session_config`` whose agent is playing a 20 s
reply (the greeting phrase; busy for the whole run), and the real faster-whisper model of the settings
(``agent.wiring.build_stt``: tiny.en, fit window, greedy) for every ``Transcribe`` the core asks for
("quick" probes, speculative and final ones alike). Transcripts come back ``--asr-latency-ms`` of audio
after they are asked for (default 0: as if instant; the real tiny.en takes ~100-250 ms on 2 cores).

**Columns**: ``speech`` = voiced ms of the utterance by a turn detector with the settings' hangover (ms of
detected speech, the number compared with ``BARGE_IN_MIN_MS`` = 300 and ``BACKCHANNEL_MAX_MS`` = 900), ``n``
utterances the phrase became; ``probe`` = each quick transcript as ``text@speech_ms`` (the speech ms when it
was asked for; partial audio); ``bc`` = whether ``is_backchannel`` accepts it (y/n); ``final`` = the
transcript of the whole detected utterance; ``core`` = what the session core did with the playing reply:
``passes`` (it plays on; with pause: ``paused+resumed``), ``barge-in@N`` (cleared at N ms of speech), ``+turn
'text'`` (the utterance became a turn of its own, which also clears the reply). The expected outcome is
``passes`` for acknowledgements and ``barge-in`` for the control group; the summary counts the runs that differ.
Progress goes to stderr. The default run takes a few minutes on 2 cores (~700 transcriptions of short audio;
identical audio is transcribed once).

This module changes only with the run, its command line and its tables; the caller's audio is
``bench/backchannel_audio.py``, one phrase through the session ``bench/backchannel_run.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings
from agent.core.endpointing import ACKNOWLEDGE, Acknowledgements, is_backchannel
from agent.wiring import build_detector_factory
from bench.backchannel_audio import INTERRUPTIONS
from bench.backchannel_run import Run, Transcriber, run_phrase
from bench.progress import progress
from bench.turns.voices import Voice

GREETING = "Let me read you the whole list of our opening hours for every day of the coming week."

BACKCHANNEL_PHRASES: tuple[str, ...] = (
    "uh-huh", "uh huh", "mm-hmm", "mhm", "hmm", "mm", "yeah", "yep", "yes", "yup", "okay", "ok", "right",
    "sure", "I see", "got it", "alright", "oh", "ah", "yeah yeah", "okay, got it", "right, right",
)  # fmt: skip

VOICES: tuple[Voice, ...] = (
    Voice("piper", "piper", "joe", 1.0),
    Voice("piper x0.85", "piper", "joe", 0.85),
    Voice("piper x1.2", "piper", "joe", 1.2),
    Voice("en-us 175", "espeak", "en-us", 175),
    Voice("en-gb 140", "espeak", "en-gb", 140),
    Voice("en-us+f3 175", "espeak", "en-us+f3", 175),
    Voice("en-us+m3 140", "espeak", "en-us+m3", 140),
    Voice("en-gb+f2 175", "espeak", "en-gb+f2", 175),
)
PATHS = ("ws", "twilio")


# --- output ---------------------------------------------------------------------------------------------


def _yn(value: bool) -> str:
    return "y" if value else "n"


def format_table(runs: Sequence[Run]) -> str:
    probe, final = "probe (text@speech ms, bc)", "final (bc)"
    header = f"{'phrase':<20}{'voice':<14}{'path':<7}{'speech':>8} {probe:<44}{final:<28}core"
    lines = [header, "-" * len(header)]
    for r in runs:
        speech = "+".join(str(s) for s in r.speech_ms) or "-"
        probes = "; ".join(f"{t!r}@{s} {_yn(b)}" for s, t, b, _ in r.probes) or "-"
        finals = "; ".join(f"{t!r} {_yn(is_backchannel(t, language='en'))}" for t in r.finals) or "-"
        mark = "  <-- WRONG" if r.wrong else ""
        lines.append(f"{r.phrase:<20}{r.voice:<14}{r.path:<7}{speech:>8} {probes:<44}{finals:<28}{r.core}{mark}")
    return "\n".join(lines)


def format_summary(runs: Sequence[Run]) -> str:
    acks = [r for r in runs if not r.control]
    controls = [r for r in runs if r.control]
    lines = ["summary:"]
    for path in sorted({r.path for r in runs}):
        a = [r for r in acks if r.path == path]
        c = [r for r in controls if r.path == path]
        speech = [s for r in a for s in r.speech_ms]
        lines.append(
            f"  {path:<7} acknowledgements interrupting: {sum(r.interrupted for r in a)}/{len(a)}"
            f" (barge-in {sum(r.barge_in_at is not None for r in a)}, own turn {sum(bool(r.turns) for r in a)});"
            f" interruptions missed: {sum(not r.interrupted for r in c)}/{len(c)};"
            f" ack speech ms p50/max {np.percentile(speech, 50):.0f}/{max(speech)}"
            f" (>=300: {sum(s >= 300 for s in speech)}, >=900: {sum(s >= 900 for s in speech)} of {len(speech)})"
            if speech
            else f"  {path}: no acknowledgement runs"
        )
    probes = [p for r in acks for p in r.probes]
    if probes:
        rejected = sorted({t for _, t, b, _ in probes if not b})
        lines.append(f"  ack probes rejected by is_backchannel: {sum(not b for *_, b, _ in probes)}/{len(probes)}")
        lines.append(f"    texts: {rejected}")
        took = [ms for *_, ms in probes]
        lines.append(f"  probe ASR time ms (first run of each audio) p50/max: {np.median(took):.0f}/{max(took):.0f}")
    return "\n".join(lines)


def use_endpointing_from(rev: str) -> None:
    """Judge backchannels with ``agent/core/endpointing.py`` as it was at git revision ``rev`` (before/after
    tables under the same VAD and ASR): its ``is_backchannel`` replaces the current one in the core and here."""
    import subprocess
    import types

    import agent.core.listening
    import agent.core.session
    import bench.backchannel_run

    source = subprocess.run(
        ["git", "show", f"{rev}:agent/core/endpointing.py"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = sys.modules["bench_endpointing_then"] = types.ModuleType("bench_endpointing_then")
    exec(compile(source, f"{rev}:agent/core/endpointing.py", "exec"), module.__dict__)
    then = module.__dict__["is_backchannel"]
    if "Acknowledgements" in module.__dict__:
        old = then
    else:  # before the switch: one list was both the switch (empty: off) and English's table

        def old(text: str, acks: Acknowledgements = ACKNOWLEDGE, *, language: str) -> bool:
            phrases = (*module.__dict__["BACKCHANNELS"], *acks.extra) if acks.on else ()
            return bool(then(text, phrases, language=language))

    globals()["is_backchannel"] = old
    agent.core.listening.is_backchannel = old  # type: ignore[attr-defined]
    agent.core.session.is_backchannel = old  # type: ignore[attr-defined]
    bench.backchannel_run.is_backchannel = old  # type: ignore[attr-defined]


# --- main -----------------------------------------------------------------------------------------------


def _pick(value: str | None, known: Sequence[str]) -> list[str]:
    if value is None:
        return list(known)
    return [v.strip() for v in value.split("|" if "|" in value else ",") if v.strip()]


async def main_async(args: argparse.Namespace) -> int:
    if args.endpointing_from:
        use_endpointing_from(args.endpointing_from)
    settings = Settings()
    turn: dict[str, Any] = {"greeting_text": GREETING}
    if args.barge_in_min_ms is not None:
        turn["barge_in_min_ms"] = args.barge_in_min_ms
    if args.backchannel_max_ms is not None:
        turn["backchannel_max_ms"] = args.backchannel_max_ms
    settings = settings.model_copy(update={"turn": settings.turn.model_copy(update=turn)})
    phrases = _pick(args.phrases, [*BACKCHANNEL_PHRASES, *INTERRUPTIONS])
    by_label = {v.label: v for v in VOICES} | {v.name: v for v in reversed(VOICES)}
    voice_names = _pick(args.voices, [v.label for v in VOICES])
    unknown = [v for v in voice_names if v not in by_label]
    if unknown:
        raise SystemExit(f"unknown voice(s) {unknown}; known: {[v.label for v in VOICES]}")
    voices = [by_label[v] for v in voice_names]
    paths = _pick(args.paths, PATHS)
    if any(p not in PATHS for p in paths):
        raise SystemExit(f"paths are {PATHS}")
    new_detector = build_detector_factory(settings)
    transcriber = Transcriber(settings)
    started = time.perf_counter()
    runs: list[Run] = []
    try:
        total = len(phrases) * len(voices) * len(paths)
        for phrase in phrases:
            for voice in voices:
                for path in paths:
                    progress(f"[{len(runs) + 1}/{total}] {phrase!r} {voice.label} {path}")
                    runs.append(
                        await run_phrase(
                            phrase,
                            voice,
                            path,
                            settings,
                            new_detector,
                            transcriber,
                            args.asr_latency_ms,
                            args.save_wav,
                            args.probe_lead_ms,
                        )
                    )
    finally:
        transcriber.close()
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps([asdict(r) | {"core": r.core, "wrong": r.wrong} for r in runs], indent=1))
        return 0
    b = settings.turn
    print(
        f"backchannels over a playing reply: barge-in min {b.barge_in_min_ms} ms, backchannel max "
        f"{b.backchannel_max_ms} ms, vad {settings.vad.backend} mode {settings.vad.webrtc_mode} onset "
        f"{settings.vad.onset_ms} ms, hangover {settings.vad.hangover_ms} ms, tail floor "
        f"{getattr(settings.vad, 'tail_floor_db', 0)} dB, ASR latency {args.asr_latency_ms} ms"
        + (f", probe lead {args.probe_lead_ms} ms" if args.probe_lead_ms is not None else "")
        + (f", is_backchannel of {args.endpointing_from}" if args.endpointing_from else "")
    )
    print(format_table(runs))
    print(format_summary(runs))
    print(f"  {len(runs)} runs, {transcriber.runs} transcriptions, {elapsed:.0f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Say acknowledgements and interruptions over a playing reply, through the server's VAD, session "
        "core and ASR in audio time; print what each became.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"phrases: {', '.join(BACKCHANNEL_PHRASES + INTERRUPTIONS)}\n"
        f"voices: {', '.join(v.label for v in VOICES)}",
    )
    parser.add_argument("--phrases", help="comma-separated phrases, or |-separated when one has a comma (default: all)")
    parser.add_argument("--voices", help="comma-separated voice labels (default: all)")
    parser.add_argument("--paths", help="ws, twilio or both (default)")
    parser.add_argument("--asr-latency-ms", type=int, default=0, help="audio ms before a transcript comes back (0)")
    parser.add_argument("--barge-in-min-ms", type=int, help="override AGENT_TURN__BARGE_IN_MIN_MS")
    parser.add_argument("--backchannel-max-ms", type=int, help="override AGENT_TURN__BACKCHANNEL_MAX_MS")
    parser.add_argument("--probe-lead-ms", type=int, help="override BargeInPolicy.probe_lead_ms (120)")
    parser.add_argument("--endpointing-from", metavar="REV", help="judge with is_backchannel as of git REV")
    parser.add_argument("--json", action="store_true", help="every run as JSON instead of the table")
    parser.add_argument("--save-wav", type=Path, help="also write each caller audio as WAV here")
    args = parser.parse_args(argv)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
