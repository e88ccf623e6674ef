"""The items of a Realtime conversation and the core's turns they stand for (pure bookkeeping of one session).

The core numbers turns; the Realtime API names items. The caller's utterance of turn ``n`` is its user item,
the reply its assistant item, and a message the client added is an item of either role. ``Items`` keeps the
mapping both ways and the order (``previous_item_id``), so that a client's ``conversation.item.truncate`` /
``.delete`` finds its turn. It changes when the conversation's naming does.
"""

from __future__ import annotations

from agent.ports import Role
from agent.wires.realtime.fields import RealtimeError


class Items:
    """The conversation's items, by id and by (turn, role), in the order they were added."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[int, Role]] = {}
        self._by_turn: dict[tuple[int, Role], str] = {}
        self.last: str | None = None
        """The id of the item at the end of the conversation."""

    def __contains__(self, item: str) -> bool:
        return item in self._items

    def add(self, turn: int, role: Role, item: str) -> str | None:
        """``item`` is turn ``turn``'s ``role`` message, appended to the conversation; returns the item before."""
        previous, self.last = self.last, item
        self._items[item] = (turn, role)
        self._by_turn[(turn, role)] = item
        return previous

    def find(self, item: str) -> tuple[int, Role]:
        """The turn and role of ``item``. Raises ``RealtimeError`` (``item_not_found``)."""
        found = self._items.get(item)
        if found is None:
            raise RealtimeError("item_not_found", f"no item {item!r} in the conversation", "item_id")
        return found

    def of(self, turn: int, role: Role) -> str | None:
        """The item of turn ``turn``'s ``role`` message, if it is in the conversation."""
        return self._by_turn.get((turn, role))

    def remove(self, turn: int, role: Role) -> str | None:
        """Takes turn ``turn``'s ``role`` message out of the conversation; returns its item (``None``: none)."""
        item = self._by_turn.pop((turn, role), None)
        if item is not None:
            del self._items[item]
        return item
