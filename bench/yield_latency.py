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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from websockets.asyncio.client import connect

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.audio.pcm import float_to_pcm16
from agent.audio.resample import resample
from agent.config import LlmSettings, Settings
from agent.runtime.components import Components
from agent.runtime.server.listener import RunningServer, running_server
from agent.wires.phone.twilio import codec as twilio
from agent.wiring import build_components
from bench.eot_corpus import Voice, _trimmed, speaker
from clients.audiosocket_client import AudioSocketCaller
from clients.audiosocket_client import Received as AudioSocketReceived
from clients.framing import frame_dbfs
from clients.twilio_client import TwilioCaller
from testing.emulators.openai import OpenAIEmulator
from testing.listener import MARK_EVERY_S, AudioSender, Player
from testing.speech import cough as speech_cough

RATE = 16000
PEAK = 0.8
STORY = [
    "Once upon a time, a small fox lived at the edge of a quiet forest. ",
    "Every morning she walked to the river to watch the fish jump. ",
    "One day she found a lost duckling crying under a willow tree. ",
    "The fox carried the duckling home across three wide fields. ",
    "The duck family thanked her with a song that lasted until sunset. ",
]
QUESTION = "Please tell me a long story."
TALK_OVER = "Stop. What time is it?"
PIPER = Voice("piper", "piper", "joe", 1.0)
TALK_OVER_VOICES = (PIPER, Voice("en-us+m3 175", "espeak", "en-us+m3", 175), Voice("en-gb 160", "espeak", "en-gb", 160))
UH_HUHS = (
    ("Uh-huh.", PIPER),
    ("Mm-hmm.", Voice("en-us 175", "espeak", "en-us", 175)),
    ("Yeah.", PIPER),
    ("Uh-huh.", Voice("en-us+f3 175", "espeak", "en-us+f3", 175)),
    ("Mm-hmm.", PIPER),
    ("Yeah.", Voice("en-gb 140", "espeak", "en-gb", 140)),
)
SOUNDS = ("talk-over", "cough", "uh-huh")
PATHS = ("ws", "twilio", "audiosocket")
GAP_S = 0.1
"""AudioSocket: a pause in the paced frames (20 ms apart) this long means the reply stopped."""
MODES = ("yield", "no-cap", "off")
SETTLE_S = 3.0  # after the sound: time for a resume, a barge-in or a new turn's reply to show


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else math.nan


# --- the caller's sounds ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sound:
    kind: str
    label: str
    pcm16k: bytes  # PCM16 mono at 16 kHz

    def pcm(self, rate: int) -> bytes:
        if rate == RATE:
            return self.pcm16k
        audio = np.frombuffer(self.pcm16k, dtype=np.int16).astype(np.float32) / 32768
        return float_to_pcm16(resample(audio, RATE, rate))


def spoken(text: str, voice: Voice) -> bytes:
    """``text`` said by ``voice``, trimmed to its audible span (10 ms fades), peak ``PEAK``, 16 kHz PCM16."""
    audio = _trimmed(speaker(voice, 0)(text))
    return float_to_pcm16((audio * (PEAK / max(float(np.max(np.abs(audio))), 1e-9))).astype(np.float32))


def cough() -> bytes:
    """200 ms of voice with a quick fade in and out (``testing.speech.cough``, as in the tests)."""
    return speech_cough(RATE)


def make_sounds(kind: str, trials: int) -> list[Sound]:
    """One sound per trial, rotating through the voices and phrases of ``kind``."""
    if kind == "cough":
        return [Sound(kind, "burst 200 ms", cough())] * trials
    if kind == "talk-over":
        made = [Sound(kind, f"{TALK_OVER!r} {v.label}", spoken(TALK_OVER, v)) for v in TALK_OVER_VOICES]
    else:
        made = [Sound(kind, f"{text!r} {v.label}", spoken(text, v)) for text, v in UH_HUHS]
    return [made[i % len(made)] for i in range(trials)]


@functools.lru_cache(maxsize=4)
def speech_question(rate: int) -> bytes:
    """The caller's request for a story, at ``rate``."""
    return Sound("question", QUESTION, spoken(QUESTION, PIPER)).pcm(rate)


def onset_offset_s(pcm: bytes, rate: int) -> float:
    """Seconds from the start of ``pcm`` to its first 20 ms frame above -40 dBFS."""
    frame = rate // 50 * 2
    for i in range(0, len(pcm), frame):
        if frame_dbfs(pcm[i : i + frame]) > -40:
            return i / (2 * rate)
    return 0.0


