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
or ``--policy``; every such run, offline or live, appends a line to ``docs/eot-test-log.md``. The sets share no
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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, ValidationError

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings
from agent.core.events import (
    CancelTranscription,
    Effect,
    Event,
    Notify,
    ScoreTurn,
    ScoreWords,
    SpeechStopped,
    Transcribe,
    TranscriptReady,
    TurnScored,
)
from agent.core.session import Session
from agent.ports import SpeechDetector
from agent.runtime.call.caller_audio import CallerAudio
from agent.runtime.call.policies import session_config
from agent.wiring import build_detector_factory
from bench.eot_corpus import CATEGORIES, PAUSED, RATE, SPLITS, VOICES, Split, Utterance, build, plan
from bench.eot_delays import Delays, Kind
from bench.eot_models import Transcriber, TurnScorer, progress
from bench.eot_seal import LOG, append, seal, test_log_lines

OUTPUT_RATE = 24000
CHUNK_BYTES = RATE * 20 // 1000 * 2  # 20 ms of caller audio per push, as a browser sends it

DEFAULT_POLICIES: dict[str, dict[str, Any]] = {
    "current": {},
    "text_only": {"turn": {"acoustic": "off"}},
    "rules_sound": {"turn": {"text_model": "off"}},
    "fixed420": {
        "turn": {
            "acoustic": "off",
            "text_model": "off",
            "hangover_min_ms": 420,
            "hangover_max_ms": 420,
            "fragment_words": 0,
            "fragment_numbers": False,
        },
        "vad": {"hangover_ms": 420},
    },
    "sure_fragments": {"turn": {"acoustic_sure_fragments": True}},
    "sure90": {"turn": {"acoustic_sure": 0.9}},
    "unsure40": {"turn": {"acoustic_unsure": 0.4}},
    "wait1500": {"turn": {"acoustic_unsure": 0.4, "acoustic_unsure_ms": 1500}},
    "max1200": {"turn": {"hangover_max_ms": 1200}},
}


# --- policies -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    overrides: dict[str, Any]
    settings: Settings

    def describe(self) -> str:
        vad, turn = self.settings.vad, self.settings.turn
        detector = f"webrtc mode {vad.webrtc_mode}" if vad.backend == "webrtc" else f"silero >= {vad.threshold:g}"
        if self.settings.speculative_ms:
            hangover = (
                f"speculative transcript after {self.settings.speculative_ms} ms, hangover min/default/max "
                f"{turn.hangover_min_ms}/{vad.hangover_ms}/{turn.hangover_max_ms} ms"
            )
        else:
            hangover = f"no speculative transcript, one hangover of {vad.hangover_ms} ms"
        fragments = (
            f"fragments (<= {turn.fragment_words} words{' or a number' if turn.fragment_numbers else ''}) "
            f"{turn.fragment_ms or turn.hangover_max_ms} ms"
        )
        acoustic = (
            f"acoustic {turn.acoustic} (sure >= {turn.acoustic_sure:g}, unsure < {turn.acoustic_unsure:g})"
            if turn.acoustic != "off" and self.settings.speculative_ms
            else "acoustic off"
        )
        return (
            f"{hangover}, {fragments}, {acoustic}, vad {detector}, onset {vad.onset_ms} ms, "
            f"tail floor {vad.tail_floor_db:g} dB"
        )


def with_overrides(base: Settings, overrides: dict[str, Any]) -> Settings:
    """``base`` with ``overrides`` (``{"section": {"field": value}}``) applied and validated.

    Raises ``ValueError`` for an unknown section or field (``Settings`` itself ignores unknown keys, which
    would turn a typo into a silent no-op) and for values ``Settings`` rejects.
    """
    merged = base.model_dump()
    for section, values in overrides.items():
        current = getattr(base, section, None)
        if section not in Settings.model_fields:
            raise ValueError(f"unknown settings section {section!r}")
        if isinstance(current, BaseModel):
            if not isinstance(values, dict):
                raise ValueError(f"settings section {section!r} takes an object of fields")
            unknown = sorted(set(values) - set(type(current).model_fields))
            if unknown:
                raise ValueError(f"unknown field(s) in {section!r}: {', '.join(unknown)}")
            merged[section] = {**merged[section], **values}
        else:
            merged[section] = values
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise ValueError(str(exc)) from exc


