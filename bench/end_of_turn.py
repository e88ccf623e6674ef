"""End-of-turn benchmark: false cut-offs and end-of-turn latency per policy, on a spoken test set.

    python bench/end_of_turn.py                          # 87 utterances x 5 policies, tables on stdout
    python bench/end_of_turn.py --limit 8                # a quick look (8 utterances, every category)
    python bench/end_of_turn.py --policy 'short={"turn":{"hangover_min_ms":250}}' --only current,short
    python bench/end_of_turn.py --policy 'gate={"vad":{"tail_floor_db":20}}' --list-cutoffs
    python bench/end_of_turn.py --asr-latency-ms 150     # speculative transcripts arrive 150 ms later
    python bench/end_of_turn.py --json > eot.json        # machine-readable, with every utterance
    python bench/end_of_turn.py --save-wav /tmp/eot      # also write the test set as WAV files (never commit)
    python bench/end_of_turn.py --only current,smart     # with the acoustic turn model (Smart Turn), see below
    python bench/end_of_turn.py --engine piper           # only the utterances said by the Piper voice

**The test set** (``bench/eot_corpus.py``) is made at start-up, nothing downloaded: 24 sentences, each said by
3 voices (the bundled Piper voice at two speeds, espeak-ng en-us / en-gb / en-us+m3 / en-us+f2 at 140, 175 and
210 words per minute), 87 utterances in five categories: ``complete`` statements, ``question``s,
``internal_pause`` (a sentence cut at a comma and joined by 150–300 ms of silence) and ``thinking_pause`` (a
part ending in "um", "and", "so", "because", "like", a list item, a number or "to", 500–1000 ms of silence,
then the rest). Each has 300 ms of silence before and 2 s after, and white noise at -60 dBFS throughout
(``--noise-dbfs``). Ground truth: the *audible end* is the end of the last 10 ms frame of the final part whose
level is within 45 dB of that part's loudest frame (``bench/eot_corpus.py`` has the rule).

**The pipeline** is the server's own, driven purely in audio time (no sockets, no clock): each utterance is
cut into 20 ms chunks and fed to ``CallerAudio`` (the VAD from settings, webrtcvad by default, exactly as a
connection builds it), whose frames go to a fresh ``agent.core.session.Session`` configured by
``agent.runtime.policy.session_config``. When the core asks for a transcript (``Transcribe``), the real
faster-whisper model (``agent.wiring.build_stt``: bundled tiny.en with the settings' ASR options) transcribes
it and ``TranscriptReady`` goes back **at once in audio time**, i.e. with zero ASR latency (a real server's
speculative transcript arrives later; ``--asr-latency-ms`` delays it by that much audio). Identical audio is
transcribed once and the text reused across policies (decoding is greedy and deterministic). The turn ends at
the core's ``Notify(SpeechStopped)``; its position is the audio pushed so far.

**Per utterance**: a *false cut-off* is a turn that ended before the audible end (inside a pause, or in the
speech after it); otherwise *latency* = end of turn - audible end (the VAD's tail plus the hangover). A turn
that never ends within the audio is counted as *no end*.

**Policies** are settings overrides on top of the environment's settings (``AGENT_*``): ``current`` (as
configured), ``fixed`` (no speculative transcript, one 420 ms hangover), ``min200``, ``min250``, ``min320``
(``turn.hangover_min_ms``). ``--policy NAME=JSON`` adds one (or replaces a default of that name), JSON as
``Settings`` takes it, e.g. ``{"turn": {"hangover_min_ms": 250}, "vad": {"webrtc_mode": 2}}``.

**The acoustic turn model** (``agent.adapters.smart_turn``, installed by ``make``) joins a policy through a
bench-only ``"smart_turn"`` section of its JSON (``ModelRule``: ``combine`` and/veto/model, ``threshold``,
``looks_ms``, ``latency_ms``, ``complete_ms``, ``incomplete_ms``, and the text-only fragment rule
``fragment_words``/``fragment_number``/``fragment_ms``, which also works alone with ``"looks_ms": []``). The core
is not changed: the session gets an ``EndpointPolicy`` subclass whose ``hangover_for`` asks a per-utterance
``TurnJudge``, which scores the speculative snapshot (and, for later looks, the audio pushed since) when the
silence reaches each look. Named presets (``SMART_POLICIES``: ``smart``, ``frag3``, ``smart_frag3``,
``smartf3_700``) run only when named in ``--only``. Scores of identical audio are reused; the model's cost
per call (wall clock) goes to stderr.

**Output**: per policy a table by category (utterances, false cut-offs, latency p50/p95/max over the utterances
not cut off) and the split-turn count on the <= 300 ms internal pauses; then one summary line per policy, the
false-cut-off rate at its latency. Progress goes to stderr. The default run takes about 20 s on 2 cores (7 s
to make the test set, ~150 transcriptions; the rest of ~580 transcript requests are reused).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import re
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.config import Settings
from agent.core.endpointing import Completeness, EndpointPolicy, completeness
from agent.core.events import CancelTranscription, Effect, Notify, SpeechStopped, Transcribe, TranscriptReady
from agent.core.session import Session
from agent.ports import SpeechDetector, SpeechToText
from agent.runtime.frontend import CallerAudio
from agent.runtime.policy import session_config
from agent.scheduling import JobInfo, Work
from agent.wiring import build_detector_factory, build_stt
from bench.eot_corpus import CATEGORIES, INTERNAL_PAUSES_MS, RATE, Utterance, corpus, plan

OUTPUT_RATE = 24000
CHUNK_BYTES = RATE * 20 // 1000 * 2  # 20 ms of caller audio per push, as a browser sends it

DEFAULT_POLICIES: dict[str, dict[str, Any]] = {
    "current": {},
    "fixed": {"turn": {"speculative_ms": 0}, "vad": {"hangover_ms": 420}},
    "min200": {"turn": {"hangover_min_ms": 200}},
    "min250": {"turn": {"hangover_min_ms": 250}},
    "min320": {"turn": {"hangover_min_ms": 320}},
}


SMART_KEY = "smart_turn"
"""A policy's bench-only section: how the acoustic turn model joins the decision (``ModelRule``)."""

