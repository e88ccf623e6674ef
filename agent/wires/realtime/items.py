"""The items of a Realtime conversation and the core's turns they stand for (pure bookkeeping of one session).

The core numbers turns; the Realtime API names items. The caller's utterance of turn ``n`` is its user item,
the reply its assistant item, a message the client added is an item of either role, and a reply that called
tools has a ``function_call`` item per call and, once the client answered, a ``function_call_output`` item per
result. ``Items`` keeps the mapping both ways and the order (``previous_item_id``), so that a client's
``conversation.item.truncate`` / ``.delete`` finds its turn. A reply's calls and their results go with its
assistant message: the model is never shown a call without its result, so deleting one deletes them all. It
changes when the conversation's naming does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent.ports import Role
from agent.wires.realtime.fields import RealtimeError

CallKind = Literal["function_call", "function_call_output"]
Kind = Role | CallKind


@dataclass(frozen=True, slots=True)
class Entry:
    """What an item is: turn ``turn``'s message of role ``kind``, or a call of its reply (or a call's result)."""

    turn: int
    kind: Kind
    call_id: str = ""

    @property
    def message(self) -> Role:
        """The role of the message the item belongs to (a call, or a call's result: its reply's)."""
        if self.kind == "function_call" or self.kind == "function_call_output":
            return "assistant"
        return self.kind

    @property
    def of_reply(self) -> bool:
        """The item is part of the turn's reply: its message, a call it made or a call's result."""
        return self.kind in ("assistant", "function_call", "function_call_output")


class Items:
    """The conversation's items, by id and by (turn, role), in the order they were added."""

    def __init__(self) -> None:
        self._items: dict[str, Entry] = {}
        self._by_turn: dict[tuple[int, Role], str] = {}
        self._calls: dict[tuple[Kind, str], str] = {}
        self.last: str | None = None
        """The id of the item at the end of the conversation."""

    def __contains__(self, item: str) -> bool:
        return item in self._items

    def add(self, turn: int, role: Role, item: str) -> str | None:
        """``item`` is turn ``turn``'s ``role`` message, appended to the conversation; returns the item before."""
        self._by_turn[(turn, role)] = item
        return self._append(item, Entry(turn, role))

    def add_call(self, turn: int, kind: CallKind, call_id: str, item: str) -> str | None:
        """``item`` is the call ``call_id`` of turn ``turn``'s reply (``function_call``) or its result
        (``function_call_output``), appended to the conversation; returns the item before."""
        self._calls[(kind, call_id)] = item
        return self._append(item, Entry(turn, kind, call_id))

    def _append(self, item: str, entry: Entry) -> str | None:
        previous, self.last = self.last, item
        self._items[item] = entry
        return previous

    def find(self, item: str) -> Entry:
        """What ``item`` is. Raises ``RealtimeError`` (``item_not_found``)."""
        found = self._items.get(item)
        if found is None:
            raise RealtimeError("item_not_found", f"no item {item!r} in the conversation", "item_id")
        return found

    def of(self, turn: int, role: Role) -> str | None:
        """The item of turn ``turn``'s ``role`` message, if it is in the conversation."""
        return self._by_turn.get((turn, role))

    def call(self, kind: CallKind, call_id: str) -> str | None:
        """The item of the call ``call_id`` (or of its result), if it is in the conversation."""
        return self._calls.get((kind, call_id))

    def remove(self, turn: int, role: Role) -> list[str]:
        """Takes turn ``turn``'s ``role`` message out of the conversation (an assistant message with the calls of
        its reply and their results); returns their items, in order."""
        gone = [
            item
            for item, entry in self._items.items()
            if entry.turn == turn and (entry.kind == role or (role == "assistant" and entry.of_reply))
        ]
        for item in gone:
            entry = self._items.pop(item)
            if entry.kind in ("function_call", "function_call_output"):
                self._calls.pop((entry.kind, entry.call_id), None)
            else:  # a message: of ``role``, the only one it may be
                self._by_turn.pop((turn, role), None)
        if self.last in gone:
            self.last = next(reversed(self._items), None)
        return gone