def parse_policy(value: str) -> tuple[str, dict[str, Any]]:
    """``--policy NAME=JSON``."""
    name, sep, text = value.partition("=")
    name = name.strip()
    if not sep or not name or "," in name:
        raise argparse.ArgumentTypeError('expected NAME=JSON, e.g. \'short={"turn":{"hangover_min_ms":250}}\'')
    try:
        overrides = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"policy {name}: not JSON: {exc}") from exc
    if not isinstance(overrides, dict):
        raise argparse.ArgumentTypeError(f"policy {name}: expected a JSON object")
    return name, overrides


def acoustic_on(settings: Settings) -> bool:
    """Whether the core will ask for sound scores under ``settings`` (with each speculative transcript)."""
    return settings.turn.acoustic != "off" and bool(settings.speculative_ms)


# --- one utterance through the pipeline -----------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    utterance: Utterance
    ends: list[int] = field(default_factory=list)
    """Where each end of turn (``Notify(SpeechStopped)``) came, ms of audio pushed; the first is *the* end."""
    transcripts: list[str] = field(default_factory=list)
    """Transcripts the core asked for (speculative, final, quick), in order."""
    answered: str | None = None
    """The transcript the first turn was answered with: its final transcript, or the speculative one reused."""
    scores: list[tuple[int, float]] = field(default_factory=list)
    """Sound scores the core asked for: (ms of audio pushed, probability the caller has finished)."""
    words: list[tuple[int, float | None]] = field(default_factory=list)
    """Words' scores the core asked for: (ms of audio pushed, the text model's probability; ``None``: none)."""

    @property
    def end_ms(self) -> int | None:
        return self.ends[0] if self.ends else None

    @property
    def cut_off(self) -> bool:
        return self.end_ms is not None and self.end_ms < self.utterance.audible_end_ms

    @property
    def split(self) -> bool:
        return len(self.ends) > 1

    @property
    def latency_ms(self) -> float | None:
        if self.end_ms is None or self.cut_off:
            return None
        return self.end_ms - self.utterance.audible_end_ms

    @property
    def where(self) -> str:
        return "no end" if self.end_ms is None else self.utterance.where(self.end_ms)

    def as_json(self) -> dict[str, Any]:
        latency = self.latency_ms
        return {
            **self.utterance.describe(),
            "end_ms": self.end_ms,
            "ends_ms": self.ends,
            "cut_off": self.cut_off,
            "turns": len(self.ends),
            "split": self.split,
            "ended_in": self.where,
            "latency_ms": None if latency is None else round(latency, 1),
            "answered": self.answered,
            "transcripts": self.transcripts,
            "turn_scores": [[at, round(p, 3)] for at, p in self.scores],
        }


class Scored(Protocol):
    """What the tables read of one utterance's result: ``Outcome`` here, ``eot_call.LiveOutcome`` live."""

    @property
    def utterance(self) -> Utterance: ...
    @property
    def ends(self) -> Sequence[float]: ...
    @property
    def end_ms(self) -> float | None: ...
    @property
    def cut_off(self) -> bool: ...
    @property
    def split(self) -> bool: ...
    @property
    def latency_ms(self) -> float | None: ...
    @property
    def answered(self) -> str | None: ...
    @property
    def transcripts(self) -> list[str]: ...
    @property
    def scores(self) -> list[tuple[int, float]]: ...
    @property
    def where(self) -> str: ...
    def as_json(self) -> dict[str, Any]: ...


def caller_audio(settings: Settings, new_detector: Callable[[], SpeechDetector]) -> CallerAudio:
    """The VAD front end as a connection builds it (16 kHz input, so no resampling; no echo gate: the agent never
    speaks here)."""
    vad = settings.vad
    return CallerAudio(RATE, new_detector(), vad.threshold, vad.tail_floor_db, None, vad.tail_over_noise_db)


