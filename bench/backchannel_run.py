"""One phrase of bench/backchannels.py through the server's session over a playing reply (the ASR with its transcripts
reused, the session, what the reply did): changes only with how that bench drives the core.
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent.config import Settings
from agent.core.endpointing import is_backchannel
from agent.core.events import (
    AudioFrame,
    CancelTranscriptOrScore,
    CancelTurn,
    Effect,
    Notify,
    PlaybackClear,
    PlaybackPause,
    SpeechAudio,
    SpeechEnded,
    SpeechStopped,
    Synthesize,
    Transcribe,
    TranscriptReady,
    TranscriptText,
)
from agent.core.session import Session
from agent.core.turn_detector import EndOfTurn, TurnDetector
from agent.ports import JobInfo, SpeechDetector, SpeechToText, Work
from agent.runtime.call.caller_audio import CallerAudio
from agent.runtime.call.policies import session_config
from agent.wiring import build_stt
from bench.backchannel_audio import INTERRUPTIONS, OUTPUT_RATE, REPLY_S, caller_pcm, write_wav
from bench.progress import progress
from bench.turns.voices import Voice

# --- transcripts --------------------------------------------------------------------------------------


class Transcriber:
    """The settings' ASR, with transcripts of identical audio reused (greedy decoding is deterministic)."""

    def __init__(self, settings: Settings) -> None:
        progress(f"loading the ASR model ({settings.asr.model or 'bundled tiny.en'})")
        self._model: SpeechToText = build_stt(settings)
        self._texts: dict[str, tuple[str, float]] = {}
        self.runs = 0

    async def text(self, pcm: bytes, over_agent: bool = False) -> tuple[str, float]:
        """(transcript, ms it took when first transcribed); ``over_agent``: plain, as the server does for a sound
        made over the agent (``Transcribe.over_agent``)."""
        key = f"{hashlib.sha1(pcm).hexdigest()}:{over_agent}"
        known = self._texts.get(key)
        if known is None:
            started = time.perf_counter()
            job = JobInfo(Work.FINAL_TRANSCRIPT, plain=over_agent)
            text = (await self._model.transcribe(pcm, job)).text
            known = self._texts[key] = (text, (time.perf_counter() - started) * 1000)
            self.runs += 1
        return known

    def close(self) -> None:
        close = getattr(self._model, "close", None)
        if callable(close):
            close()


# --- one phrase through the pipeline -------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    phrase: str
    voice: str
    path: str
    control: bool
    """A real interruption (expected to barge in), not an acknowledgement."""
    audible_ms: float
    speech_ms: list[int] = field(default_factory=list)
    """Voiced ms of each utterance the turn detector found."""
    probes: list[tuple[int, str, bool, float]] = field(default_factory=list)
    """(speech ms when asked, text, is_backchannel, ms the ASR took)."""
    finals: list[str] = field(default_factory=list)
    """Transcripts of each whole detected utterance."""
    barge_in_at: int | None = None
    turns: list[str] = field(default_factory=list)
    """Transcripts of the turns the utterance became."""
    paused: bool = False
    resumed: bool = False

    @property
    def core(self) -> str:
        parts = [f"barge-in@{self.barge_in_at}"] if self.barge_in_at is not None else []
        parts += [f"turn {t!r}" for t in self.turns]
        if not parts:
            return "paused+resumed" if self.paused and self.resumed else "passes"
        return " + ".join(parts)

    @property
    def interrupted(self) -> bool:
        return self.barge_in_at is not None or bool(self.turns)

    @property
    def wrong(self) -> bool:
        return self.interrupted != self.control


def _session(settings: Settings, path: str, probe_lead_ms: int | None) -> Session:
    kwargs: dict[str, Any] = {}
    parameters = inspect.signature(session_config).parameters
    if "can_pause" in parameters:
        kwargs["can_pause"] = path == "twilio"
    if "language" in parameters:  # the phrases are English
        kwargs["language"] = "en"
    config = session_config(settings, OUTPUT_RATE, **kwargs)
    if probe_lead_ms is not None:  # not a setting: BargeInPolicy's own default
        config = replace(config, barge_in=replace(config.barge_in, probe_lead_ms=probe_lead_ms))
    return Session(config)


