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
from dataclasses import replace
from functools import partial
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
    TranscriptText,
    TruncateReply,
    TurnMetrics,
)
from agent.core.policies import SessionConfig
from agent.runtime.call.outbox import Payload
from agent.runtime.call.socket import CallSocket
from agent.runtime.call.wire import Inbound, Reconfigure
from agent.wires.realtime import codec as realtime
from agent.wires.realtime import formats
from agent.wires.realtime.events import Dialect, SessionView, error_type
from agent.wires.realtime.fields import RealtimeError
from agent.wires.realtime.formats import FORMAT_RATES
from agent.wires.realtime.items import Items
from agent.wires.realtime.responses import Responses
from agent.wires.realtime.session_update import UNSET, SessionPatch
from agent.wires.realtime.turn_detection import turn_rules
from agent.wires.realtime.voices import find_voice

DETECTOR_RATE = 16000
_KEEP_DURATIONS = 16


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
        self._speech_item: str | None = None
        self._commits: deque[str | None] = deque()  # per CommitInput sent: the client's item id (None: the buffer)
        self._added: deque[str | None] = deque()  # per AddMessage sent: the client's item id, if it gave one
        self._client_stop: int | None = None  # the turn whose response the client's request just stopped
        self._speech_start_ms: int | None = None  # where the caller's utterance in progress began
        self._heard_ms: dict[int, int] = {}  # per turn: how long the audio of its user item is
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
                return self._responses.reply(event)
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
                deleted = self._items.remove(turn, role)
                if deleted is None:
                    return []
                return [self._out.event("conversation.item.deleted", item_id=deleted)]
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
            delta = base64.b64encode(formats.from_pcm(self.view.output_format, payload)).decode("ascii")
            payload = self._out.audio_delta(response.id, response.item_id, delta)
        await ws.send(payload)

    # --------------------------------------------------------------------------------- client events

    def _request(self, event: realtime.ClientEvent) -> Inbound:
        match event:
            case realtime.SessionUpdate(patch=patch):
                return self._update(patch)
            case realtime.AudioAppend(audio=audio):
                return formats.to_pcm(self.view.input_format, audio, "audio")
            case realtime.AudioCommit():
                self._commits.append(None)
                return CommitInput()
            case realtime.AudioClear():
                return ClearInput()
            case realtime.ItemCreate():
                return self._create(event)
            case realtime.ItemTruncate(item_id=item_id, audio_end_ms=audio_end_ms):
                turn, role = self._items.find(item_id)
                if role != "assistant":
                    raise RealtimeError("invalid_value", "only assistant audio can be truncated", "item_id")
                self._client_stop = turn  # a response still going stops there
                return TruncateReply(turn, audio_end_ms)
            case realtime.ItemDelete(item_id=item_id):
                return DeleteMessage(*self._items.find(item_id))
            case realtime.ResponseCreate(instructions=instructions, metadata=metadata):
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
        if code in ("input_audio_buffer_commit_empty", "rate_limited") and self._commits:
            # rate_limited: an audio item over the input budget was dropped before the core saw it (a commit the
            # core takes is answered at once, so one still queued here is the one just dropped)
            self._commits.pop()
        elif code == "conversation_already_has_active_response":
            self._responses.refused()

    def _create(self, event: realtime.ItemCreate) -> Inbound:
        if event.previous_item_id not in (None, self._items.last):
            raise RealtimeError(
                "unsupported_parameter", "items can only be added at the end of the conversation", "previous_item_id"
            )
        if event.item_id is not None and event.item_id in self._items:
            raise RealtimeError("invalid_value", f"an item {event.item_id!r} already exists", "item.id")
        if event.audio is not None:
            pcm = formats.to_pcm(self.view.input_format, event.audio, "item.content[0].audio")
            if self.input_rate != DETECTOR_RATE:
                pcm = float_to_pcm16(resample(pcm16_to_float(pcm), self.input_rate, DETECTOR_RATE))
            self._commits.append(event.item_id or self._out.new_id("item"))
            return CommitInput(pcm)
        assert event.text is not None
        self._added.append(event.item_id)
        return AddMessage(event.role, event.text)

    def _update(self, patch: SessionPatch) -> Reconfigure:
        view = self.view
        if patch.output_format not in (None, view.output_format) and self._responses.answered:
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
        voice = None if patch.voice is None else partial(find_voice, patch.voice)
        return Reconfigure(voice, threshold, rules, applied, language_set, changed.language)

    # -------------------------------------------------------------------------------------- items

    def _committed(self, turn: int, item: str, *, client: bool) -> list[Payload]:
        previous = self._items.add(turn, "user", item)
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
        item = self._items.of(turn, "user")
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

    def _cancel_reason(self, turn: int) -> str:
        """Why turn ``turn``'s response was cancelled: the client's request, or the caller's speech (barge-in, or
        a newer turn that superseded it)."""
        return "client_cancelled" if turn == self._client_stop else "turn_detected"

    def summary(self) -> None:
        return None  # the connection's own lines say it all
