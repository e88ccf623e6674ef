"""One trial of bench/yield_latency.py on each path (/ws, /twilio, AudioSocket): ask for a story, make a sound over it,
and read from what the caller received when the reply stopped, resumed or gave way; changes only with how a trial is
run and read.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from websockets.asyncio.client import connect

from agent.front_door.listener import RunningServer
from agent.wires.phone.twilio import codec as twilio
from bench.speech import onset_offset_s
from bench.yield_sounds import RATE, Sound, speech_question
from clients.audiosocket_client import AudioSocketCaller
from clients.audiosocket_client import Received as AudioSocketReceived
from clients.twilio_client import TwilioCaller
from testing.listener import MARK_EVERY_S, AudioSender, Player

GAP_S = 0.1
"""AudioSocket: a pause in the paced frames (20 ms apart) this long means the reply stopped."""
SETTLE_S = 3.0  # after the sound: time for a resume, a barge-in or a new turn's reply to show
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
    port = server.listener_port("audiosocket")
    assert port is not None
    caller = await AudioSocketCaller.connect("127.0.0.1", port)
    got = caller.received
    await ask_then_sound(caller, lambda: len(got.audio_times), pcm, listen_ms, trial)
    await caller.run_until(lambda: False, len(pcm) / 16000 + SETTLE_S)  # whatever happens, it shows by then
    await caller.hang_up()
    barged = metrics.barge_ins_total.value() > barge_ins
    audiosocket_analyse(trial, got, barged, metrics.playback_pauses_total.value(["resumed"]) > resumes)
