"""Every event the Realtime wire sends, driven on the event loop, conforms to the official models."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

from agent.core.events import (
    AudioChunk,
    AudioEnd,
    AudioStart,
    ErrorNotice,
    InputCleared,
    InputCommitted,
    MessageAdded,
    MessageDeleted,
    PlaybackClear,
    ReplyText,
    ReplyTruncated,
    SpeechStarted,
    SpeechStopped,
    TranscriptText,
)
from agent.runtime.call.socket import CallSocket
from agent.wires.realtime.codec import RealtimeError
from agent.wires.realtime.wire import RealtimeWire
from tests.unit.test_realtime_conformance import (
    conforming,
    metrics,
    sent,
    update,
    wire,
)

GA_EMITTED = frozenset(
    {
        "session.created",
        "session.updated",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "input_audio_buffer.cleared",
        "conversation.item.added",
        "conversation.item.done",
        "conversation.item.input_audio_transcription.completed",
        "conversation.item.truncated",
        "conversation.item.deleted",
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_audio.delta",
        "response.output_audio.done",
        "response.output_audio_transcript.delta",
        "response.output_audio_transcript.done",
        "response.done",
        "error",
    }
)


BETA_NAMES = {
    "conversation.item.added": "conversation.item.created",
    "response.output_audio.delta": "response.audio.delta",
    "response.output_audio.done": "response.audio.done",
    "response.output_audio_transcript.delta": "response.audio_transcript.delta",
    "response.output_audio_transcript.done": "response.audio_transcript.done",
}


BETA_EMITTED = frozenset(BETA_NAMES.get(kind, kind) for kind in GA_EMITTED - {"conversation.item.done"})


def request(w: RealtimeWire, event: dict[str, Any]) -> None:
    w.decode(json.dumps(event))


class Socket:
    def __init__(self) -> None:
        self.sent: list[str | bytes] = []

    async def send(self, message: str | bytes, /) -> None:
        self.sent.append(message)


async def audio_sent(w: RealtimeWire, turn: int, payloads: list[Any]) -> list[dict[str, Any]]:
    """What the client gets of ``payloads`` (reply audio becomes ``response.output_audio.delta`` in ``send``)."""
    socket = Socket()
    for payload in payloads:
        await w.send(cast(CallSocket, socket), turn, payload)  # the one method the wire uses
    return sent(socket.sent)


async def a_session(beta: bool) -> list[dict[str, Any]]:
    """A session that makes the wire send every event it has, as its client would get them."""
    w = wire(beta)
    out = sent(w.opening("sess_1", "local-preview"))
    transcription = {"model": "gpt-4o-transcribe", "language": "de"}
    session = (
        {"input_audio_transcription": transcription} if beta else {"audio": {"input": {"transcription": transcription}}}
    )
    out += sent(update(w, session).applied("alice"))
    # A spoken turn, transcribed and answered.
    out += sent(w.encode(SpeechStarted(1000)))
    out += sent(w.encode(SpeechStopped(1, 2500)))
    out += sent(w.encode(TranscriptText(1, "Wie spät ist es?", language="de")))
    out += sent(w.encode(ReplyText(1, "Halb ", done=False)))
    out += sent(w.encode(AudioStart(1, 24000)))
    out += await audio_sent(w, 1, w.encode(AudioChunk(1, b"\x01\x00" * 480)))
    reply_item = next(e for e in out if e["type"] == "response.output_item.added")["item"]["id"]
    out += sent(w.encode(ReplyText(1, "Halb vier.", done=True)))
    out += sent(w.encode(AudioEnd(1)))
    out += sent(w.encode(metrics(1)))
    request(w, {"type": "conversation.item.truncate", "item_id": reply_item, "content_index": 0, "audio_end_ms": 200})
    out += sent(w.encode(ReplyTruncated(1, 200)))
    # The client commits audio, adds a message, deletes an item, clears the buffer.
    request(w, {"type": "input_audio_buffer.commit"})
    out += sent(w.encode(InputCommitted(2, 1500)))
    out += sent(w.encode(TranscriptText(2, "Danke.", language="de")))
    text = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Und?"}]}
    request(w, {"type": "conversation.item.create", "item": text})
    out += sent(w.encode(MessageAdded(3, "user", "Und?")))
    user_item = next(e for e in out if e["type"] == "input_audio_buffer.committed")["item_id"]
    request(w, {"type": "conversation.item.delete", "item_id": user_item})
    out += sent(w.encode(MessageDeleted(1, "user")))
    request(w, {"type": "input_audio_buffer.clear"})
    out += sent(w.encode(InputCleared()))
    # A response the client cancels, one the caller talks over, one that fails, and a refusal.
    request(w, {"type": "response.create", "response": {"metadata": {"topic": "time"}}})
    out += sent(w.encode(ReplyText(4, "Es war einmal", done=False)))
    out += sent(w.encode(AudioStart(4, 24000)))
    request(w, {"type": "response.cancel"})
    out += sent(w.encode(PlaybackClear(4)))
    out += sent(w.encode(metrics(4, interrupted=True)))
    out += sent(w.encode(ReplyText(5, "Noch", done=False)))
    out += sent(w.encode(AudioStart(5, 24000)))
    out += sent(w.encode(PlaybackClear(5)))
    out += sent(w.encode(metrics(5, interrupted=True)))
    out += sent(w.encode(ReplyText(6, "Also", done=False)))
    out += sent(w.encode(ErrorNotice("llm_timeout", "the reply took too long", turn=6)))
    out += sent(w.encode(metrics(6, interrupted=True)))
    with pytest.raises(RealtimeError) as info:
        request(w, {"type": "session.update", "event_id": "evt_x", "session": {"bogus": 1}})
    out += sent(w.encode(ErrorNotice(info.value.code, info.value.message)))
    return out


@pytest.mark.parametrize("beta", [False, True], ids=["ga", "beta"])
async def test_every_event_the_wire_sends_conforms_to_the_official_models(beta: bool) -> None:
    events = await a_session(beta)
    assert {e["type"] for e in events} == (BETA_EMITTED if beta else GA_EMITTED)
    for event in events:
        conforming(event, beta=beta)
