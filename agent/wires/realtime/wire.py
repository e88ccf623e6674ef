"""The OpenAI Realtime-compatible path (``/v1/realtime``): the ``RealtimeWire`` a ``Connection`` runs on.

The session starts at the upgrade (``session.created``); the client may then change it (``session.update``:
``Reconfigure``). Caller audio arrives base64 in ``input_audio_buffer.append`` (PCM16 24 kHz, or G.711 μ-law /
A-law 8 kHz) and goes to the core as PCM. The conversation is a list of items: the wire names the core's
turns as items (the caller's utterance of turn ``n`` is a user item, its reply an assistant item and a
response) and maps the client's item ids back to turns for ``conversation.item.truncate`` / ``.delete``.
Reply audio stays raw PCM in the outbox (so backpressure and barge-in work as on ``/ws``) and becomes
``response.output_audio.delta`` in ``send``. A response is done (``response.done``) once its audio and text
are all sent, or when it is cancelled: by the caller's speech (``turn_detected``), or by the client
(``response.cancel``, ``conversation.item.truncate``: ``client_cancelled``); one cut short by a failure (a
stage timed out) has ``failed``, with the error. A transcript carries its audio's
duration as ``usage`` (from the speech events, or the committed audio). Function calling is the client's: the
tools of ``session.update`` are the ones the model may call (``agent.wires.realtime.tools``), a call is a
``function_call`` item of the response (whose reply ends there), and the client's ``function_call_output``
item joins the conversation for the response it asks for next.
"""

from __future__ import annotations

import base64
from collections import deque
from typing import assert_never

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.core.events import (
    AddMessage,
    AudioChunk,
    AudioEnd,
    AudioStart,
    CancelResponse,
    ClearInput,
    CommitInput,
    CreateResponse,
    DeleteMessage,
    ErrorNotice,
    InputCleared,
    InputCommitted,
    MessageAdded,
    MessageDeleted,
    PlaybackClear,
    PlaybackPause,
    ReplyText,
    ReplyTruncated,
    ServerEvent,
    SessionEnded,
    SpeechStarted,
    SpeechStopped,
    ToolCalled,
    ToolOutputAdded,
    ToolResult,
    TranscriptText,
    TruncateReply,
    TurnMetrics,
)
from agent.core.tools import NOT_YOUR_CALL
from agent.runtime.call.outbox import Payload
from agent.runtime.call.socket import CallSocket
from agent.runtime.call.wire import Inbound, Reconfigure
from agent.wires.realtime import codec as realtime
from agent.wires.realtime import formats
from agent.wires.realtime.events import Dialect, SessionView, error_type
from agent.wires.realtime.fields import RealtimeError
from agent.wires.realtime.formats import FORMAT_RATES
from agent.wires.realtime.items import Items
from agent.wires.realtime.reconfigure import reconfigure
from agent.wires.realtime.responses import Responses
from agent.wires.realtime.session_update import SessionPatch
from agent.wires.realtime.tools import output_item, same_tools
from agent.wires.realtime.utterances import Utterances

DETECTOR_RATE = 16000
_KEEP_OUTPUTS = 16
_CALL_REFUSALS = ("unknown_call", NOT_YOUR_CALL)
"""The core's refusals of a ``function_call_output`` item: the call is none of the conversation's, or not the
client's (a server tool's)."""


