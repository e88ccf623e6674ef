"""The responses of a Realtime session: each reply turn of the core as a ``response`` and its events.

A reply becomes a response on its first event of any kind (``response.created``). Its output is a list of
items, each at its own ``output_index`` in the order they appear: the message item that holds its audio and
transcript (with its content part, announced when text or audio first appears: a reply that only calls tools
has none, and speaks nothing), and a ``function_call`` item per tool call of the client's the model made,
streamed at once and complete (``response.function_call_arguments.delta`` / ``.done``). It is done
(``response.done``, its output complete) once its audio and text are all sent, or when it ends early:
cancelled (by the caller's speech, or by the client) or failed (a stage failed in its turn: the error goes with
it). The last ``KEEP`` responses are kept, so that late audio of an old one finds it. Pure; this module changes
when the response events do.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.core.events import AudioEnd, AudioStart, ReplyText, ToolCalled
from agent.runtime.call.outbox import Payload
from agent.wires.realtime.events import Dialect, SessionView, Status
from agent.wires.realtime.items import Items
from agent.wires.realtime.tools import call_item

KEEP = 16


@dataclass(slots=True)
class Response:
    id: str
    metadata: dict[str, Any]
    item_id: str | None = None
    """Its message item (the reply's audio and transcript), once text or audio appeared."""
    index: int = 0
    """The message item's place in the output."""
    output: list[dict[str, Any]] = field(default_factory=list)
    """Its output items in order (the message item as announced, until the response is done)."""
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
        """A response has spoken: the output format is fixed."""

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
        turn = event.turn
        payloads, response = self._started(turn)
        out = self._out
        if isinstance(event, AudioStart):
            payloads += self._speaking(turn, response)
            response.audio_started = True
        elif isinstance(event, AudioEnd):
            response.audio_done = True
            if response.item_id is not None:
                payloads.append(out.audio_done(response.id, response.item_id, response.index))
        elif not event.done:
            if event.text:
                payloads += self._speaking(turn, response)
            response.text.append(event.text)
            if response.item_id is not None:
                payloads.append(out.transcript_delta(response.id, response.item_id, response.index, event.text))
        elif response.transcript is None:
            response.transcript = event.text
            if event.text:
                payloads += self._speaking(turn, response)
            if response.item_id is not None:
                payloads.append(out.transcript_done(response.id, response.item_id, response.index, event.text))
        if response.transcript is not None and response.audio_done:
            payloads += self.finish(turn, "completed")
        return payloads

    def called(self, event: ToolCalled) -> list[Payload]:
        """The model called a tool the client runs: its ``function_call`` item, streamed whole."""
        turn, call = event.turn, event.call
        payloads, response = self._started(turn)
        if response.done:
            return payloads
        out = self._out
        rid, iid, index = response.id, out.new_id("item"), len(response.output)
        previous = self._items.add_call(turn, "function_call", call.call_id, iid)
        added, done = call_item(iid, call, "in_progress"), call_item(iid, call, "completed")
        response.output.append(done)
        where = {"response_id": rid, "item_id": iid, "output_index": index, "call_id": call.call_id}
        named = {} if out.beta else {"name": call.name}  # the beta event has no name (its item has)
        payloads += [
            out.event("response.output_item.added", response_id=rid, output_index=index, item=added),
            out.event(
                "conversation.item.created" if out.beta else "conversation.item.added",
                previous_item_id=previous,
                item=added,
            ),
            out.event("response.function_call_arguments.delta", **where, delta=call.arguments),
            out.event("response.function_call_arguments.done", **where, **named, arguments=call.arguments),
            out.event("response.output_item.done", response_id=rid, output_index=index, item=done),
        ]
        if not out.beta:
            payloads.append(out.event("conversation.item.done", previous_item_id=previous, item=done))
        return payloads

    def finish(self, turn: int, status: Status, reason: str | None = None) -> list[Payload]:
        """The events that end turn ``turn``'s response with ``status`` (none when it is unknown or done)."""
        response = self._responses.get(turn)
        if response is None or response.done:
            return []
        response.done = True
        payloads = [] if response.item_id is None else self._spoken(response, response.item_id, status)
        body = self._body(response, status, response.output, reason)
        return [*payloads, self._out.event("response.done", response=body)]

    def _spoken(self, response: Response, iid: str, status: Status) -> list[Payload]:
        """The end of the response's message item (its audio, transcript and content part)."""
        out = self._out
        rid, index = response.id, response.index
        transcript = response.transcript if response.transcript is not None else "".join(response.text)
        payloads: list[Payload] = []
        if response.audio_started and not response.audio_done:
            payloads.append(out.audio_done(rid, iid, index))
        if response.transcript is None:
            payloads.append(out.transcript_done(rid, iid, index, transcript))
        item = out.reply_item(iid, transcript, "completed" if status == "completed" else "incomplete")
        response.output[index] = item
        payloads += [
            out.content_part("response.content_part.done", rid, iid, index, transcript),
            out.event("response.output_item.done", response_id=rid, output_index=index, item=item),
        ]
        if not out.beta:
            payloads.append(out.event("conversation.item.done", item=item))
        return payloads

    def _started(self, turn: int) -> tuple[list[Payload], Response]:
        """The response of ``turn``, announced now if it is new (``response.created``)."""
        response = self._responses.get(turn)
        if response is not None:
            return [], response
        out = self._out
        metadata = self._metadata.popleft() if self._metadata else {}
        response = self._responses[turn] = Response(out.new_id("resp"), metadata)
        while len(self._responses) > KEEP:
            del self._responses[next(iter(self._responses))]
        return [out.event("response.created", response=self._body(response, "in_progress", []))], response

    def _speaking(self, turn: int, response: Response) -> list[Payload]:
        """The response's message item and its content part, announced now if they are new."""
        if response.item_id is not None or response.done:
            return []
        out = self._out
        self.answered = True
        rid = response.id
        iid = response.item_id = out.new_id("item")
        index = response.index = len(response.output)
        previous = self._items.add(turn, "assistant", iid)
        item = out.reply_item(iid, None, "in_progress")
        response.output.append(item)
        payloads: list[Payload] = [
            out.event("response.output_item.added", response_id=rid, output_index=index, item=item)
        ]
        if not out.beta:
            payloads.append(out.event("conversation.item.added", previous_item_id=previous, item=item))
        payloads.append(out.content_part("response.content_part.added", rid, iid, index, ""))
        return payloads

    def _body(
        self, response: Response, status: Status, output: list[dict[str, Any]], reason: str | None = None
    ) -> dict[str, Any]:
        view = self._view()
        error = response.error if status == "failed" else None
        return self._out.response(
            response.id, status, output, response.metadata, view.output_format, view.voice, reason, error
        )
