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
duration as ``usage`` (from the speech events, or the committed audio).
"""

from __future__ import annotations

import base64
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from agent.audio import alaw, mulaw
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
    TranscriptText,
    TruncateReply,
    TurnMetrics,
)
from agent.core.turn_state import SessionConfig
from agent.ports import Role
from agent.runtime.call.outbox import Payload
from agent.runtime.call.socket import CallSocket
from agent.runtime.call.wire import Inbound, Reconfigure
from agent.wires.realtime import codec as realtime
from agent.wires.realtime.codec import FORMAT_RATES, UNSET, AudioFormat, RealtimeError
from agent.wires.realtime.events import Dialect, SessionView, Status, error_type
from agent.wires.realtime.turn_detection import turn_rules

DETECTOR_RATE = 16000
_KEEP_RESPONSES = 16
_KEEP_DURATIONS = 16


@dataclass(slots=True)
class _Response:
    id: str
    item_id: str
    metadata: dict[str, Any]
    text: list[str] = field(default_factory=list)
    transcript: str | None = None
    """The whole reply text, once known (``reply.done``)."""
    audio_started: bool = False
    audio_done: bool = False
    done: bool = False
    error: dict[str, str] | None = None
    """What failed in its turn (``ErrorNotice``): a response that then ends cut short has ``failed``."""


class RealtimeWire:
    """One Realtime client: decode its events, name the core's turns as items and responses, encode ours."""

    can_pause = False

    def __init__(self, view: SessionView, frame_ms: int, *, beta: bool) -> None:
        self.view = view
        self._frame_ms = frame_ms
        self._out = Dialect(beta=beta)
        self._items: dict[str, tuple[int, Role]] = {}
        self._by_turn: dict[tuple[int, Role], str] = {}
        self._last_item: str | None = None
        self._speech_item: str | None = None
        self._commits: deque[str | None] = deque()  # per CommitInput sent: the client's item id (None: the buffer)
        self._added: deque[str | None] = deque()  # per AddMessage sent: the client's item id, if it gave one
        self._responses: dict[int, _Response] = {}
        self._metadata: deque[dict[str, Any]] = deque()  # per CreateResponse sent
        self._client_stop: int | None = None  # the turn whose response the client's request just stopped
        self._speech_start_ms: int | None = None  # where the caller's utterance in progress began
        self._heard_ms: dict[int, int] = {}  # per turn: how long the audio of its user item is
        self._answered = False  # a response has started: the output format is fixed
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
        self._client_stop = None  # what a request stops, it stops while it is handled (before the next one)
        try:
            event = realtime.decode(message)
            self._client_event = event.event_id
            return self._request(event)
        except RealtimeError as exc:
            self._refusal = exc
            raise

    def encode(self, event: ServerEvent) -> list[Payload]:
        match event:
            case SpeechStarted(audio_ms=audio_ms):
                self._speech_item = item = self._speech_item or self._out.new_id("item")
                self._speech_start_ms = audio_ms
                return [self._out.event("input_audio_buffer.speech_started", audio_start_ms=audio_ms, item_id=item)]
            case SpeechStopped(turn=turn, audio_ms=audio_ms):
                item = self._speech_item or self._out.new_id("item")
                self._speech_item = None
                start, self._speech_start_ms = self._speech_start_ms, None
                self._heard(turn, 0 if start is None else audio_ms - start)
                stopped = self._out.event("input_audio_buffer.speech_stopped", audio_end_ms=audio_ms, item_id=item)
                return [stopped, *self._committed(turn, item, client=False)]
            case InputCommitted(turn=turn, audio_ms=audio_ms):
                client = self._commits.popleft() if self._commits else None
                self._heard(turn, audio_ms)
                return self._committed(turn, client or self._out.new_id("item"), client=client is not None)
            case TranscriptText():
                return self._transcribed(event)
            case ReplyText() | AudioStart() | AudioEnd():
                return self._reply(event)
            case AudioChunk(pcm=pcm):
                return [pcm]  # raw until ``send``: the outbox counts it and drops it on barge-in
            case PlaybackClear(turn=turn):
                return self._finish(turn, "cancelled", self._cancel_reason(turn))
            case TurnMetrics(turn=turn, interrupted=interrupted):
                response = self._responses.get(turn)
                if interrupted and response is not None and response.error is not None:
                    return self._finish(turn, "failed")
                if interrupted:
                    return self._finish(turn, "cancelled", self._cancel_reason(turn))
                return self._finish(turn, "completed")
            case MessageAdded(turn=turn, role=role, text=text):
                client = self._added.popleft() if self._added else None
                item = client or self._out.new_id("item")
                previous = self._register(turn, role, item)
                return [*self._out.item_added(self._out.text_item(item, role, text), previous)]
            case MessageDeleted(turn=turn, role=role):
                key: tuple[int, Role] = (turn, role)
                if key not in self._by_turn:
                    return []
                item = self._by_turn.pop(key)
                del self._items[item]
                return [self._out.event("conversation.item.deleted", item_id=item)]
            case ReplyTruncated(turn=turn, audio_ms=audio_ms):
                item = self._by_turn.get((turn, "assistant"), "")
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
                return [self._out.error(code, message, None, self._client_event)]
            case PlaybackPause() | SessionEnded():
                return []
            case _:
                assert_never(event)

    async def send(self, ws: CallSocket, turn: int | None, payload: Payload) -> None:
        if isinstance(payload, bytes):
            response = self._responses.get(turn) if turn is not None else None
            if response is None:
                return
            delta = base64.b64encode(self._encode_audio(payload)).decode("ascii")
            payload = self._out.audio_delta(response.id, response.item_id, delta)
        await ws.send(payload)

    # --------------------------------------------------------------------------------- client events

    def _request(self, event: realtime.ClientEvent) -> Inbound:
        match event:
            case realtime.SessionUpdate(patch=patch):
                return self._update(patch)
            case realtime.AudioAppend(audio=audio):
                return self._decode_audio(audio, "audio")
            case realtime.AudioCommit():
                self._commits.append(None)
                return CommitInput()
            case realtime.AudioClear():
                return ClearInput()
            case realtime.ItemCreate():
                return self._create(event)
            case realtime.ItemTruncate(item_id=item_id, audio_end_ms=audio_end_ms):
                turn, role = self._item(item_id)
                if role != "assistant":
                    raise RealtimeError("invalid_value", "only assistant audio can be truncated", "item_id")
                self._client_stop = turn  # a response still going stops there
                return TruncateReply(turn, audio_end_ms)
            case realtime.ItemDelete(item_id=item_id):
                return DeleteMessage(*self._item(item_id))
            case realtime.ResponseCreate(instructions=instructions, metadata=metadata):
                self._metadata.append(metadata)
                return CreateResponse(instructions)
            case realtime.ResponseCancel(response_id=response_id):
                if response_id is not None and not any(r.id == response_id for r in self._responses.values()):
                    raise RealtimeError("invalid_value", f"no response {response_id!r}", "response_id")
                going = [turn for turn, response in self._responses.items() if not response.done]
                self._client_stop = going[-1] if going else None
                return CancelResponse()
            case _:
                assert_never(event)

    def _unqueue(self, code: str) -> None:
        """The core refused the request just made: what was queued for its answer is not wanted."""
        self._client_stop = None  # a refused cancel or truncate stopped nothing
        if code in ("input_audio_buffer_commit_empty", "rate_limited") and self._commits:
            # rate_limited: an audio item over the input budget was dropped before the core saw it (a commit the
            # core takes is answered at once, so one still queued here is the one just dropped)
            self._commits.pop()
        elif code == "conversation_already_has_active_response" and self._metadata:
            self._metadata.pop()

    def _item(self, item_id: str) -> tuple[int, Role]:
        found = self._items.get(item_id)
        if found is None:
            raise RealtimeError("item_not_found", f"no item {item_id!r} in the conversation", "item_id")
        return found

    def _create(self, event: realtime.ItemCreate) -> Inbound:
        if event.previous_item_id not in (None, self._last_item):
            raise RealtimeError(
                "unsupported_parameter", "items can only be added at the end of the conversation", "previous_item_id"
            )
        if event.item_id is not None and event.item_id in self._items:
            raise RealtimeError("invalid_value", f"an item {event.item_id!r} already exists", "item.id")
        if event.audio is not None:
            pcm = self._decode_audio(event.audio, "item.content[0].audio")
            if self.input_rate != DETECTOR_RATE:
                pcm = float_to_pcm16(resample(pcm16_to_float(pcm), self.input_rate, DETECTOR_RATE))
            self._commits.append(event.item_id or self._out.new_id("item"))
            return CommitInput(pcm)
        assert event.text is not None
        self._added.append(event.item_id)
        return AddMessage(event.role, event.text)

    def _update(self, patch: realtime.SessionPatch) -> Reconfigure:
        view = self.view
        if patch.output_format not in (None, view.output_format) and self._answered:
            raise RealtimeError(
                "invalid_value",
                "the output format cannot change once audio has been sent",
                "session.audio.output.format",
            )
        changed = replace(
            view,
            instructions=view.instructions if patch.instructions is None else patch.instructions,
            input_format=patch.input_format or view.input_format,
            output_format=patch.output_format or view.output_format,
            turn_detection=view.turn_detection if patch.turn_detection is UNSET else patch.turn_detection,  # type: ignore[arg-type]
            transcription_model=patch.transcription_model or view.transcription_model,
            language=patch.language if isinstance(patch.language, str | None) else view.language,
        )
        detection = changed.turn_detection

        def rules(current: SessionConfig, base: SessionConfig) -> SessionConfig:
            config = turn_rules(current, base, detection)
            return replace(
                config, system_prompt=changed.instructions, output_sample_rate=FORMAT_RATES[changed.output_format]
            )

        def applied(voice: str) -> list[Payload]:
            self.view = replace(changed, voice=voice)
            return [self._out.session("session.updated", self.view)]

        threshold = detection.threshold if detection is not None else None
        language_set = patch.language is not UNSET
        return Reconfigure(patch.voice, threshold, rules, applied, language_set, changed.language)

    # ------------------------------------------------------------------------------------ audio

    def _decode_audio(self, audio: bytes, param: str) -> bytes:
        fmt: AudioFormat = self.view.input_format
        if fmt == "g711_ulaw":
            return mulaw.decode(audio)
        if fmt == "g711_alaw":
            return alaw.decode(audio)
        if len(audio) % 2:
            raise RealtimeError("invalid_value", "pcm16 audio must be whole 16-bit samples", param)
        return audio

    def _encode_audio(self, pcm: bytes) -> bytes:
        fmt = self.view.output_format
        if fmt == "g711_ulaw":
            return mulaw.encode(pcm)
        if fmt == "g711_alaw":
            return alaw.encode(pcm)
        return pcm

    # -------------------------------------------------------------------------------------- items

    def _register(self, turn: int, role: Role, item: str) -> str | None:
        """``item`` is turn ``turn``'s ``role`` message, appended to the conversation; returns the item before."""
        previous, self._last_item = self._last_item, item
        self._items[item] = (turn, role)
        self._by_turn[(turn, role)] = item
        return previous

    def _committed(self, turn: int, item: str, *, client: bool) -> list[Payload]:
        previous = self._register(turn, "user", item)
        out = self._out
        committed = (
            [] if client else [out.event("input_audio_buffer.committed", previous_item_id=previous, item_id=item)]
        )
        return [*committed, *out.item_added(out.user_audio_item(item, None, "in_progress"), previous)]

    def _heard(self, turn: int, audio_ms: int) -> None:
        self._heard_ms[turn] = max(0, audio_ms)
        while len(self._heard_ms) > _KEEP_DURATIONS:
            del self._heard_ms[next(iter(self._heard_ms))]

    def _transcribed(self, event: TranscriptText) -> list[Payload]:
        turn, text = event.turn, event.text
        item = self._by_turn.get((turn, "user"))
        if item is None:
            return []
        out = self._out
        audio_ms = self._heard_ms.get(turn, 0)
        if event.continues is not None:  # the transcript is of both utterances
            audio_ms += self._heard_ms.get(event.continues, 0)
        payloads: list[Payload] = [out.transcription_completed(item, text, audio_ms / 1000, event.language)]
        if not out.beta:
            payloads.append(out.event("conversation.item.done", item=out.user_audio_item(item, text)))
        return payloads

    # ---------------------------------------------------------------------------------- responses

    def _reply(self, event: ReplyText | AudioStart | AudioEnd) -> list[Payload]:
        payloads, response = self._started(event.turn)
        out = self._out
        if isinstance(event, AudioStart):
            response.audio_started = True
        elif isinstance(event, AudioEnd):
            response.audio_done = True
            payloads.append(out.audio_done(response.id, response.item_id))
        elif not event.done:
            response.text.append(event.text)
            payloads.append(out.transcript_delta(response.id, response.item_id, event.text))
        elif response.transcript is None:
            response.transcript = event.text
            payloads.append(out.transcript_done(response.id, response.item_id, event.text))
        if response.transcript is not None and response.audio_done:
            payloads += self._finish(event.turn, "completed")
        return payloads

    def _started(self, turn: int) -> tuple[list[Payload], _Response]:
        """The response of ``turn``, announced now if it is new (``response.created``, its item and part)."""
        response = self._responses.get(turn)
        if response is not None:
            return [], response
        out = self._out
        metadata = self._metadata.popleft() if self._metadata else {}
        response = self._responses[turn] = _Response(out.new_id("resp"), out.new_id("item"), metadata)
        while len(self._responses) > _KEEP_RESPONSES:
            del self._responses[next(iter(self._responses))]
        self._answered = True
        previous = self._register(turn, "assistant", response.item_id)
        item = out.reply_item(response.item_id, None, "in_progress")
        rid, iid = response.id, response.item_id
        payloads: list[Payload] = [
            out.event("response.created", response=self._response_body(response, "in_progress", [])),
            out.event("response.output_item.added", response_id=rid, output_index=0, item=item),
        ]
        if not out.beta:
            payloads.append(out.event("conversation.item.added", previous_item_id=previous, item=item))
        payloads.append(out.content_part("response.content_part.added", rid, iid, ""))
        return payloads, response

    def _cancel_reason(self, turn: int) -> str:
        """Why turn ``turn``'s response was cancelled: the client's request, or the caller's speech (barge-in, or
        a newer turn that superseded it)."""
        return "client_cancelled" if turn == self._client_stop else "turn_detected"

    def _finish(self, turn: int, status: Status, reason: str | None = None) -> list[Payload]:
        response = self._responses.get(turn)
        if response is None or response.done:
            return []
        response.done = True
        out = self._out
        rid, iid = response.id, response.item_id
        transcript = response.transcript if response.transcript is not None else "".join(response.text)
        payloads: list[Payload] = []
        if response.audio_started and not response.audio_done:
            payloads.append(out.audio_done(rid, iid))
        if response.transcript is None:
            payloads.append(out.transcript_done(rid, iid, transcript))
        item = out.reply_item(iid, transcript, "completed" if status == "completed" else "incomplete")
        payloads += [
            out.content_part("response.content_part.done", rid, iid, transcript),
            out.event("response.output_item.done", response_id=rid, output_index=0, item=item),
        ]
        if not out.beta:
            payloads.append(out.event("conversation.item.done", item=item))
        body = self._response_body(response, status, [item], reason)
        return [*payloads, out.event("response.done", response=body)]

    def _response_body(
        self, response: _Response, status: Status, output: list[dict[str, Any]], reason: str | None = None
    ) -> dict[str, Any]:
        view = self.view
        error = response.error if status == "failed" else None
        return self._out.response(
            response.id, status, output, response.metadata, view.output_format, view.voice, reason, error
        )
