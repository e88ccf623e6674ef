"""Echo immunity: the agent's reply fed back into a speakerphone caller's microphone, echo gate off vs on.

    python bench/echo.py                     # 4 levels x 3 delays, phone line (8 kHz, μ-law), table on stdout
    python bench/echo.py --wideband          # the 16 kHz path (/ws with AGENT_ECHO__BROWSER=true)
    python bench/echo.py --levels -15 --delays 120 --rt60 500

**Scenes** (``testing/echo_audio.py``, made at start-up, nothing downloaded): a three-sentence reply (about 9 s) in
the bundled Piper voice starts 0.5 s in; the microphone picks it up ``delay`` later through a synthetic room (direct
path plus an exponentially decaying noise tail, ``--rt60``), at ``level`` relative to the reply, over -65 dBFS
of background noise. The talk-over scene adds the caller (espeak-ng en-us+f2, peak 0.9: a normal level) saying
"Wait, stop, I have a question about my order." from 3.0 s (after the echo path is learned) and, with
``--early``, from 0.8 s (before it is).

**Pipeline**: the server's own ``CallerAudio`` (webrtcvad mode 3, as configured by default) with the echo guard
(``agent.audio.playout.Playout`` told each 20 ms reply frame as it is "sent", paced in real time, and
``agent.audio.echo.EchoGate``) or without it, on an injected clock, then the core's ``TurnDetector`` with the
default policy (onset 60 ms). The phone path sends the reply at 8 kHz and the caller's audio μ-law at 8 kHz.

**Columns**: *self-int.* utterances the echo alone makes reach 300 ms of speech (a barge-in:
``AGENT_TURN__BARGE_IN_MIN_MS``) - each one also pauses the reply at its onset; *echo voiced* the share of
20 ms frames while the reply plays that come out voiced; *onsets* utterances the echo starts (each is a pause,
a clear on Twilio, and a transcription); *pause ms* / *barge ms* from the start of the talk-over to its onset
(the reply pauses: playback stops) and to 300 ms of its speech (barge-in); *lock ms* reply audio played before
the gate found the echo's delay. With the gate off the echo's own utterance is usually in progress when the
talk-over starts, so its talk-over figures say little: the ``none`` rows (no echo, a caller on headphones) are
the detector's own pace to compare with. *us/frame* the CPU time (this thread's) of ``CallerAudio.push``
per 20 ms frame: resampling, webrtcvad, and with the gate on, the playout and the gate.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from agent.adapters.webrtc_vad import WebRtcSpeechDetector
from agent.audio import mulaw
from agent.audio.echo import EchoGate
from agent.audio.pcm import float_to_pcm16
from agent.audio.playout import Playout
from agent.audio.resample import resample
from agent.core.turn_detector import Onset, TurnDetector, TurnPolicy
from agent.runtime.call.caller_audio import CallerAudio
from testing.echo_audio import RATE, Scene, echo_scene

BARGE_IN_MS = 300
NETWORK_S = 0.015


@dataclass
class Result:
    self_interruptions: int
    onsets: int
    echo_voiced: float
    pause_ms: int | None
    barge_ms: int | None
    lock_ms: int | None
    us_per_frame: float


def run(scene: Scene, gated: bool, rate: int) -> Result:
    """Feed ``scene`` through ``CallerAudio`` as a call at ``rate`` would, and the core's turn detector."""

    def line(x: np.ndarray, law: bool) -> bytes:
        if rate == RATE:
            return float_to_pcm16(x)
        pcm = float_to_pcm16(resample(x, RATE, rate))
        return mulaw.decode(mulaw.encode(pcm)) if law else pcm

    near, far = line(scene.near, True), line(scene.far, False)
    gate = EchoGate()
    playout = Playout()
    audio = CallerAudio(rate, WebRtcSpeechDetector(3), echo=(playout, gate) if gated else None)
    turns = TurnDetector(TurnPolicy(onset_ms=60, min_utterance_ms=200, preroll_ms=300), hangover_ms=420)
    chunk = 2 * rate // 50  # 20 ms of PCM16
    count = len(near) // chunk
    talk_ms = None if scene.talk_at is None else scene.talk_at * 1000 // RATE
    reply_ms, end_ms = scene.reply_at * 1000 // RATE, talk_ms if talk_ms is not None else 10**9
    onsets: list[int] = []
    barges: list[int] = []
    voiced_echo = frames_echo = 0
    lock_ms: int | None = None
    spent = 0.0
    sent = 0
    barged = False
    for k in range(count):
        now = 0.02 * (k + 1) + NETWORK_S
        began = time.thread_time()
        while sent < count and 0.02 * sent <= now:  # paced reply frames, as Twilio's pacer sends them
            if gated:
                playout.sent(far[chunk * sent : chunk * (sent + 1)], rate, 0.02 * sent)
            sent += 1
        frames = audio.push(near[chunk * k : chunk * (k + 1)], now)
        spent += time.thread_time() - began
        for frame in frames:
            position = turns.position_ms
            if reply_ms <= position < end_ms:
                frames_echo += 1
                voiced_echo += frame.voiced
            signal = turns.push(frame.pcm, frame.voiced, frame.duration_ms)
            if isinstance(signal, Onset):
                onsets.append(signal.audio_ms)
            if not turns.speaking:
                barged = False
            elif turns.speech_ms >= BARGE_IN_MS and not barged:
                barged = True
                barges.append(turns.position_ms)
        if lock_ms is None and gate.path.state == "locked":
            lock_ms = (k + 1) * 20 - reply_ms
    echo_onsets = [t for t in onsets if t < end_ms]
    talk_onsets = [t for t in onsets if talk_ms is not None and t >= talk_ms - 20]
    talk_barges = [t for t in barges if talk_ms is not None and t >= talk_ms]
    return Result(
        self_interruptions=len([t for t in barges if t < end_ms]),
        onsets=len(echo_onsets),
        echo_voiced=voiced_echo / max(frames_echo, 1),
        pause_ms=None if not talk_onsets or talk_ms is None else talk_onsets[0] + 60 - talk_ms,
        barge_ms=None if not talk_barges or talk_ms is None else talk_barges[0] - talk_ms,
        lock_ms=lock_ms,
        us_per_frame=spent / count * 1e6,
    )