def _speech_ms(session: Session) -> int:
    """The speech judge's detected speech ms (the number ``_judge_interruption`` compares)."""
    return int(session._judge._detector.speech_ms)  # a bench looking inside


async def run_phrase(
    phrase: str,
    voice: Voice,
    path: str,
    settings: Settings,
    new_detector: Callable[[], SpeechDetector],
    transcriber: Transcriber,
    asr_latency_ms: int,
    save_wav: Path | None,
    probe_lead_ms: int | None = None,
) -> Run:
    pcm, rate, audible_ms = caller_pcm(phrase, voice, path)
    if save_wav is not None:
        write_wav(save_wav, f"{phrase}-{voice.label}-{path}", pcm, rate)
    run = Run(phrase, voice.label, path, phrase in INTERRUPTIONS, audible_ms)
    session = _session(settings, path, probe_lead_ms)
    front = CallerAudio(rate, new_detector(), settings.vad.threshold, getattr(settings.vad, "tail_floor_db", 0.0))
    detector = TurnDetector(session.config.policy, settings.vad.hangover_ms)  # the session's own speech rules
    greeting_turn: int | None = None
    position = 0
    delayed: dict[int, tuple[int, str]] = {}  # request -> (due position, transcript)
    purposes: dict[int, str] = {}

    async def settle(effects: list[Effect]) -> None:
        nonlocal greeting_turn
        queue = list(effects)
        while queue:
            effect = queue.pop(0)
            match effect:
                case Synthesize(turn=turn, sentence=sentence) if greeting_turn is None:
                    greeting_turn = turn
                    reply = bytes(2 * OUTPUT_RATE * REPLY_S)
                    queue += session.handle(SpeechAudio(turn, reply, sentence), position / 1000)
                    queue += session.handle(SpeechEnded(turn), position / 1000)
                case Transcribe(request=request, pcm=audio, purpose=purpose, over_agent=over_agent):
                    purposes[request] = purpose
                    text, took = await transcriber.text(audio, over_agent)
                    if purpose == "quick":
                        speech = _speech_ms(session)
                        run.probes.append((speech, text, is_backchannel(text, language="en"), took))
                    if asr_latency_ms:
                        delayed[request] = (position + asr_latency_ms, text)
                    else:
                        queue += session.handle(TranscriptReady(request, text, language="en"), position / 1000)
                case CancelTranscriptOrScore(request=request):
                    delayed.pop(request, None)
                case CancelTurn(turn=turn) if turn == greeting_turn and run.barge_in_at is None and not run.turns:
                    superseded = any(isinstance(e, Notify) and isinstance(e.event, SpeechStopped) for e in queue)
                    if not superseded:  # a barge-in, not a new turn taking over the playing reply
                        run.barge_in_at = _speech_ms(session)
                case Notify(event=PlaybackClear()) | Notify(event=PlaybackPause()):
                    run.paused = run.paused or isinstance(effect.event, PlaybackPause)
                case Notify(event=SpeechStopped()):
                    run.turns.append("?")
                case Notify(event=TranscriptText(text=text)) if run.turns and run.turns[-1] == "?":
                    run.turns[-1] = text
                case _:
                    if type(effect).__name__ == "YieldOutcome" and getattr(effect, "resumed", False):
                        run.resumed = True

    await settle(session.open(0.0))
    if greeting_turn is None:
        raise RuntimeError("the session did not start its greeting: no reply to talk over")
    chunk = rate * 20 // 1000 * 2
    for offset in range(0, len(pcm), chunk):
        for frame in front.push(pcm[offset : offset + chunk]):
            position += frame.duration_ms
            now = position / 1000
            signal = detector.push(frame.pcm, frame.voiced, frame.duration_ms)
            if isinstance(signal, EndOfTurn):
                run.speech_ms.append(signal.speech_ms)
                run.finals.append((await transcriber.text(signal.audio))[0])
            effects = session.handle(AudioFrame(frame.pcm, frame.voiced, frame.duration_ms), now)
            for request, (due, text) in sorted(delayed.items(), key=lambda item: item[1][0]):
                if due <= position and request in delayed:
                    del delayed[request]
                    effects += session.handle(TranscriptReady(request, text, language="en"), now)
            await settle(effects)
    for request, (_, text) in sorted(delayed.items(), key=lambda item: item[1][0]):
        await settle(session.handle(TranscriptReady(request, text, language="en"), position / 1000))
    return run