async def run_utterance(
    utterance: Utterance,
    settings: Settings,
    new_detector: Callable[[], SpeechDetector],
    transcriber: Transcriber,
    scorer: TurnScorer,
    latency_ms: int | Callable[[Kind], int] = 0,
) -> Outcome:
    """Stream ``utterance`` through a fresh VAD and session core, carrying out the effects the end of turn
        depends on, until a turn ends after the audible end (or the audio runs out).

        ``new_detector`` is ``agent.wiring.build_detector_factory(settings)``, made once per policy (the Silero
        model loads once there). Answers go back ``latency_ms`` of audio after they were asked for (0: at once; a
    function: a delay drawn for each, ``eot_delays.Delays.for_utterance``)."""
    session = Session(session_config(settings, OUTPUT_RATE))
    audio = caller_audio(settings, new_detector)
    outcome = Outcome(utterance)
    position = 0  # ms of audio pushed
    due: dict[int, tuple[int, Event]] = {}  # request -> (position it is delivered at, the answer)
    latest: str | None = None  # the latest transcript asked for that could answer a turn

    async def settle(effects: list[Effect]) -> None:
        nonlocal latest
        queue = deque(effects)
        now = position / 1000
        scoring: dict[int, asyncio.Future[float]] = {}

        def score_ahead() -> None:
            """Start the sound scores waiting in the queue, in a thread beside the transcription (another core)."""
            for e in queue:
                if isinstance(e, ScoreTurn) and e.request not in scoring:
                    scoring[e.request] = asyncio.ensure_future(asyncio.to_thread(scorer.probability, settings, e.pcm))

        def answer(request: int, event: Event, kind: Kind = "asr") -> None:
            delay = latency_ms(kind) if callable(latency_ms) else latency_ms
            if delay:
                due[request] = (position + delay, event)
            else:
                queue.extend(session.handle(event, now))

        while queue:
            effect = queue.popleft()
            match effect:
                case Notify(event=SpeechStopped()):
                    outcome.ends.append(position)
                    if len(outcome.ends) == 1:
                        outcome.answered = latest
                case Transcribe():
                    score_ahead()
                    text = await transcriber.text(settings, effect.pcm, effect.over_agent)
                    outcome.transcripts.append(text)
                    if effect.purpose != "quick":
                        latest = text
                    answer(effect.request, TranscriptReady(effect.request, text))
                case ScoreTurn():
                    ahead = scoring.pop(effect.request, None)
                    p = await ahead if ahead is not None else scorer.probability(settings, effect.pcm)
                    outcome.scores.append((position, p))
                    answer(effect.request, TurnScored(effect.request, p), "score")
                case ScoreWords():
                    words = scorer.words(settings, effect.text, effect.language)
                    outcome.words.append((position, words))
                    answer(effect.request, TurnScored(effect.request, words), "words")
                case CancelTranscription():
                    due.pop(effect.request, None)
                case _:
                    pass  # replies, notices: the agent stays silent here

    pcm = utterance.pcm
    for offset in range(0, len(pcm), CHUNK_BYTES):
        for frame in audio.push(pcm[offset : offset + CHUNK_BYTES]):
            position += frame.duration_ms
            effects = session.handle(frame, position / 1000)
            for request, (at, event) in sorted(due.items(), key=lambda item: item[1][0]):
                if at <= position and request in due:
                    del due[request]
                    effects += session.handle(event, position / 1000)
            await settle(effects)
            if outcome.ends and outcome.ends[-1] >= utterance.audible_end_ms:
                return outcome  # nothing more is said
    return outcome


# --- results ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class SetResult:
    split: Split
    outcomes: Sequence[Scored]
    elapsed_s: float


@dataclass(slots=True)
class PolicyResult:
    policy: Policy
    sets: dict[Split, SetResult]