class RealtimeWire:
    """One Realtime client: decode its events, name the core's turns as items and responses, encode ours."""

    can_pause = False
    pause_overrun_ms = 0
    phone_line = False

    def __init__(self, view: SessionView, frame_ms: int, *, beta: bool) -> None:
        self.view = view
        self._frame_ms = frame_ms
        self._out = Dialect(beta=beta)
        self._items = Items()
        self._responses = Responses(self._out, self._items, lambda: self.view)
        self._utterances = Utterances(self._out, self._items)
        self._added: deque[str | None] = deque()  # per AddMessage sent: the client's item id, if it gave one
        self._outputs: dict[str, str | None] = {}  # per ToolResult sent, by call: the client's item id, if any
        self._output_asked: str | None = None  # the call whose result the request being handled gives
        self._client_stop: int | None = None  # the turn whose response the client's request just stopped
        self._client_event: str | None = None  # the event_id of the client event being handled
        self._refusal: RealtimeError | None = None

    # -------------------------------------------------------------------------------------- Wire

    @property
    def input_rate(self) -> int:
        return FORMAT_RATES[self.view.input_format]

    @property
    def output_rate(self) -> int:
        return FORMAT_RATES[self.view.output_format]

    @property
    def frame_ms(self) -> int:
        return self._frame_ms

    def opening(self, session_id: str, voice: str) -> list[Payload]:
        self.view.voice = voice
        return [self._out.session("session.created", self.view)]

    def decode(self, message: str | bytes) -> Inbound:
        self._refusal = None
        self._output_asked = None
        self._client_stop = None  # what a request stops, it stops while it is handled (before the next one)
        event_id = None
        try:
            event = realtime.decode(message)
            self._client_event = event_id = event.event_id
            return self._request(event)
        except RealtimeError as exc:
            exc.event_id = exc.event_id or event_id  # refused here, not by the codec: the event is this one
            self._refusal = exc
            raise

    def encode(self, event: ServerEvent) -> list[Payload]:
        match event:
            case SpeechStarted(audio_ms=audio_ms):
                return self._utterances.started(audio_ms)
            case SpeechStopped(turn=turn, audio_ms=audio_ms):
                return self._utterances.stopped(turn, audio_ms)
            case InputCommitted(turn=turn, audio_ms=audio_ms):
                return self._utterances.committed(turn, audio_ms)
            case TranscriptText():
                return self._utterances.transcribed(event)
            case ReplyText() | AudioStart() | AudioEnd():
                return self._responses.reply(event)
            case ToolCalled():
                return self._responses.called(event)
            case ToolOutputAdded(turn=turn, call_id=call_id, output=output):
                item = self._outputs.pop(call_id, None) or self._out.new_id("item")
                previous = self._items.add_call(turn, "function_call_output", call_id, item)
                return [*self._out.item_added(output_item(item, call_id, output), previous)]
            case AudioChunk(pcm=pcm):
                return [pcm]  # raw until ``send``: the outbox counts it and drops it on barge-in
            case PlaybackClear(turn=turn):
                return self._responses.finish(turn, "cancelled", self._cancel_reason(turn))
            case TurnMetrics(turn=turn, interrupted=interrupted):
                response = self._responses.get(turn)
                if interrupted and response is not None and response.error is not None:
                    return self._responses.finish(turn, "failed")
                if interrupted:
                    return self._responses.finish(turn, "cancelled", self._cancel_reason(turn))
                return self._responses.finish(turn, "completed")
            case MessageAdded(turn=turn, role=role, text=text):
                client = self._added.popleft() if self._added else None
                item = client or self._out.new_id("item")
                previous = self._items.add(turn, role, item)
                return [*self._out.item_added(self._out.text_item(item, role, text), previous)]
            case MessageDeleted(turn=turn, role=role):
                return [
                    self._out.event("conversation.item.deleted", item_id=gone)
                    for gone in self._items.remove(turn, role)
                ]
            case ReplyTruncated(turn=turn, audio_ms=audio_ms):
                item = self._items.of(turn, "assistant") or ""
                return [
                    self._out.event("conversation.item.truncated", item_id=item, content_index=0, audio_end_ms=audio_ms)
                ]
            case InputCleared():
                return [self._out.event("input_audio_buffer.cleared")]
            case ErrorNotice(code=code, message=message, turn=turn):
                if turn is not None and (failed := self._responses.get(turn)) is not None:
                    failed.error = {"type": error_type(code), "code": code, "message": message}
                self._unqueue(code)
                refusal, self._refusal = self._refusal, None
                if refusal is not None and refusal.code == code:
                    return [self._out.error(code, message, refusal.param, refusal.event_id)]
                param = "item.call_id" if code in _CALL_REFUSALS else None
                return [self._out.error(code, message, param, self._client_event)]
            case PlaybackPause() | SessionEnded():
                return []
            case _:
                assert_never(event)

    async def send(self, ws: CallSocket, turn: int | None, payload: Payload) -> None:
        if isinstance(payload, bytes):
            response = self._responses.get(turn) if turn is not None else None
            if response is None or response.item_id is None:
                return
            delta = base64.b64encode(formats.from_pcm(self.view.output_format, payload)).decode("ascii")
            payload = self._out.audio_delta(response.id, response.item_id, response.index, delta)
        await ws.send(payload)

    # --------------------------------------------------------------------------------- client events

    def _request(self, event: realtime.ClientEvent) -> Inbound:
        match event:
            case realtime.SessionUpdate(patch=patch):
                return self._update(patch)
            case realtime.AudioAppend(audio=audio):
                return formats.to_pcm(self.view.input_format, audio, "audio")
            case realtime.AudioCommit():
                self._utterances.commit(None)
                return CommitInput()
            case realtime.AudioClear():
                return ClearInput()
            case realtime.ItemCreate():
                return self._create(event)
            case realtime.OutputCreate():
                return self._output(event)
            case realtime.ItemTruncate(item_id=item_id, audio_end_ms=audio_end_ms):
                entry = self._items.find(item_id)
                if entry.kind != "assistant":
                    raise RealtimeError("invalid_value", "only assistant audio can be truncated", "item_id")
                self._client_stop = entry.turn  # a response still going stops there
                return TruncateReply(entry.turn, audio_end_ms)
            case realtime.ItemDelete(item_id=item_id):
                entry = self._items.find(item_id)
                return DeleteMessage(entry.turn, entry.message)  # a call goes with its reply (and its result)
            case realtime.ResponseCreate(instructions=instructions, metadata=metadata):
                same_tools(event.tools, event.tool_choice, (self.view.tools, self.view.tool_choice))
                self._responses.requested(metadata)
                return CreateResponse(instructions)
            case realtime.ResponseCancel(response_id=response_id):
                if response_id is not None and not self._responses.exists(response_id):
                    raise RealtimeError("invalid_value", f"no response {response_id!r}", "response_id")
                going = self._responses.going()
                self._client_stop = going[-1] if going else None
                return CancelResponse()
            case _:
                assert_never(event)

    def _unqueue(self, code: str) -> None:
        """The core refused the request just made: what was queued for its answer is not wanted."""
        self._client_stop = None  # a refused cancel or truncate stopped nothing
        if code in ("input_audio_buffer_commit_empty", "rate_limited"):
            # rate_limited: an audio item over the input budget was dropped before the core saw it (a commit the
            # core takes is answered at once, so one still queued here is the one just dropped)
            self._utterances.refused()
        elif code == "conversation_already_has_active_response":
            self._responses.refused()
        elif code in _CALL_REFUSALS and self._output_asked is not None:
            self._outputs.pop(self._output_asked, None)

    def _at_the_end(self, previous_item_id: str | None, item_id: str | None) -> None:
        """Refuses an item the client would put anywhere but at the end, or under the id of another."""
        if previous_item_id not in (None, self._items.last):
            raise RealtimeError(
                "unsupported_parameter", "items can only be added at the end of the conversation", "previous_item_id"
            )
        if item_id is not None and (item_id in self._items or item_id in self._outputs.values()):
            raise RealtimeError("invalid_value", f"an item {item_id!r} already exists", "item.id")

    def _create(self, event: realtime.ItemCreate) -> Inbound:
        self._at_the_end(event.previous_item_id, event.item_id)
        if event.audio is not None:
            pcm = formats.to_pcm(self.view.input_format, event.audio, "item.content[0].audio")
            if self.input_rate != DETECTOR_RATE:
                pcm = float_to_pcm16(resample(pcm16_to_float(pcm), self.input_rate, DETECTOR_RATE))
            self._utterances.commit(event.item_id or self._out.new_id("item"))
            return CommitInput(pcm)
        assert event.text is not None
        self._added.append(event.item_id)
        return AddMessage(event.role, event.text)

    def _output(self, event: realtime.OutputCreate) -> ToolResult:
        """The client's result of the model's call: the core adds it to the conversation (``ToolOutputAdded``)."""
        self._at_the_end(event.previous_item_id, event.item_id)
        if self._items.call("function_call_output", event.call_id) is not None:
            raise RealtimeError("invalid_value", f"call {event.call_id!r} already has its output", "item.call_id")
        self._outputs[event.call_id] = event.item_id
        while len(self._outputs) > _KEEP_OUTPUTS:  # results the core never took (it refused them)
            del self._outputs[next(iter(self._outputs))]
        self._output_asked = event.call_id
        return ToolResult(event.call_id, event.output)

    def _update(self, patch: SessionPatch) -> Reconfigure:
        def applied(view: SessionView) -> list[Payload]:
            self.view = view
            return [self._out.session("session.updated", view)]

        return reconfigure(self.view, patch, self._responses.answered, applied)

    # ---------------------------------------------------------------------------------- responses

    def _cancel_reason(self, turn: int) -> str:
        """Why turn ``turn``'s response was cancelled: the client's request, or the caller's speech (barge-in, or
        a newer turn that superseded it)."""
        return "client_cancelled" if turn == self._client_stop else "turn_detected"

    def summary(self) -> None:
        return None  # the connection's own lines say it all
