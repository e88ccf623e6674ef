"""A synchronous driver for the session core: 20 ms frames on a simulated clock (no event loop, no sleeps)."""

from __future__ import annotations

import struct
from typing import Any

from agent.core.endpointing import EndpointPolicy
from agent.core.events import (
    AudioFrame,
    Effect,
    Event,
    Notify,
    ReplyDelta,
    ReplyEnded,
    SpeechAudio,
    SpeechEnded,
    Transcribe,
    TranscriptReady,
)
from agent.core.policies import BargeInPolicy, Deadlines, IdlePolicy, Phrases, Preemption, SessionConfig, ToolPolicy
from agent.core.session import Session
from agent.core.turn_detector import TurnPolicy

FRAME = b"\x01\x00" * 320
AUDIO_100MS = b"\x00\x00" * 2400  # 100 ms at 24 kHz


class Driver:
    """Feeds a session 20 ms frames with a simulated clock and records what it asks for."""

    def __init__(
        self,
        *,
        speculative_ms: int = 0,
        barge_in: bool = True,
        idle: IdlePolicy | None = None,
        deadlines: Deadlines | None = None,
        phrases: Phrases | None = None,
        preemption: Preemption = "off",
        pause: bool = False,
        pause_overrun_ms: int = 0,
        continue_within_ms: int = 0,
        endpointing: dict[str, Any] | None = None,
        tools: ToolPolicy | None = None,
        detect_language: bool = False,
        **policy: int,
    ) -> None:
        cfg = {"onset_ms": 40, "min_utterance_ms": 60, "max_utterance_ms": 5000, "preroll_ms": 60}
        cfg.update(policy)
        self.session = Session(
            SessionConfig(
                output_sample_rate=24000,
                policy=TurnPolicy(**cfg),
                endpointing=EndpointPolicy(
                    **{
                        "speculative_ms": speculative_ms,
                        "hangover_min_ms": 200,
                        "hangover_ms": 400,
                        "hangover_max_ms": 800,
                        **(endpointing or {}),
                    }
                ),
                barge_in=BargeInPolicy(
                    enabled=barge_in,
                    min_speech_ms=200,
                    backchannel_max_ms=600,
                    pause=pause,
                    pause_overrun_ms=pause_overrun_ms,
                    resume_after_ms=200,
                    continue_within_ms=continue_within_ms,
                ),
                idle=idle or IdlePolicy(),
                deadlines=deadlines or Deadlines(),
                phrases=phrases or Phrases(),
                system_prompt="sys",
                first_chunk_min_chars=0,
                preemption=preemption,
                tools=tools or ToolPolicy(),
                language="en",
                detect_language=detect_language,
            )
        )
        self.now = 0.0

    def audio(self, pattern: str) -> list[Effect]:
        out: list[Effect] = []
        for ch in pattern:
            self.now += 0.02
            out += self.session.handle(AudioFrame(FRAME, ch == "S", 20), self.now)
        return out

    def at(self, dt: float, event: Event) -> list[Effect]:
        self.now += dt
        return self.session.handle(event, self.now)


def frame(index: int) -> bytes:
    """A 20 ms frame that says where in the stream it comes from."""
    return struct.pack("<h", index % 30000) * 320


def say(d: Driver, pattern: str) -> list[Effect]:
    """Frames of ``pattern`` (S voiced, . silent), each one different, on the driver's clock."""
    out: list[Effect] = []
    for ch in pattern:
        d.now += 0.02
        out += d.session.handle(AudioFrame(frame(round(d.now / 0.02)), ch == "S", 20), d.now)
    return out


def events(effects: list[Effect]) -> list[Any]:
    return [e.event for e in effects if isinstance(e, Notify)]


def requests(effects: list[Effect]) -> list[int]:
    return [e.request for e in effects if isinstance(e, Transcribe)]


def of(effects: list[Effect], kind: type) -> list[Any]:
    return [e for e in effects if isinstance(e, kind)] + [e for e in events(effects) if isinstance(e, kind)]


def utter(d: Driver, voiced: int = 10, silent: int = 20) -> list[Effect]:
    return d.audio("S" * voiced + "." * silent)


def answered_turn(d: Driver, reply: str = "Hello there my friend. How are you today?") -> int:
    """Speak, transcribe, reply and synthesize one turn; returns its number (audio sent, still playing)."""
    (req,) = requests(utter(d))
    d.at(0.1, TranscriptReady(req, "hello", language="en"))
    return reply_to(d, reply)


def reply_to(d: Driver, reply: str) -> int:
    """The active turn's reply is ``reply``, synthesized (2 s of audio in two sentences, all sent, still playing);
    returns its number."""
    turn = d.session.active_turn
    assert turn is not None
    d.at(0.01, ReplyDelta(turn, reply))
    d.at(0.01, ReplyEnded(turn))
    for i in range(20):  # 2 s of audio, sentence 0 then 1
        d.at(0.001, SpeechAudio(turn, AUDIO_100MS, 0 if i < 10 else 1))
    d.at(0.001, SpeechEnded(turn))
    return turn