def _ms(value: int | None) -> str:
    return "-" if value is None else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="See the module docstring.")
    parser.add_argument("--levels", type=float, nargs="+", default=[-10, -15, -20, -25], help="echo level, dB")
    parser.add_argument("--delays", type=float, nargs="+", default=[30, 120, 250], help="echo delay, ms")
    parser.add_argument("--rt60", type=float, default=300.0, help="room reverberation time, ms (default 300)")
    parser.add_argument("--talk-at", type=float, default=3000.0, help="talk-over start, ms (default 3000)")
    parser.add_argument("--early", action="store_true", help="also talk over at 800 ms (before the gate locks)")
    parser.add_argument("--wideband", action="store_true", help="16 kHz caller and reply (else a phone line)")
    args = parser.parse_args(argv)
    rate = RATE if args.wideband else 8000
    talks = [args.talk_at] + ([800.0] if args.early else [])
    print(f"making scenes and running {len(args.levels) * len(args.delays)} echo paths ...", file=sys.stderr)
    header = (
        f"{'level':>6} {'delay':>6} {'gate':>4} | {'self-int.':>9} {'onsets':>6} {'echo voiced':>11} | "
        + " | ".join(f"talk@{t:.0f}: {'pause ms':>8} {'barge ms':>8}" for t in talks)
        + f" | {'lock ms':>7} {'us/frame':>8}"
    )
    print(f"# echo immunity, {'16 kHz' if args.wideband else 'phone line (8 kHz, μ-law)'}, rt60 {args.rt60:.0f} ms")
    print(header)
    print("-" * len(header))
    for gated in (False, True):  # the talk-over on headphones: what the detector alone does with it
        talked = [run(echo_scene(talk_at_ms=t, rt60_ms=args.rt60, echo=False), gated, rate) for t in talks]
        cells = " | ".join(f"{'':>8} {_ms(r.pause_ms):>8} {_ms(r.barge_ms):>8}" for r in talked)
        print(f"{'none':>6} {'':>6} {'on' if gated else 'off':>4} | {'':>9} {'':>6} {'':>11} | {cells} |")
    for level in args.levels:
        for delay in args.delays:
            alone = echo_scene(level, delay, rt60_ms=args.rt60)
            over = [echo_scene(level, delay, rt60_ms=args.rt60, talk_at_ms=t) for t in talks]
            for gated in (False, True):
                echo = run(alone, gated, rate)
                talked = [run(scene, gated, rate) for scene in over]
                cells = " | ".join(f"{'':>8} {_ms(r.pause_ms):>8} {_ms(r.barge_ms):>8}" for r in talked)
                print(
                    f"{level:>6.0f} {delay:>6.0f} {'on' if gated else 'off':>4} | {echo.self_interruptions:>9} "
                    f"{echo.onsets:>6} {echo.echo_voiced:>11.1%} | {cells} | {_ms(echo.lock_ms):>7} "
                    f"{echo.us_per_frame:>8.0f}",
                    flush=True,
                )
            print(f"  done: {level:.0f} dB, {delay:.0f} ms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