# Named, but run only when asked for (--only, or --policy with the same name): they load Smart Turn.
SMART_POLICIES: dict[str, dict[str, Any]] = {
    "smart": {SMART_KEY: {}},
    "frag3": {SMART_KEY: {"looks_ms": [], "fragment_words": 3, "fragment_number": True}},
    "smart_frag3": {SMART_KEY: {"fragment_words": 3, "fragment_number": True}},
    "smartf3_700": {SMART_KEY: {"fragment_words": 3, "fragment_number": True, "incomplete_ms": 700}},
}


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# --- policies -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelRule:
    """How the acoustic turn-completion model (``agent.adapters.smart_turn``) joins the end-of-turn decision.

    The model is run at ``looks_ms`` of trailing silence (the first normally the speculative point), on the
    utterance audio so far (the speculative snapshot: pre-roll, speech, silence); its answer counts
    ``latency_ms`` of audio later. A look with probability >= ``threshold`` says "complete".

    ``combine``: ``and``: a transcript that trails off ("and", "um", "to", a comma) waits the long hangover
    whatever the model says; otherwise the turn ends ``complete_ms`` into the silence (or at the first look that
    says complete, if later), and if no look says complete, after ``incomplete_ms``. ``veto``: the transcript rule
    as configured, except that a transcript rule's short hangover (complete sentence) needs a look that says
    complete, else the turn waits for a later one or ``incomplete_ms``. ``model``: the model alone (the transcript
    is ignored). ``fragment_words``/``fragment_number`` (any combine, also without a model: ``looks_ms`` empty):
    a transcript of at most that many words, or ending in a number, waits ``fragment_ms`` instead of its
    transcript hangover (the cheap text-only rule).
    """

    combine: str = "and"
    threshold: float = 0.5
    looks_ms: tuple[int, ...] = (120,)
    latency_ms: int = 0
    complete_ms: int | None = None
    incomplete_ms: int | None = None
    fragment_words: int = 0
    fragment_number: bool = False
    fragment_ms: int | None = None

    @classmethod
    def parse(cls, value: Any) -> ModelRule:
        if not isinstance(value, dict):
            raise ValueError("smart_turn takes an object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(f"unknown field(s) in 'smart_turn': {', '.join(unknown)}")
        rule = cls(**{k: tuple(v) if k == "looks_ms" else v for k, v in value.items()})
        if rule.combine not in ("and", "veto", "model"):
            raise ValueError("smart_turn.combine: and, veto or model")
        return rule

    def describe(self, endpointing: EndpointPolicy) -> str:
        parts = []
        if self.looks_ms:
            looks = "/".join(str(x) for x in self.looks_ms)
            parts.append(
                f"smart turn {self.combine} p>={self.threshold:g} at {looks} ms (+{self.latency_ms} ms), "
                f"complete {self.complete_ms or endpointing.hangover_min_ms} ms, "
                f"else {self.incomplete_ms or endpointing.hangover_max_ms} ms"
            )
        if self.fragment_words or self.fragment_number:
            what = f"<= {self.fragment_words} words" if self.fragment_words else ""
            what += (" or " if what else "") + "ending in a number" if self.fragment_number else ""
            parts.append(f"fragments ({what}) {self.fragment_ms or endpointing.hangover_max_ms} ms")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    overrides: dict[str, Any]
    settings: Settings
    rule: ModelRule | None = None

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
        tail = getattr(vad, "tail_floor_db", None)
        return (
            f"{hangover}, vad {detector}, onset {vad.onset_ms} ms"
            + (f", tail floor {tail:g} dB" if tail else "")
            + f", preemption {turn.preemption}"
            + (f"; {self.rule.describe(session_config(self.settings, OUTPUT_RATE).endpointing)}" if self.rule else "")
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


# --- transcripts ----------------------------------------------------------------------------------------


class Transcriber:
    """The real ASR (one model per distinct ``asr`` settings), with transcripts of identical audio reused."""

    def __init__(self) -> None:
        self._models: dict[str, SpeechToText] = {}
        self._texts: dict[tuple[str, str], str] = {}
        self.runs = 0
        self.reused = 0
        self.seconds = 0.0

    async def text(self, settings: Settings, pcm: bytes, over_agent: bool = False) -> str:
        model_key = settings.asr.model_dump_json()
        key = (model_key, f"{hashlib.sha1(pcm).hexdigest()}:{over_agent}")
        known = self._texts.get(key)
        if known is not None:
            self.reused += 1
            return known
        model = self._models.get(model_key)
        if model is None:
            progress(f"loading the ASR model ({settings.asr.model or 'bundled tiny.en'})")
            model = self._models[model_key] = build_stt(settings)
        started = time.perf_counter()
        text = (await model.transcribe(pcm, JobInfo(Work.FINAL_TRANSCRIPT, plain=over_agent))).text
        self.seconds += time.perf_counter() - started
        self.runs += 1
        self._texts[key] = text
        return text

    def close(self) -> None:
        for model in self._models.values():
            close = getattr(model, "close", None)
            if callable(close):
                close()


# --- the acoustic turn-completion model (bench side: the core is not changed) ----------------------------


class TurnScorer:
    """Smart Turn (``agent.adapters.smart_turn``), loaded on first use; scores of identical audio reused."""

    def __init__(self) -> None:
        self._model: Any = None
        self._scores: dict[str, float] = {}
        self.runs = 0
        self.reused = 0
        self.seconds: list[float] = []

    def probability(self, pcm: bytes) -> float:
        key = hashlib.sha1(pcm).hexdigest()
        known = self._scores.get(key)
        if known is not None:
            self.reused += 1
            return known
        if self._model is None:
            from agent.adapters.smart_turn import SmartTurnModel

            progress("loading the Smart Turn model")
            self._model = SmartTurnModel()
        started = time.perf_counter()
        p = float(self._model.probability_pcm16(pcm))
        self.seconds.append(time.perf_counter() - started)
        self.runs += 1
        self._scores[key] = p
        return p


_NUMBER = re.compile(
    r"(\d[\d,.:]*|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred|thousand|million))[.!?]?$"
)


class TurnJudge:
    """One utterance's end-of-turn decision under a ``ModelRule``, asked by the core through
    ``JudgedEndpointPolicy.hangover_for`` on every frame of trailing silence.

    The bench tells it the stream position before each frame (``position_ms``) and each speculative snapshot
    (``pause``). Looks are scored when the silence reaches them, on the audio pushed by then (causal)."""

    def __init__(self, rule: ModelRule, base: EndpointPolicy, scorer: TurnScorer, pcm: bytes, outcome: Outcome):
        self.rule, self.base, self.scorer, self.pcm, self.outcome = rule, base, scorer, pcm, outcome
        self.position_ms = 0
        self._snapshot = b""
        self._spec_ms = 0
        self._scores: dict[int, float] = {}

    def pause(self, snapshot: bytes, position_ms: int) -> None:
        self._snapshot, self._spec_ms, self._scores = snapshot, position_ms, {}

    def _score(self, look_ms: int) -> float:
        p = self._scores.get(look_ms)
        if p is None:
            extra = look_ms - self.base.speculative_ms
            start = self._spec_ms * RATE // 1000 * 2
            audio = self._snapshot + self.pcm[start : start + max(extra, 0) * RATE // 1000 * 2]
            p = self._scores[look_ms] = self.scorer.probability(audio)
            self.outcome.scores.append((self._spec_ms, look_ms, round(p, 3)))
        return p

    def hangover(self, text: str, transcript_ms: int) -> int:
        rule, base = self.rule, self.base
        long_ms = rule.incomplete_ms or base.hangover_max_ms
        verdict = completeness(text, base.trailing_words)
        words = len(text.split())
        fragment = bool(rule.fragment_words and 0 < words <= rule.fragment_words) or (
            rule.fragment_number and _NUMBER.search(text.strip().lower()) is not None
        )
        if fragment and verdict is not Completeness.TRAILING:
            transcript_ms = max(transcript_ms, rule.fragment_ms or base.hangover_max_ms)
        if not rule.looks_ms:
            return transcript_ms
        if rule.combine == "and" and (verdict is Completeness.TRAILING or fragment):
            return transcript_ms
        if rule.combine == "veto" and transcript_ms > base.hangover_min_ms:
            return transcript_ms  # only the short hangover of a complete sentence needs the model's word
        silence = self.base.speculative_ms + self.position_ms - self._spec_ms
        short = base.hangover_min_ms if rule.combine == "veto" else rule.complete_ms or base.hangover_min_ms
        for look in rule.looks_ms:
            if look + rule.latency_ms > silence:
                break
            if self._score(look) >= rule.threshold:
                return max(short, look + rule.latency_ms)
        return long_ms


@dataclass(frozen=True, slots=True)
class JudgedEndpointPolicy(EndpointPolicy):
    """The core's ``EndpointPolicy`` with its hangover decided by a bench-side ``TurnJudge``."""

    judge: TurnJudge | None = None

    def hangover_for(self, text: str | None) -> int:
        transcript_ms = EndpointPolicy.hangover_for(self, text)
        if text is None or self.judge is None:
            return transcript_ms
        return self.judge.hangover(text, transcript_ms)


# --- one utterance through the pipeline -----------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    utterance: Utterance
    end_ms: int | None = None
    transcripts: list[str] = field(default_factory=list)
    """Transcripts the core asked for before the turn ended, in order."""
    scores: list[tuple[int, int, float]] = field(default_factory=list)
    """Turn-model looks: (position of the speculative snapshot, ms of silence, probability of complete)."""

    @property
    def cut_off(self) -> bool:
        return self.end_ms is not None and self.end_ms < self.utterance.audible_end_ms

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
            "cut_off": self.cut_off,
            "ended_in": self.where,
            "latency_ms": None if latency is None else round(latency, 1),
            "transcripts": self.transcripts,
            "turn_scores": [list(x) for x in self.scores],
        }


def caller_audio(settings: Settings, new_detector: Callable[[], SpeechDetector]) -> CallerAudio:
    """The VAD front end exactly as a connection builds it (16 kHz input, so no resampling)."""
    detector = new_detector()
    tail_floor = getattr(settings.vad, "tail_floor_db", None)  # newer settings: the VAD tail gate
    if tail_floor is None:
        return CallerAudio(RATE, detector, settings.vad.threshold)
    return CallerAudio(RATE, detector, settings.vad.threshold, tail_floor)


async def run_utterance(
    utterance: Utterance,
    settings: Settings,
    new_detector: Callable[[], SpeechDetector],
    transcriber: Transcriber,
    asr_latency_ms: int,
    rule: ModelRule | None = None,
    scorer: TurnScorer | None = None,
) -> Outcome:
    """Stream ``utterance`` through a fresh VAD and session core until the core ends the turn.

    ``new_detector`` is ``agent.wiring.build_detector_factory(settings)``, made once per policy (the Silero
    model loads once there)."""
    config = session_config(settings, OUTPUT_RATE)
    outcome = Outcome(utterance)
    judge = None
    if rule is not None:
        judge = TurnJudge(rule, config.endpointing, scorer or TurnScorer(), utterance.pcm, outcome)
        base = {f.name: getattr(config.endpointing, f.name) for f in fields(EndpointPolicy)}
        config = replace(config, endpointing=JudgedEndpointPolicy(**base, judge=judge))
    session = Session(config)
    audio = caller_audio(settings, new_detector)
    position = 0  # ms of audio pushed
    delayed: dict[int, tuple[int, str]] = {}  # request -> (due position, transcript)

    async def settle(effects: list[Effect]) -> bool:
        """Carry out the core's effects; True once it has ended the turn."""
        queue = deque(effects)
        while queue:
            effect = queue.popleft()
            match effect:
                case Notify(event=SpeechStopped()):
                    return True
                case Transcribe():
                    if effect.purpose == "final" and any(
                        isinstance(e, Notify) and isinstance(e.event, SpeechStopped) for e in queue
                    ):
                        continue  # the turn's own transcript: asked for as the turn ends, not needed here
                    if judge is not None and effect.purpose == "speculative":
                        judge.pause(effect.pcm, position)
                    text = await transcriber.text(settings, effect.pcm, effect.over_agent)
                    outcome.transcripts.append(text)
                    if asr_latency_ms:
                        delayed[effect.request] = (position + asr_latency_ms, text)
                    else:
                        queue.extend(session.handle(TranscriptReady(effect.request, text), position / 1000))
                case CancelTranscription():
                    delayed.pop(effect.request, None)
                case _:
                    pass  # replies, notices: no part of the end of turn
        return False

    pcm = utterance.pcm
    for offset in range(0, len(pcm), CHUNK_BYTES):
        for frame in audio.push(pcm[offset : offset + CHUNK_BYTES]):
            position += frame.duration_ms
            now = position / 1000
            if judge is not None:
                judge.position_ms = position
            effects = session.handle(frame, now)
            for request, (due, text) in sorted(delayed.items(), key=lambda item: item[1][0]):
                if due <= position and request in delayed:
                    del delayed[request]
                    effects += session.handle(TranscriptReady(request, text), now)
            if await settle(effects):
                outcome.end_ms = position
                return outcome
    return outcome


# --- results ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class PolicyResult:
    policy: Policy
    outcomes: list[Outcome]
    elapsed_s: float


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
    return [w for w in re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split() if w not in FILLERS]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(substitutions + deletions + insertions, reference words), fillers left out of both sides."""
    ref, hyp = _words(reference), _words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (word != other))
    return row[-1], len(ref)


def _summary(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    cut = sum(o.cut_off for o in outcomes)
    errors = [word_errors(o.utterance.text, o.transcripts[-1]) for o in outcomes if not o.cut_off and o.transcripts]
    words = sum(n for _, n in errors)
    return {
        "utterances": len(outcomes),
        "cut_offs": cut,
        "cut_off_rate": round(cut / len(outcomes), 4) if outcomes else None,
        "no_end": sum(o.end_ms is None for o in outcomes),
        "latency_ms": stats([lat for o in outcomes if (lat := o.latency_ms) is not None]),
        "word_error_rate": round(sum(e for e, _ in errors) / words, 4) if words else None,
    }


def summarize(result: PolicyResult) -> dict[str, Any]:
    by_category = {c: [o for o in result.outcomes if o.utterance.category == c] for c in CATEGORIES}
    internal = by_category["internal_pause"]
    return {
        "all": _summary(result.outcomes),
        "categories": {c: _summary(o) for c, o in by_category.items() if o},
        "split_turns_internal_pause": sum(o.cut_off for o in internal),
        "internal_pause_utterances": len(internal),
    }


def _pct(count: int, total: int) -> str:
    return f"{count} ({100 * count / total:.1f}%)" if total else "-"


def _rate(summary: dict[str, Any]) -> str:
    rate = summary["word_error_rate"]
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _ms(value: float | int | None, width: int = 7) -> str:
    return f"{'-' if value is None else f'{value:.0f}':>{width}}"


def format_table(result: PolicyResult) -> str:
    summary = summarize(result)
    overrides = json.dumps(result.policy.overrides) if result.policy.overrides else "(none)"
    lines = [
        f"policy {result.policy.name}: {result.policy.describe()}",
        f"  overrides: {overrides}   run: {result.elapsed_s:.1f} s",
        f"  {'category':<16}{'n':>4}  {'false cut-offs':<16}{'no end':>6}  {'latency p50':>11}{'p95':>7}{'max':>7} ms",
    ]
    for name, s in [*summary["categories"].items(), ("all", summary["all"])]:
        lat = s["latency_ms"]
        lines.append(
            f"  {name:<16}{s['utterances']:>4}  {_pct(s['cut_offs'], s['utterances']):<16}{s['no_end']:>6}  "
            f"{_ms(lat['p50'], 11)}{_ms(lat['p95'])}{_ms(lat['max'])}"
        )
    lo, hi = min(INTERNAL_PAUSES_MS), max(INTERNAL_PAUSES_MS)
    lines.append(
        f"  split turns on {lo}-{hi} ms internal pauses: {summary['split_turns_internal_pause']}"
        f" of {summary['internal_pause_utterances']}"
    )
    return "\n".join(lines)


def format_cutoffs(result: PolicyResult) -> str:
    lines = [f"policy {result.policy.name}: false cut-offs and turns with no end"]
    for o in result.outcomes:
        if o.cut_off or o.end_ms is None:
            u = o.utterance
            heard = " / ".join(repr(t) for t in o.transcripts) or "-"
            if o.scores:
                heard += "  smart turn: " + ", ".join(f"{p:.2f}@{look}" for _, look, p in o.scores)
            lines.append(
                f"  {u.id} {u.category:<15} {u.voice:<20} ended {o.end_ms} ms ({o.where}; audible end "
                f"{u.audible_end_ms:.0f} ms)  {u.text!r}  heard: {heard}"
            )
    return "\n".join(lines)


def format_summary(results: Sequence[PolicyResult]) -> str:
    lines = [
        "summary: false cut-offs at each policy's latency (audible end -> end of turn, over turns not cut off);"
        " WER: the last transcript of each turn not cut off, fillers left out",
        f"  {'policy':<12}{'false cut-offs':<16}{'split <=300 ms':>15}{'thinking':>10}"
        f"{'latency p50':>13}{'p95':>7}{'max':>7}{'no end':>8}{'WER':>8}",
    ]
    for r in results:
        s = summarize(r)
        every, lat = s["all"], s["all"]["latency_ms"]
        thinking = s["categories"].get("thinking_pause")
        split = f"{s['split_turns_internal_pause']}/{s['internal_pause_utterances']}"
        thought = f"{thinking['cut_offs']}/{thinking['utterances']}" if thinking else "-"
        lines.append(
            f"  {r.policy.name:<12}{_pct(every['cut_offs'], every['utterances']):<16}{split:>15}{thought:>10}"
            f"{_ms(lat['p50'], 13)}{_ms(lat['p95'])}{_ms(lat['max'])}{every['no_end']:>8}{_rate(every):>8}"
        )
    return "\n".join(lines)


def result_json(result: PolicyResult) -> dict[str, Any]:
    settings = result.policy.settings
    return {
        "overrides": result.policy.overrides,
        "settings": {"vad": settings.vad.model_dump(), "turn": settings.turn.model_dump(mode="json")},
        "elapsed_s": round(result.elapsed_s, 2),
        **summarize(result),
        "utterances": [o.as_json() for o in result.outcomes],
    }


# --- command line ---------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/end_of_turn.py",
        description=(
            "End-of-turn evaluation: a spoken test set (Piper and espeak-ng voices; complete sentences, "
            "questions, 150-300 ms internal pauses, 500-1000 ms thinking pauses) streamed in audio time through "
            "the real VAD, session core and faster-whisper (zero ASR latency by default). For each policy: "
            "false cut-offs (a turn ended before the audible end of the utterance) and the latency from the "
            "audible end to the end of turn."
        ),
        epilog=(
            "default policies: "
            + "; ".join(f"{name}={json.dumps(o, separators=(',', ':'))}" for name, o in DEFAULT_POLICIES.items())
            + ". Settings not overridden come from the environment (AGENT_*), as for the server."
        ),
    )
    parser.add_argument(
        "--policy",
        action="append",
        type=parse_policy,
        default=[],
        metavar="NAME=JSON",
        help="add a policy (or replace a default of that name): settings overrides as JSON, e.g. "
        '\'short={"turn":{"hangover_min_ms":250}}\'; repeatable',
    )
    parser.add_argument(
        "--only",
        default=None,
        metavar="NAME[,NAME...]",
        help="run only these policies, in this order (default: the defaults, then those added)",
    )
    parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N utterances")
    parser.add_argument(
        "--engine",
        choices=("piper", "espeak"),
        default=None,
        help="only the utterances said by this speech engine (Piper is the more natural voice)",
    )
    parser.add_argument(
        "--renditions",
        type=int,
        default=3,
        help="voices per sentence, 1-6 (default: 3, i.e. 87 utterances from 29 sentences)",
    )
    parser.add_argument(
        "--asr-latency-ms",
        type=int,
        default=0,
        help="deliver each transcript this much audio after it was asked for (default: 0, at once)",
    )
    parser.add_argument(
        "--noise-dbfs",
        type=float,
        default=-60.0,
        help="white noise level (RMS, dBFS) under the whole utterance; 0 or above = none (default: -60)",
    )
    parser.add_argument("--save-wav", type=Path, default=None, metavar="DIR", help="also write the test set here")
    parser.add_argument(
        "--list-cutoffs",
        action="store_true",
        help="after each table, list the utterances cut off (where, and the transcripts heard)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable results instead of tables")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the server's INFO log on stderr")
    return parser


def select_policies(args: argparse.Namespace, base: Settings, error: Callable[[str], Any]) -> list[Policy]:
    known: dict[str, dict[str, Any]] = {**DEFAULT_POLICIES, **SMART_POLICIES}
    for name, overrides in args.policy:
        known[name] = overrides
    default = [n for n in known if n not in SMART_POLICIES or n in dict(args.policy)]
    names = default if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    missing = [n for n in names if n not in known]
    if missing or not names:
        error(f"--only: unknown policy {', '.join(missing) or '(none given)'}; known: {', '.join(known)}")
    policies = []
    for name in dict.fromkeys(names):
        try:
            overrides = dict(known[name])
            rule = ModelRule.parse(overrides.pop(SMART_KEY)) if SMART_KEY in overrides else None
            policies.append(Policy(name, known[name], with_overrides(base, overrides), rule))
        except (ValueError, TypeError) as exc:
            error(f"policy {name}: {exc}")
    return policies


async def amain(args: argparse.Namespace, policies: list[Policy]) -> int:
    started = time.perf_counter()
    plans = [p for p in plan(args.renditions) if args.engine in (None, p.voice.engine)][: args.limit]
    noise = args.noise_dbfs if args.noise_dbfs < 0 else None
    utterances = list(corpus(plans, noise, progress))
    seconds = sum(u.duration_ms for u in utterances) / 1000
    progress(f"made {len(utterances)} utterances ({seconds:.0f} s of audio) in {time.perf_counter() - started:.1f} s")
    if args.save_wav is not None:
        from agent.audio.wav import write_wav

        args.save_wav.mkdir(parents=True, exist_ok=True)
        for u in utterances:
            write_wav(args.save_wav / f"{u.id}.wav", u.pcm, RATE)
        index = json.dumps([u.describe() for u in utterances], indent=2)
        (args.save_wav / "index.json").write_text(index, encoding="utf-8")
        progress(f"wrote the test set to {args.save_wav}")
    transcriber = Transcriber()
    scorer = TurnScorer()
    results: list[PolicyResult] = []
    try:
        for policy in policies:
            began = time.perf_counter()
            new_detector = build_detector_factory(policy.settings)
            outcomes = []
            for n, u in enumerate(utterances, 1):
                outcome = await run_utterance(
                    u, policy.settings, new_detector, transcriber, args.asr_latency_ms, policy.rule, scorer
                )
                outcomes.append(outcome)
                verdict = "CUT OFF" if outcome.cut_off else "no end" if outcome.end_ms is None else "ok"
                progress(f"policy {policy.name}: utterance {n}/{len(utterances)} {u.category}: {verdict}")
            results.append(PolicyResult(policy, outcomes, time.perf_counter() - began))
    finally:
        transcriber.close()
    progress(
        f"ASR: {transcriber.runs} transcriptions in {transcriber.seconds:.1f} s, {transcriber.reused} reused; "
        f"total {time.perf_counter() - started:.1f} s"
    )
    if scorer.runs:
        cost = stats([1000 * x for x in scorer.seconds])
        progress(
            f"Smart Turn: {scorer.runs} calls, {scorer.reused} reused; per call p50 {cost['p50']} ms, "
            f"p95 {cost['p95']} ms, max {cost['max']} ms (wall clock, this machine)"
        )
    if args.json:
        print(
            json.dumps(
                {
                    "utterances": len(utterances),
                    "asr_latency_ms": args.asr_latency_ms,
                    "noise_dbfs": noise,
                    "policies": {r.policy.name: result_json(r) for r in results},
                },
                indent=2,
            )
        )
    else:
        blocks = [format_table(r) + ("\n" + format_cutoffs(r) if args.list_cutoffs else "") for r in results]
        print(
            f"end of turn: {len(utterances)} utterances, ASR latency {args.asr_latency_ms} ms (audio time), "
            f"noise {'none' if noise is None else f'{noise:g} dBFS'}\n"
        )
        print("\n\n".join([*blocks, format_summary(results)]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if not 1 <= args.renditions <= 6:
        parser.error("--renditions must be 1..6")
    if args.asr_latency_ms < 0:
        parser.error("--asr-latency-ms must be >= 0")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    policies = select_policies(args, Settings(), parser.error)
    return asyncio.run(amain(args, policies))


if __name__ == "__main__":
    sys.exit(main())
