"""Carrying out what the session core decides: each ``Effect`` becomes a message, a task, or the end.

Its one reason to change is the set of effects the core can ask for (``agent.core.events.effects``): a
``Notify`` is encoded by the wire and queued on the outbox (a pause or a clear also drops the reply audio
queued, and the echo gate's reference); the stage requests start, cancel or feed the turns' tasks
(``agent.runtime.call.turn_tasks``), which also hold and resend a paused turn's audio; outcomes go to the
session report (and the call's trace); ``CloseSession`` ends the connection.
What the connection learns from the events sent is here too: the session report, the call's trace
(``agent.runtime.call.tracing``, when on), the server's forecast of work (``Occupant.speaking``), the end of a
turn's bookkeeping. Dispatch on the loop: it never awaits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, assert_never

from agent.core.events import (
    CancelReply,
    CancelTool,
    CancelTranscriptOrScore,
    CancelTurn,
    CloseSession,
    Effect,
    FinishSynthesis,
    GenerateReply,
    HoldSpeech,
    LanguageHeard,
    Notify,
    PlaybackClear,
    PlaybackPause,
    PreemptionOutcome,
    ResendSpeech,
    RunTool,
    ScoreTurn,
    ScoreWords,
    ServerEvent,
    SpeechStarted,
    SpeechStopped,
    Synthesize,
    Transcribe,
    TurnMetrics,
    YieldOutcome,
)
from agent.runtime.call.outbox import Outbox
from agent.runtime.call.report import SessionReport
from agent.runtime.call.setup import CallSetup
from agent.runtime.call.tracing import CallTracer
from agent.runtime.call.turn_tasks import TurnTasks
from agent.runtime.call.wire import Wire

_clock = time.perf_counter
"""The session core's clock (the connection's)."""


class Occupant(Protocol):
    """What a connection tells the server about its seat (``agent.runtime.server.occupancy.Occupant``)."""

    def started(self) -> bool:
        """The session starts; ``False``: the server is at its session limit (close 1013)."""
        ...

    def speaking(self, speaking: bool) -> None: ...


class Effects:
    """Carries out one session's effects on its ``wire``, ``outbox`` and ``turns``; ``occupant`` hears when the
    caller speaks; ``stop`` ends the connection with a close; ``tracer``: the call's trace (``None``: off)."""

    def __init__(
        self,
        wire: Wire,
        outbox: Outbox,
        turns: TurnTasks,
        report: SessionReport,
        call: CallSetup,
        occupant: Occupant | None,
        stop: Callable[[CloseSession], None],
        tracer: CallTracer | None = None,
    ) -> None:
        self._wire = wire
        self._outbox = outbox
        self._turns = turns
        self._report = report
        self._call = call
        self._occupant = occupant
        self._stop = stop
        self._tracer = tracer

    def apply(self, effects: list[Effect]) -> None:
        turns, outbox = self._turns, self._outbox
        for effect in effects:
            match effect:
                case Notify(event=event):
                    self._notify(event)
                case Transcribe(request=request, pcm=pcm, hint=hint, purpose=purpose, over_agent=over_agent):
                    turns.transcribe(request, pcm, hint, purpose, over_agent)
                case LanguageHeard():
                    self._call.language_heard(effect)
                case ScoreTurn(request=request, pcm=pcm):
                    turns.score(request, pcm)
                case ScoreWords(request=request, text=text, language=language):
                    turns.score_words(request, text, language)
                case CancelTranscriptOrScore(request=request):
                    turns.cancel_transcript_or_score(request)
                case GenerateReply(turn=turn, history=history, language=language, tools=tools, tool_choice=choice):
                    turns.reply(turn, history, language, tools, choice)
                case RunTool(turn=turn, call=call):
                    turns.run_tool(turn, call)
                case CancelTool(turn=turn, call_id=call_id):
                    turns.cancel_tool(turn, call_id)
                case Synthesize(turn=turn, text=text, sentence=sentence, phrase=phrase, language=language):
                    turns.speech_for(turn).add(text, sentence, phrase, language=language)
                case FinishSynthesis(turn=turn):
                    turns.speech_for(turn).finish()
                case HoldSpeech(turn=turn):
                    turns.hold(turn)
                case ResendSpeech(turn=turn, start=start, keep=keep):
                    turns.resend(turn, start, keep)
                case CancelReply(turn=turn):
                    turns.cancel_reply(turn)
                case CancelTurn(turn=turn):
                    turns.cancel_turn(turn)
                    outbox.drop_audio(turn)
                case PreemptionOutcome() | YieldOutcome():
                    self._report.outcome(effect)
                    if self._tracer is not None:
                        self._tracer.outcome(effect)
                case CloseSession():
                    self._stop(effect)
                case _:
                    assert_never(effect)

    def _notify(self, event: ServerEvent) -> None:
        turn = getattr(event, "turn", None)
        if isinstance(event, PlaybackPause):
            self._outbox.drop_audio(event.turn)  # the client drops what it buffered, and so do we
        if isinstance(event, PlaybackClear | PlaybackPause):
            self._call.cleared(_clock())  # and the echo gate's reference
        for payload in self._wire.encode(event):
            self._outbox.put(payload, turn)
        self._observe(event)

    def _observe(self, event: ServerEvent) -> None:
        self._report.event(event)
        if self._tracer is not None:
            self._tracer.event(event)
        if isinstance(event, SpeechStarted | SpeechStopped) and self._occupant is not None:
            self._occupant.speaking(isinstance(event, SpeechStarted))
        elif isinstance(event, TurnMetrics):
            self._turns.cancel_turn(event.turn)  # the turn is over: release its bookkeeping
