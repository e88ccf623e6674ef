"""The asyncio tasks a session's turns run: transcriptions, reply text, speech (one per connection).

The connection carries out the core's effects through it (``Transcribe`` → ``transcribe``, ``ScoreTurn`` →
``score``, ``ScoreWords`` → ``score_words``, ``GenerateReply`` → ``reply``, ``Synthesize`` →
``speech_for(turn).add``, ``HoldSpeech`` and ``ResendSpeech`` → ``hold`` and ``resend``, ``RunTool`` →
``run_tool``, ``CancelReply``/``CancelTurn``/``CancelTranscriptOrScore``/``CancelTool`` → the cancels)
and ``close``s it when the session ends. Every task posts its results to the connection's inbox and never raises
(``agent.runtime.call.stages``); cancelling a transcription that is still queued for the model workers removes
it from the queue, so it never runs.

A turn's results are posted ``Stamped`` with the run of that turn's work they belong to, and ``fresh`` lets
through only those of its current run: a turn number can be started again after its work was cancelled (a
reply prepared before the end of turn and discarded, ``agent.core.preemption``), and results of the
cancelled run still waiting in the inbox must not be taken for the new run's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from agent.config import Settings
from agent.core.events import Event
from agent.ports import ChatMessage, LanguageHint, ToolCall, ToolSpec
from agent.runtime.call import stages
from agent.runtime.call.speech import TurnSpeech
from agent.runtime.call.tracing import CallTracer
from agent.runtime.components import Components


@dataclass(frozen=True, slots=True)
class Stamped:
    """A result of turn ``turn``'s work, from its run ``run``."""

    turn: int
    run: int
    event: Event