# --- one trial's result --------------------------------------------------------------------------------


@dataclass(slots=True)
class Pause:
    at: float  # when the stop arrived (monotonic)
    heard_ms: float  # what the caller had played of the turn when it arrived
    resume_ms: float | None = None  # the position the reply went on from (ws: played_ms of the pause)
    resumed_at: float | None = None  # first resumed audio received
    exact: bool | None = None  # the resumed audio is the reply's audio from resume_ms, byte for byte


@dataclass(slots=True)
class Trial:
    path: str
    mode: str
    kind: str
    sound: str
    onset: float | None = None
    pauses: list[Pause] = field(default_factory=list)
    stop_ms: float | None = None
    barge_ms: float | None = None
    barged: bool = False
    second_turn: str | None = None  # ws: transcript of turn 2
    error: str | None = None

    @property
    def resumed(self) -> bool:
        return any(p.resumed_at is not None for p in self.pauses)

    @property
    def gap_ms(self) -> float | None:
        first = next((p for p in self.pauses if p.resumed_at is not None), None)
        return None if first is None else (first.resumed_at - first.at) * 1000  # type: ignore[operator]

    @property
    def words_lost(self) -> bool:
        for p in self.pauses:
            if p.resumed_at is None or p.resume_ms is None:
                continue
            tolerance = 2.0 if self.path == "ws" else 1.0
            if p.resume_ms > p.heard_ms + tolerance or p.exact is False:
                return True
        return False

    @property
    def rewind_ms(self) -> float | None:
        first = next((p for p in self.pauses if p.resumed_at is not None and p.resume_ms is not None), None)
        return None if first is None else first.heard_ms - first.resume_ms  # type: ignore[operator]

    def as_json(self) -> dict[str, Any]:
        data = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("onset", "pauses") and v is not None}
        data["pauses"] = [
            {
                "after_onset_ms": round((p.at - self.onset) * 1000, 1) if self.onset else None,
                "heard_ms": round(p.heard_ms, 1),
                "resume_ms": p.resume_ms,
                "gap_ms": None if p.resumed_at is None else round((p.resumed_at - p.at) * 1000, 1),
                "exact": p.exact,
            }
            for p in self.pauses
        ]
        data |= {"resumed": self.resumed, "words_lost": self.words_lost, "gap_ms": self.gap_ms}
        return data

    def summary(self) -> str:
        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v:.0f}"

        if self.error:
            return f"ERROR {self.error}"
        resumed = "resumed" if self.resumed else "no resume"
        lost = " WORDS LOST" if self.words_lost else ""
        return (
            f"stop {ms(self.stop_ms)} ms, {len(self.pauses)} pause(s), {resumed} (gap {ms(self.gap_ms)}), "
            f"barge-in {'at ' + ms(self.barge_ms) + ' ms' if self.barged else 'no'}{lost}"
        )


# --- /ws ---------------------------------------------------------------------------------------------