def stats(values: Sequence[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    arr = np.asarray(values, dtype=np.float64)
    return {
        "n": len(values),
        "p50": round(float(np.percentile(arr, 50)), 1),
        "p95": round(float(np.percentile(arr, 95)), 1),
        "max": round(float(np.max(arr)), 1),
    }


FILLERS = frozenset(["um", "uh", "umm", "uhm", "hmm", "er", "erm"])


def _words(text: str) -> list[str]:
    return [w for w in re.sub(r"[^\w' ]+|_", " ", text.lower()).split() if w not in FILLERS]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(substitutions + deletions + insertions, reference words), fillers left out of both sides."""
    ref, hyp = _words(reference), _words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (word != other))
    return row[-1], len(ref)


def summary(outcomes: Sequence[Scored]) -> dict[str, Any]:
    """The metrics of a group of utterances (see the module doc)."""
    cut = sum(o.cut_off for o in outcomes)
    errors = [
        word_errors(o.utterance.text, o.answered)
        for o in outcomes
        if not o.cut_off and o.answered is not None and o.utterance.text.strip()  # recordings with no transcript
    ]
    words = sum(n for _, n in errors)
    return {
        "utterances": len(outcomes),
        "cut_offs": cut,
        "cut_off_rate": round(cut / len(outcomes), 4) if outcomes else None,
        "splits": sum(o.split for o in outcomes),
        "no_end": sum(o.end_ms is None for o in outcomes),
        "latency_ms": stats([lat for o in outcomes if (lat := o.latency_ms) is not None]),
        "word_error_rate": round(sum(e for e, _ in errors) / words, 4) if words else None,
    }


def summarize(outcomes: Sequence[Scored]) -> dict[str, Any]:
    """``summary`` of all the utterances, of each category, and of the paused ones (breath and thinking, where
    splits count)."""
    by_category = {c: [o for o in outcomes if o.utterance.category == c] for c in CATEGORIES}
    return {
        "all": summary(outcomes),
        "paused": summary([o for o in outcomes if o.utterance.category in PAUSED]),
        "categories": {c: summary(group) for c, group in by_category.items() if group},
    }


def _pct(count: int, total: int) -> str:
    return f"{count} ({100 * count / total:.1f}%)" if total else "-"


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _ms(value: float | int | None, width: int = 6) -> str:
    return f"{'-' if value is None else f'{value:.0f}':>{width}}"


_CELL = f"{'n':>4} {'false cut-offs':<15}{'splits':>7}{'p50':>6}{'p95':>6}{'WER':>7}"
_CELL_WIDTH = len(_CELL)


def _cell(s: dict[str, Any] | None) -> str:
    if s is None:
        return " " * _CELL_WIDTH
    lat = s["latency_ms"]
    return (
        f"{s['utterances']:>4} {_pct(s['cut_offs'], s['utterances']):<15}{s['splits']:>7}"
        f"{_ms(lat['p50'])}{_ms(lat['p95'])}{_rate(s['word_error_rate']):>7}"
    )


def format_table(result: PolicyResult) -> str:
    """One policy: a row per category (and all), one block of columns per set, side by side."""
    overrides = json.dumps(result.policy.overrides) if result.policy.overrides else "(none)"
    splits = list(result.sets)
    sums = {s: summarize(result.sets[s].outcomes) for s in splits}
    elapsed = ", ".join(f"{s} {result.sets[s].elapsed_s:.1f} s" for s in splits)
    lines = [
        f"policy {result.policy.name}: {result.policy.describe()}",
        f"  overrides: {overrides}   run: {elapsed}",
        f"  {'':<10}" + "   ".join(f"{f' {s} ':-^{_CELL_WIDTH}}" for s in splits),
        f"  {'category':<10}" + "   ".join(_CELL for _ in splits),
    ]
    for name in [*CATEGORIES, "all"]:
        cells = [sums[s]["all"] if name == "all" else sums[s]["categories"].get(name) for s in splits]
        if any(cells):
            lines.append(f"  {name:<10}" + "   ".join(_cell(c) for c in cells))
    lines.append("  latency ms: audible end -> end of turn, over utterances not cut off; splits: > 1 turn")
    return "\n".join(lines)


def format_cutoffs(result: PolicyResult) -> str:
    lines = [f"policy {result.policy.name}: false cut-offs, splits and turns with no end"]
    for s in result.sets.values():
        for o in s.outcomes:
            if o.cut_off or o.split or o.end_ms is None:
                u = o.utterance
                heard = " / ".join(repr(t) for t in o.transcripts) or "-"
                if o.scores:
                    heard += "  sound: " + ", ".join(f"{p:.2f}@{at}" for at, p in o.scores)
                words = getattr(o, "words", [])
                if words:
                    heard += "  words: " + ", ".join("-" if p is None else f"{p:.3f}@{at}" for at, p in words)
                lines.append(
                    f"  {u.id} {u.category:<9} {u.voice:<24} ended {o.ends or 'never'} ms ({o.where}; audible end "
                    f"{u.audible_end_ms:.0f} ms; {u.noise})  {u.text!r}  heard: {heard}"
                )
    return "\n".join(lines)


def summary_rows(results: Sequence[PolicyResult]) -> list[dict[str, Any]]:
    """One row per policy per set: the numbers of the summary table and the plot."""
    rows = []
    for r in results:
        for split, s in r.sets.items():
            sums = summarize(s.outcomes)
            every, paused = sums["all"], sums["paused"]
            thinking = sums["categories"].get("thinking")
            short = sums["categories"].get("short")
            rows.append(
                {
                    "policy": r.policy.name,
                    "split": split,
                    "utterances": every["utterances"],
                    "cut_offs": every["cut_offs"],
                    "cut_off_rate": every["cut_off_rate"],
                    "splits": paused["splits"],
                    "paused": paused["utterances"],
                    "thinking_cut_offs": thinking["cut_offs"] if thinking else None,
                    "thinking": thinking["utterances"] if thinking else 0,
                    "latency_ms": every["latency_ms"],
                    "short_latency_ms": short["latency_ms"] if short else stats([]),
                    "no_end": every["no_end"],
                    "word_error_rate": every["word_error_rate"],
                }
            )
    return rows


def format_summary(results: Sequence[PolicyResult]) -> str:
    lines = [
        "summary: false cut-offs at each policy's latency (audible end -> end of turn, over turns not cut off); "
        "splits over breath + thinking; WER of the transcripts turns were answered with, fillers left out",
        f"  {'policy':<16}{'set':<6}{'false cut-offs':<16}{'splits':>8}{'thinking':>10}"
        f"{'latency p50':>13}{'p95':>6}{'max':>6}{'short p50':>11}{'p95':>6}{'no end':>8}{'WER':>7}",
    ]
    for row in summary_rows(results):
        lat, short = row["latency_ms"], row["short_latency_ms"]
        thinking = f"{row['thinking_cut_offs']}/{row['thinking']}" if row["thinking"] else "-"
        lines.append(
            f"  {row['policy']:<16}{row['split']:<6}{_pct(row['cut_offs'], row['utterances']):<16}"
            f"{row['splits']:>4}/{row['paused']:<3}{thinking:>10}{_ms(lat['p50'], 13)}{_ms(lat['p95'])}"
            f"{_ms(lat['max'])}{_ms(short['p50'], 11)}{_ms(short['p95'])}{row['no_end']:>8}"
            f"{_rate(row['word_error_rate']):>7}"
        )
    return "\n".join(lines)


def result_json(result: PolicyResult) -> dict[str, Any]:
    settings = result.policy.settings
    return {
        "overrides": result.policy.overrides,
        "settings": {"vad": settings.vad.model_dump(), "turn": settings.turn.model_dump(mode="json")},
        "sets": {
            split: {
                "elapsed_s": round(s.elapsed_s, 2),
                **summarize(s.outcomes),
                "utterances": [o.as_json() for o in s.outcomes],
            }
            for split, s in result.sets.items()
        },
    }


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


def chosen_splits(value: str) -> tuple[Split, ...]:
    return SPLITS if value == "both" else tuple(s for s in SPLITS if s == value)


def make_sets(args: argparse.Namespace, pool: ThreadPoolExecutor) -> dict[Split, list[Future[Utterance]]]:
    """The chosen sets, made one utterance at a time in ``pool`` (one thread), in order, while the first policy
    is run on those already made (the speech engines and the models of the run share no state)."""
    noise = args.noise_dbfs if args.noise_dbfs < 0 else None
    languages = tuple(c.strip() for c in args.languages.split(",") if c.strip())
    sets: dict[Split, list[Future[Utterance]]] = {}
    synthetic = tuple(c for c in languages if c in ("en", "de"))  # the languages eot_corpus has sentences in
    for split in chosen_splits(args.split):
        plans = [p for p in plan(split, args.renditions, synthetic) if args.engine in (None, p.voice.engine)]
        sets[split] = [
            pool.submit(build, item, noise)
            for language in synthetic
            for item in [p for p in plans if p.language == language][: args.limit]
        ]
        if args.engine is None:
            found = recorded_utterances(split, languages)
            sets[split] += [_done(u) for c in languages for u in [u for u in found if u.language == c][: args.limit]]
    return sets


def _done(u: Utterance) -> Future[Utterance]:
    future: Future[Utterance] = Future()
    future.set_result(u)
    return future


def recorded_utterances(split: Split, languages: tuple[str, ...]) -> list[Utterance]:
    """The recorded human utterances of ``split`` (``bench/eot_recorded.py``), none where it is missing."""
    try:
        from bench.eot_recorded import recorded  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return []
    found: list[Utterance] = recorded(split, progress=progress, languages=languages)
    return found


def save_wav(directory: Path, sets: dict[Split, list[Utterance]]) -> None:
    from agent.audio.wav import write_wav

    directory.mkdir(parents=True, exist_ok=True)
    for utterances in sets.values():
        for u in utterances:
            write_wav(directory / f"{u.id}.wav", u.pcm, RATE)
    index = json.dumps([u.describe() for us in sets.values() for u in us], indent=2)
    (directory / "index.json").write_text(index, encoding="utf-8")
    progress(f"wrote the sets to {directory}")


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
    seal(args, parser.error)
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