class TurnTasks:
    def __init__(
        self,
        components: Components,
        settings: Settings,
        post: Callable[[Event | Stamped], Any],
        new_speech: Callable[[int, stages.Post], TurnSpeech],
        log: stages.Log,
        tenant: str = "default",
        tracer: CallTracer | None = None,
    ) -> None:
        """``tracer``: the call's trace (``None``: off); a turn's reply, tools and speech start in its context."""
        self._components = components
        self._tracer = tracer
        self._tenant = tenant
        self._settings = settings
        self._post = post
        self._new_speech = new_speech
        self._log = log
        self._tasks: dict[int, set[asyncio.Task[None]]] = {}  # reply text, by turn
        self._asr: dict[int, asyncio.Task[None]] = {}  # by request
        self._speech: dict[int, TurnSpeech] = {}  # by turn
        self._held: set[int] = set()  # turns whose speech posts nothing until it is resent (a speech yet to start)
        self._runs: dict[int, int] = {}  # the current run of each turn's work, by turn (0 when absent)
        self._tools: dict[tuple[int, str], asyncio.Task[None]] = {}  # server tool calls, by turn and call id

    def transcribe(self, request: int, pcm: bytes, hint: LanguageHint, purpose: str, over_agent: bool = False) -> None:
        """Transcribe ``pcm`` in the language ``hint`` says (the call's: the session core's choice)."""
        job = stages.transcript_job(purpose, self._settings, over_agent)
        stt = self._components.stt
        task = asyncio.create_task(stages.transcribe(stt, request, pcm, job, hint, self._post, self._log))
        self._asr[request] = task
        task.add_done_callback(lambda _: self._asr.pop(request, None) if self._asr.get(request) is task else None)

    def score(self, request: int, pcm: bytes) -> None:
        """Score the pause's sound (``ScoreTurn``) on the model workers; ``TurnScored(None)`` without a model."""
        job = stages.score_job(self._settings)
        model = self._components.turn_model
        task = asyncio.create_task(stages.score(model, request, pcm, job, self._post, self._log))
        self._asr[request] = task  # cancelled as a transcription is (CancelTranscriptOrScore)
        task.add_done_callback(lambda _: self._asr.pop(request, None) if self._asr.get(request) is task else None)

    def score_words(self, request: int, text: str, language: str) -> None:
        """Score the pause's words (``ScoreWords``) on the model workers; ``TurnScored(None)`` without a model."""
        job = stages.score_job(self._settings)
        model = self._components.text_model
        task = asyncio.create_task(stages.score_words(model, request, text, language, job, self._post, self._log))
        self._asr[request] = task
        task.add_done_callback(lambda _: self._asr.pop(request, None) if self._asr.get(request) is task else None)

    def cancel_transcript_or_score(self, request: int) -> None:
        task = self._asr.pop(request, None)
        if task is not None:
            task.cancel()  # queued work in the model pool then never runs

    def reply(
        self, turn: int, history: tuple[ChatMessage, ...], language: str, tools: tuple[ToolSpec, ...], choice: str
    ) -> None:
        llm, post = self._components.llm, self._stamping(turn)
        self._spawn(turn, stages.reply(llm, turn, history, language, tools, choice, post, self._log))

    def run_tool(self, turn: int, call: ToolCall) -> None:
        """Run the server's tool ``call`` for ``turn`` (its result is stamped like the turn's other work)."""
        runner, key = self._components.tools, (turn, call.call_id)
        work = stages.tool(runner, self._tenant, turn, call, self._stamping(turn), self._log)
        if self._tracer is not None:
            self._tracer.tool_called(turn, call)
        with self._traced(turn):
            task = self._tools[key] = asyncio.create_task(work)
        task.add_done_callback(lambda _: self._tools.pop(key, None) if self._tools.get(key) is task else None)

    def cancel_tool(self, turn: int, call_id: str) -> None:
        task = self._tools.pop((turn, call_id), None)
        if task is not None:
            task.cancel()

    def speech_for(self, turn: int) -> TurnSpeech:
        speech = self._speech.get(turn)
        if speech is None:
            with self._traced(turn):  # its task starts now
                speech = self._speech[turn] = self._new_speech(turn, self._stamping(turn))
            if turn in self._held:
                speech.hold()
        return speech

    def hold(self, turn: int) -> None:
        """The caller is making a sound over ``turn``: its speech posts no more audio until ``resend``."""
        self._held.add(turn)
        speech = self._speech.get(turn)
        if speech is not None:
            speech.hold()

    def resend(self, turn: int, start: int, keep: bool = True) -> None:
        """``turn`` plays on: its speech posts its audio again from byte ``start``, then goes on (``keep``: and
        keeps it, for a later pause)."""
        self._held.discard(turn)
        speech = self._speech.get(turn)
        if speech is not None:
            speech.resend(start, keep)

    def fresh(self, item: Stamped) -> Event | None:
        """The result in ``item``, or ``None`` when its run of the turn's work was cancelled since."""
        return item.event if self._runs.get(item.turn, 0) == item.run else None

    def cancel_reply(self, turn: int) -> None:
        for task in self._tasks.pop(turn, set()):
            task.cancel()

    def cancel_turn(self, turn: int) -> None:
        """The turn is over or interrupted: its reply text and speech stop and are forgotten."""
        self.cancel_reply(turn)
        for key in [key for key in self._tools if key[0] == turn]:
            self.cancel_tool(*key)
        self._held.discard(turn)
        self._runs[turn] = self._runs.get(turn, 0) + 1
        speech = self._speech.pop(turn, None)
        if speech is not None:
            speech.cancel()

    async def close(self) -> None:
        """Cancel everything and wait until it has stopped."""
        for turn in {*self._tasks, *self._speech, *(key[0] for key in self._tools)}:
            self.cancel_turn(turn)
        asr = list(self._asr.values())
        for task in asr:
            task.cancel()
        await asyncio.gather(*asr, return_exceptions=True)

    def _stamping(self, turn: int) -> stages.Post:
        run, post = self._runs.get(turn, 0), self._post

        async def stamped(event: Event) -> None:
            await post(Stamped(turn, run, event))

        return stamped

    def _traced(self, turn: int) -> contextlib.AbstractContextManager[None]:
        """The context turn ``turn``'s tasks start in: its trace's, so their requests carry it."""
        return contextlib.nullcontext() if self._tracer is None else self._tracer.turn_context(turn)

    def _spawn(self, turn: int, work: Coroutine[Any, Any, None]) -> None:
        with self._traced(turn):
            task = asyncio.create_task(work)
        tasks = self._tasks.setdefault(turn, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)