async def ws_trial(url: str, mode: str, sound: Sound, listen_ms: int, trial: Trial) -> None:
    async with connect(url, max_size=None) as ws:
        start: dict[str, Any] = {"type": "session.start", "sample_rate": RATE}
        if mode != "no-cap":
            start["capabilities"] = ["playback.pause"]
        await ws.send(json.dumps(start))
        started = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if started.get("type") != "session.started":
            raise RuntimeError(f"session not started: {started}")
        player = Player(started["output_sample_rate"] * 2 / 1000)
        sender = AudioSender(ws.send, RATE)
        state = {"turn": 0, "cleared": False}
        transcript2 = asyncio.Event()
        current: list[Pause] = []  # the pause the resumed audio belongs to

        async def receive() -> None:
            async for message in ws:
                now = time.monotonic()
                if isinstance(message, bytes):
                    if state["turn"] != 1 or player.stopped:
                        continue
                    _, same = player.receive(message, now)
                    if current:
                        pause = current[-1]
                        if pause.resumed_at is None:
                            pause.resumed_at = now
                        pause.exact = same if pause.exact is None else pause.exact and same
                    continue
                event = json.loads(message)
                kind, turn = event.get("type"), event.get("turn")
                if kind == "audio.start":
                    state["turn"] = max(state["turn"], turn)
                elif kind == "playback.pause" and turn == 1:
                    pause = Pause(at=now, heard_ms=player.played(now), resume_ms=float(event["played_ms"]))
                    trial.pauses.append(pause)
                    current.append(pause)
                    player.pause(event["played_ms"], now)
                elif kind == "playback.clear" and turn == 1:
                    player.stopped = True
                    state["cleared"] = True
                    trial.barged = True
                    if trial.barge_ms is None and trial.onset is not None:
                        trial.barge_ms = (now - trial.onset) * 1000
                elif kind == "transcript" and turn == 2:
                    trial.barged = True
                    trial.second_turn = event.get("text", "")
                    transcript2.set()

        async def marks() -> None:
            while True:
                await asyncio.sleep(MARK_EVERY_S)
                if state["turn"] == 1 and not player.stopped and player.base_at is not None:
                    played = round(player.played(time.monotonic()))
                    await ws.send(json.dumps({"type": "playback.mark", "turn": 1, "played_ms": played}))

        tasks = [asyncio.create_task(c) for c in (sender.run(), receive(), marks())]
        try:
            sender.queue.put_nowait(bytes(RATE * 2 * 300 // 1000) + speech_question(RATE))
            deadline = time.monotonic() + 60
            while player.played(time.monotonic()) < listen_ms or state["turn"] != 1:
                if time.monotonic() > deadline or any(t.done() for t in tasks):
                    raise RuntimeError("no reply to play")
                await asyncio.sleep(0.01)
            pcm = sound.pcm(RATE)
            sender.queue.put_nowait(pcm)
            await asyncio.wait_for(sender.second.wait(), 5)
            trial.onset = sender.onsets[1] + onset_offset_s(pcm, RATE)
            settle = sender.onsets[1] + len(pcm) / (2 * RATE) + SETTLE_S - time.monotonic()
            if sound.kind == "talk-over":  # done once the new turn's transcript arrives
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(transcript2.wait(), max(0.0, settle))
            else:
                await asyncio.sleep(max(0.0, settle))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await ws.send(json.dumps({"type": "session.end"}))
    if trial.pauses:
        trial.stop_ms = (trial.pauses[0].at - trial.onset) * 1000
    elif trial.barge_ms is not None and state["cleared"]:
        trial.stop_ms = trial.barge_ms


# --- /twilio -----------------------------------------------------------------------------------------


def twilio_analyse(trial: Trial, caller: TwilioCaller) -> None:
    """What the simulated Twilio caller received, turned into pauses, resumes and the barge-in."""
    got = caller.received
    onset = trial.onset or 0.0
    clears = [c for c in got.clears if c >= onset]
    marks = [(t, twilio.parse_mark(n)) for t, n in got.marks]
    turn2 = next((t for t, m in marks if m is not None and m[0] >= 2), None)
    barge_at = None
    if turn2 is not None:  # the clear that cut turn 1 for the new turn: the last one before its reply
        barge_at = max((c for c in clears if c < turn2), default=None)
        trial.barged = True
    elif trial.mode == "off" and clears:
        barge_at = clears[0]
        trial.barged = True
    if barge_at is not None:
        trial.barge_ms = (barge_at - onset) * 1000
    if clears:
        trial.stop_ms = (clears[0] - onset) * 1000
    pauses = {c for c in clears if c != barge_at} if trial.mode != "off" else set()
    # Each media frame is followed by its mark: paired, they give each frame's position in the turn.
    paired = len(got.media_times) == len(got.marks)
    first_copy = bytearray()  # turn 1's audio as first sent (segment 0), PCM16 8 kHz from position 0
    frames: list[tuple[float, float, float]] = []  # turn 1's frames as played: (start, end, end position)
    playout = 0.0  # the caller's playout buffer runs until here
    by_segment: dict[int, Pause] = {}
    events = sorted([(t, 0, i) for i, (t, _) in enumerate(marks)] + [(c, 1, -1) for c in got.clears])
    for t, is_clear, i in events:
        if is_clear:
            started = [f for f in frames if f[0] < t]  # what had started playing; the rest is dropped
            heard = 0.0
            if started:
                start, end, position = started[-1]
                heard = position - 20 + (t - start) * 1000 if t < end else position
            frames, playout = started, t
            if t in pauses:
                pause = Pause(at=t, heard_ms=heard)
                trial.pauses.append(pause)
                by_segment[len(trial.pauses)] = pause
            continue
        parsed = marks[i][1]
        if parsed is None or parsed[0] != 1:
            continue
        _, position, segment = parsed
        playout = max(playout, t) + 0.02
        frames.append((playout - 0.02, playout, position))
        frame = bytes(got.audio[i * 320 : (i + 1) * 320]) if paired else b""
        if segment == 0:
            first_copy += frame
            continue
        resumed = by_segment.get(segment)
        if resumed is None:
            continue
        if resumed.resumed_at is None:
            resumed.resumed_at, resumed.resume_ms = t, position - 20
        at = round(position - 20) * 16
        known = bytes(first_copy[at : at + len(frame)])
        if paired and known:
            resumed.exact = (resumed.exact is not False) and known == frame[: len(known)]


class PhoneCaller(Protocol):
    """What the simulated Twilio caller and the simulated Asterisk share."""

    speech_onsets: list[float]

    async def begin(self) -> None: ...

    def say(self, pcm: bytes) -> None: ...

    async def run_until(self, done: Callable[[], bool], timeout_s: float) -> bool: ...

    async def hang_up(self) -> None: ...


async def ask_then_sound(
    caller: PhoneCaller, frames: Callable[[], int], pcm: bytes, listen_ms: int, trial: Trial
) -> None:
    """The phone caller asks for the story, hears ``listen_ms`` of it (``frames``: the 20 ms frames received so
    far), then makes the sound ``pcm`` (8 kHz), whose onset goes into ``trial``."""
    await caller.begin()
    caller.say(bytes(8000 * 2 * 300 // 1000) + speech_question(8000))
    if not await caller.run_until(lambda: frames() >= listen_ms // 20, 60):
        await caller.hang_up()
        raise RuntimeError("no reply to listen to")
    caller.say(pcm)
    await caller.run_until(lambda: len(caller.speech_onsets) >= 2, 5)
    trial.onset = caller.speech_onsets[1] + onset_offset_s(pcm, 8000)


async def twilio_trial(url: str, sound: Sound, listen_ms: int, trial: Trial) -> None:
    pcm = sound.pcm(8000)
    async with connect(url) as ws:
        caller = TwilioCaller(ws)
        got = caller.received
        await ask_then_sound(caller, lambda: len(got.media_times), pcm, listen_ms, trial)

        def turn2() -> bool:
            return any(not name.startswith("1:") for _, name in got.marks)

        until = len(pcm) / 16000 + SETTLE_S
        await caller.run_until(lambda: sound.kind == "talk-over" and turn2(), until)
        await caller.hang_up()
    twilio_analyse(trial, caller)


# --- AudioSocket -------------------------------------------------------------------------------------


def audiosocket_analyse(trial: Trial, got: AudioSocketReceived, barged: bool, resumed: bool) -> None:
    """AudioSocket has neither marks nor a clear: the reply stops when its frames stop coming (they come every
    20 ms, paced), and goes on when they come again; the server's counters say whether that was a barge-in."""
    onset = trial.onset or 0.0
    times = got.audio_times
    trial.barged = barged
    first = next((i for i, t in enumerate(times) if t >= onset), len(times))
    for i in range(max(first, 1), len(times)):
        if times[i] - times[i - 1] >= GAP_S:
            trial.stop_ms = (times[i - 1] - onset) * 1000  # the last frame before the gap (its lead still plays)
            if not barged:  # (a barge-in's own moment does not show on this wire: no clear)
                trial.pauses.append(Pause(at=times[i - 1], heard_ms=0.0, resumed_at=times[i] if resumed else None))
            return


async def audiosocket_trial(server: RunningServer, sound: Sound, listen_ms: int, trial: Trial) -> None:
    pcm = sound.pcm(8000)
    metrics = server.state.metrics
    barge_ins, resumes = metrics.barge_ins_total.value(), metrics.playback_pauses_total.value(["resumed"])
    port = server.audiosocket_port
    assert port is not None
    caller = await AudioSocketCaller.connect("127.0.0.1", port)
    got = caller.received
    await ask_then_sound(caller, lambda: len(got.audio_times), pcm, listen_ms, trial)
    await caller.run_until(lambda: False, len(pcm) / 16000 + SETTLE_S)  # whatever happens, it shows by then
    await caller.hang_up()
    barged = metrics.barge_ins_total.value() > barge_ins
    audiosocket_analyse(trial, got, barged, metrics.playback_pauses_total.value(["resumed"]) > resumes)


# --- rows ---------------------------------------------------------------------------------------------


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
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
        served = dataclasses.replace(components, llm=llm)
        settings = Settings(
            server={"port": 0, "admission_wait_ms": 0}, turn={"pause_on_speech": pause_on}, audiosocket={"port": 0}
        )
        try:
            async with running_server(settings, lambda: served) as server:
                await server.wait_ready()
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
