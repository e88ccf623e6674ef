"""One WebSocket connection: the asyncio shell around the session core, generic over its ``Wire``.

Lifecycle: wait for the opening (``session.start`` on ``/ws``, where bad input before it gets an ``error``
event; Twilio's ``start`` on ``/twilio``), build a ``Session``, then run one loop that is the session's
only caller. A reader task decodes client frames into the inbox;
turn tasks (ASR, reply, synthesis) post their results to the same inbox; a writer task drains the outbox
to the socket. Leaving the loop cancels every task of the connection.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Coroutine
from typing import Any, assert_never

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from agent.audio.frontend import CallerAudio
from agent.config import Settings
from agent.core.events import (
    CancelTurn,
    CloseSession,
    Effect,
    ErrorNotice,
    Event,
    FinishSynthesis,
    GenerateReply,
    Notify,
    PlaybackClear,
    ReplyDelta,
    ReplyEnded,
    StageFailed,
    Synthesize,
    Tick,
    Transcribe,
    TranscriptFailed,
    TranscriptReady,
    TurnMetrics,
)
from agent.core.session import Session
from agent.errors import AgentError, ProtocolError, UnknownVoice
from agent.ports import ChatMessage
from agent.runtime import enrollment
from agent.runtime.components import Components
from agent.runtime.metrics import ServerMetrics
from agent.runtime.outbox import Outbox
from agent.runtime.policy import session_config
from agent.runtime.speech import TurnSpeech
from agent.runtime.wire import BrowserWire, Wire
from agent.transport import browser

log = logging.getLogger(__name__)

_DISCONNECTED = object()
Inbox = asyncio.Queue[Event | bytes | object]


async def send_error(ws: ServerConnection, error: ProtocolError) -> None:
    await ws.send(browser.encode(ErrorNotice(code=error.code, message=error.message)))


async def await_start(
    ws: ServerConnection, settings: Settings, components: Components
) -> tuple[browser.SessionStart, str] | None:
    """Read frames until a valid ``session.start``; returns it with the resolved voice, or ``None``."""
    deadline = time.monotonic() + settings.server.start_timeout_s
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            await ws.close(1008, "session.start not received in time")
            return None
        try:
            message = await asyncio.wait_for(ws.recv(), remaining)
        except TimeoutError:
            continue
        except ConnectionClosed:  # e.g. a page that only listed voices or enrolled one
            return None
        try:
            if isinstance(message, bytes):
                raise ProtocolError("not_started", "send session.start before any audio")
            request = browser.decode_text(message)
            if isinstance(request, browser.EnrollmentMessage):  # an enrolling client is not idle
                await enrollment.channel_for(ws, components, settings).handle(request)
                deadline = time.monotonic() + settings.server.start_timeout_s
                continue
            if isinstance(request, browser.SessionEnd):
                await ws.close(1000, "session ended")
                return None
            if isinstance(request, browser.PlaybackMarkMessage):
                continue  # nothing is playing before the session starts
            try:
                voice = await components.tts.resolve_voice(request.voice or settings.tts.default_voice)
            except UnknownVoice as exc:
                raise ProtocolError("unknown_voice", f"{exc}; see the voices this server offers") from None
            return request, voice
        except ProtocolError as exc:
            await send_error(ws, exc)


class Connection:
    """Runs one started session until the client ends it or goes away."""

    def __init__(
        self,
        ws: ServerConnection,
        settings: Settings,
        components: Components,
        start: browser.SessionStart | Wire,
        voice: str,
        metrics: ServerMetrics | None = None,
    ) -> None:
        if isinstance(start, browser.SessionStart):
            rate = start.output_sample_rate or settings.audio.output_sample_rate
            start = BrowserWire(start, rate, settings.audio.output_frame_ms, settings.audio.max_input_frame_ms)
        self.id = uuid.uuid4().hex[:12]
        self._metrics = metrics if metrics is not None else ServerMetrics()
        self._ws = ws
        self._settings = settings
        self._components = components
        self._wire = start
        self._voice = voice
        self._voicing = components.voicing(settings, voice)
        self._output_rate = start.output_rate
        self._session = Session(session_config(settings, self._output_rate))
        self._audio = CallerAudio(start.input_rate, components.new_detector(), settings.vad.threshold)
        high_water = self._output_rate * 2 * settings.audio.outbound_buffer_ms // 1000
        self._outbox = Outbox(audio_high_water=high_water)
        self._inbox: Inbox = asyncio.Queue(maxsize=256)
        self._tasks: dict[int, set[asyncio.Task[None]]] = {}
        self._asr_tasks: set[asyncio.Task[None]] = set()
        self._speech: dict[int, TurnSpeech] = {}
        self._close: CloseSession | None = None
        self._log = logging.LoggerAdapter(log, {"session": self.id})

    async def run(self) -> None:
        for payload in self._wire.opening(self.id, self._voice):
            await self._ws.send(payload)
        self._log.info("session %s started: input %d Hz, voice %s", self.id, self._wire.input_rate, self._voice)
        self._voicing.warm_phrases()
        reader = asyncio.create_task(self._read(), name=f"reader-{self.id}")
        writer = asyncio.create_task(self._write(), name=f"writer-{self.id}")
        ticker = asyncio.create_task(self._tick(), name=f"ticker-{self.id}")
        try:
            await self._loop()
        finally:
            reader.cancel()
            ticker.cancel()
            for number in list(self._tasks):
                self._cancel_turn(number)
            for task in self._asr_tasks:
                task.cancel()
            self._outbox.close()
            if self._close is not None:
                await asyncio.gather(writer, return_exceptions=True)
                await self._ws.close(self._close.code, self._close.reason)
            else:
                writer.cancel()
            await asyncio.gather(reader, writer, ticker, *self._asr_tasks, return_exceptions=True)
            self._log.info("session %s closed", self.id)

    async def _loop(self) -> None:
        clock = time.perf_counter
        while self._close is None:
            item = await self._inbox.get()
            if item is _DISCONNECTED:
                return
            if isinstance(item, bytes):
                for frame in self._audio.push(item):
                    self._apply(self._session.handle(frame, clock()))
            else:
                self._apply(self._session.handle(item, clock()))  # type: ignore[arg-type]

    async def _tick(self) -> None:
        """Let the core's timers (playback end, idle) run even when the client sends no audio."""
        while True:
            await asyncio.sleep(0.25)
            await self._inbox.put(Tick())

    async def _read(self) -> None:
        try:
            async for message in self._ws:
                try:
                    item = self._wire.decode(message)
                    if isinstance(item, browser.EnrollmentMessage):
                        await enrollment.channel_for(self._ws, self._components, self._settings).handle(item)
                    elif item is not None:
                        await self._inbox.put(item)
                except ProtocolError as exc:
                    self._log.info("bad client message: %s", exc.code)
                    self._metrics.error(exc.code)
                    for payload in self._wire.encode(ErrorNotice(code=exc.code, message=exc.message)):
                        self._outbox.put(payload)
        except ConnectionClosed:
            pass
        finally:
            await self._inbox.put(_DISCONNECTED)

    async def _write(self) -> None:
        try:
            while (item := await self._outbox.get_item()) is not None:
                await self._wire.send(self._ws, *item)
        except ConnectionClosed:
            await self._inbox.put(_DISCONNECTED)

    # ----------------------------------------------------------------------------------- effects

    def _apply(self, effects: list[Effect]) -> None:
        for effect in effects:
            match effect:
                case Notify(event=event):
                    turn = getattr(event, "turn", None)
                    for payload in self._wire.encode(event):
                        self._outbox.put(payload, turn)
                    self._observe(event)
                case Transcribe(request=request, pcm=pcm):
                    task = asyncio.create_task(self._transcribe(request, pcm))
                    self._asr_tasks.add(task)
                    task.add_done_callback(self._asr_tasks.discard)
                case GenerateReply(turn=turn, history=history):
                    self._spawn(turn, self._reply(turn, history))
                case Synthesize(turn=turn, text=text, sentence=sentence, phrase=phrase):
                    self._speech_for(turn).add(text, sentence, phrase)
                case FinishSynthesis(turn=turn):
                    self._speech_for(turn).finish()
                case CancelTurn(turn=turn):
                    self._cancel_turn(turn)
                    self._outbox.drop_audio(turn)
                case CloseSession():
                    self._close = effect
                case _:
                    assert_never(effect)

    def _observe(self, event: object) -> None:
        if isinstance(event, TurnMetrics):
            self._log_turn(event)
            self._metrics.turn_completed(event)
            self._cancel_turn(event.turn)  # the turn is over: release its bookkeeping
        elif isinstance(event, PlaybackClear):
            self._log.info("barge-in: turn %d interrupted", event.turn)
            self._metrics.barge_in()
        elif isinstance(event, ErrorNotice):
            self._metrics.error(event.code)

    def _spawn(self, turn: int, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        tasks = self._tasks.setdefault(turn, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _speech_for(self, turn: int) -> TurnSpeech:
        speech = self._speech.get(turn)
        if speech is None:
            speech = TurnSpeech(
                turn,
                self._voicing,
                self._output_rate,
                self._wire.frame_ms,
                self._inbox.put,
                self._outbox.wait_for_room,
            )
            self._speech[turn] = speech
        return speech

    def _cancel_turn(self, turn: int) -> None:
        for task in self._tasks.pop(turn, set()):
            task.cancel()
        speech = self._speech.pop(turn, None)
        if speech is not None:
            speech.cancel()

    async def _transcribe(self, request: int, pcm: bytes) -> None:
        try:
            transcript = await self._components.stt.transcribe(pcm)
        except AgentError as exc:
            self._log.warning("transcription %d failed: %s", request, exc)
            await self._inbox.put(TranscriptFailed(request, f"transcription failed: {exc}"))
            return
        await self._inbox.put(TranscriptReady(request, transcript.text))

    async def _reply(self, turn: int, history: tuple[ChatMessage, ...]) -> None:
        try:
            async for delta in self._components.llm.stream_reply(history):
                await self._inbox.put(ReplyDelta(turn, delta))
        except AgentError as exc:
            self._log.warning("reply failed in turn %d: %s", turn, exc)
            await self._inbox.put(StageFailed(turn, "llm", "llm_failed", f"reply generation failed: {exc}"))
            return
        await self._inbox.put(ReplyEnded(turn))

    def _log_turn(self, m: TurnMetrics) -> None:
        self._log.info(
            "turn %d: v2v=%s endpoint=%s asr=%s llm_first=%s tts_first=%s audio=%dms interrupted=%s spec=%s",
            m.turn,
            m.voice_to_voice_ms,
            m.endpoint_ms,
            m.asr_ms,
            m.llm_first_text_ms,
            m.tts_first_audio_ms,
            m.reply_audio_ms,
            m.interrupted,
            m.speculative_asr,
        )
