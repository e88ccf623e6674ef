"""The responses of a Realtime session: each reply turn of the core as a ``response`` and its events.

A reply becomes a response when its first text or audio arrives (``response.created``, its item and content
part); it is done (``response.done``) once its audio and text are all sent, or when it ends early: cancelled
(by the caller's speech, or by the client) or failed (a stage failed in its turn: the error goes with it). The
last ``KEEP`` responses are kept, so that late audio of an old one finds it. Pure; this module changes when
the response events do.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.core.events import AudioEnd, AudioStart, ReplyText
from agent.runtime.call.outbox import Payload
from agent.wires.realtime.events import Dialect, SessionView, Status
from agent.wires.realtime.items import Items

KEEP = 16


@dataclass(slots=True)
class Response:
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


class Responses:
    """The session's responses by turn; ``view`` gives the session as the client sees it now."""

    def __init__(self, out: Dialect, items: Items, view: Callable[[], SessionView]) -> None:
        self._out = out
        self._items = items
        self._view = view
        self._responses: dict[int, Response] = {}
        self._metadata: deque[dict[str, Any]] = deque()  # per CreateResponse sent
        self.answered = False
        """A response has started: the output format is fixed."""

    def get(self, turn: int) -> Response | None:
        return self._responses.get(turn)

    def exists(self, response_id: str) -> bool:
        return any(response.id == response_id for response in self._responses.values())

    def going(self) -> list[int]:
        """The turns whose responses are not done, oldest first."""
        return [turn for turn, response in self._responses.items() if not response.done]

    def requested(self, metadata: dict[str, Any]) -> None:
        """The client asked for a response (``response.create``): the next one to start carries ``metadata``."""
        self._metadata.append(metadata)

    def refused(self) -> None:
        """The core refused the request just made (a response is already active)."""
        if self._metadata:
            self._metadata.pop()

    def reply(self, event: ReplyText | AudioStart | AudioEnd) -> list[Payload]:
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
            payloads += self.finish(event.turn, "completed")
        return payloads

    def finish(self, turn: int, status: Status, reason: str | None = None) -> list[Payload]:
        """The events that end turn ``turn``'s response with ``status`` (none when it is unknown or done)."""
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
        body = self._body(response, status, [item], reason)
        return [*payloads, out.event("response.done", response=body)]

    def _started(self, turn: int) -> tuple[list[Payload], Response]:
        """The response of ``turn``, announced now if it is new (``response.created``, its item and part)."""
        response = self._responses.get(turn)
        if response is not None:
            return [], response
        out = self._out
        metadata = self._metadata.popleft() if self._metadata else {}
        response = self._responses[turn] = Response(out.new_id("resp"), out.new_id("item"), metadata)
        while len(self._responses) > KEEP:
            del self._responses[next(iter(self._responses))]
        self.answered = True
        previous = self._items.add(turn, "assistant", response.item_id)
        item = out.reply_item(response.item_id, None, "in_progress")
        rid, iid = response.id, response.item_id
        payloads: list[Payload] = [
            out.event("response.created", response=self._body(response, "in_progress", [])),
            out.event("response.output_item.added", response_id=rid, output_index=0, item=item),
        ]
        if not out.beta:
            payloads.append(out.event("conversation.item.added", previous_item_id=previous, item=item))
        payloads.append(out.content_part("response.content_part.added", rid, iid, ""))
        return payloads, response

    def _body(
        self, response: Response, status: Status, output: list[dict[str, Any]], reason: str | None = None
    ) -> dict[str, Any]:
        view = self._view()
        error = response.error if status == "failed" else None
        return self._out.response(
            response.id, status, output, response.metadata, view.output_format, view.voice, reason, error
        )
