"""The caller's utterances of a Realtime session as user items: their events and bookkeeping (pure).

An utterance the server's turn detection hears is announced as it starts and stops
(``input_audio_buffer.speech_started`` / ``.speech_stopped``), then committed and added as a user item; one the
client commits (``input_audio_buffer.commit``, or an ``input_audio`` item it creates) is added, under the
client's item id if it gave one, when the core takes it. Each item's transcript carries its audio's duration as
``usage`` (a transcript that goes on with an earlier utterance counts both). This module changes when the
input audio events do.
"""

from __future__ import annotations

from collections import deque

from agent.core.events import TranscriptText
from agent.runtime.call.outbox import Payload
from agent.wires.realtime.events import Dialect
from agent.wires.realtime.items import Items

KEEP_DURATIONS = 16


class Utterances:
    """The user items of one session's caller audio."""

    def __init__(self, out: Dialect, items: Items) -> None:
        self._out = out
        self._items = items
        self._speech_item: str | None = None
        self._speech_start_ms: int | None = None  # where the caller's utterance in progress began
        self._commits: deque[str | None] = deque()  # per CommitInput sent: the client's item id (None: the buffer)
        self._heard_ms: dict[int, int] = {}  # per turn: how long the audio of its user item is

    def commit(self, item: str | None) -> None:
        """The client commits its buffer (``None``) or creates the audio item ``item``: the core adds it next."""
        self._commits.append(item)

    def refused(self) -> None:
        """The commit just asked for was refused (nothing to commit), or dropped (over the input budget)."""
        if self._commits:
            self._commits.pop()

    def started(self, audio_ms: int) -> list[Payload]:
        self._speech_item = item = self._speech_item or self._out.new_id("item")
        self._speech_start_ms = audio_ms
        return [self._out.event("input_audio_buffer.speech_started", audio_start_ms=audio_ms, item_id=item)]

    def stopped(self, turn: int, audio_ms: int) -> list[Payload]:
        item = self._speech_item or self._out.new_id("item")
        self._speech_item = None
        start, self._speech_start_ms = self._speech_start_ms, None
        self._heard(turn, 0 if start is None else audio_ms - start)
        stopped = self._out.event("input_audio_buffer.speech_stopped", audio_end_ms=audio_ms, item_id=item)
        return [stopped, *self._added(turn, item, client=False)]

    def committed(self, turn: int, audio_ms: int) -> list[Payload]:
        """The core took the client's commit (the oldest one waiting) as turn ``turn``'s utterance."""
        client = self._commits.popleft() if self._commits else None
        self._heard(turn, audio_ms)
        return self._added(turn, client or self._out.new_id("item"), client=client is not None)

    def transcribed(self, event: TranscriptText) -> list[Payload]:
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

    def _added(self, turn: int, item: str, *, client: bool) -> list[Payload]:
        previous = self._items.add(turn, "user", item)
        out = self._out
        committed = (
            [] if client else [out.event("input_audio_buffer.committed", previous_item_id=previous, item_id=item)]
        )
        return [*committed, *out.item_added(out.user_audio_item(item, None, "in_progress"), previous)]

    def _heard(self, turn: int, audio_ms: int) -> None:
        self._heard_ms[turn] = max(0, audio_ms)
        while len(self._heard_ms) > KEEP_DURATIONS:
            del self._heard_ms[next(iter(self._heard_ms))]
