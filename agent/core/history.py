"""Conversation history with a system prompt and a size bound.

Each message may belong to a turn (``key``: the turn number and the role), so a client that edits the
conversation can cut an assistant message to what was heard (``replace``) or delete one (``remove``). A turn
whose reply called tools keeps its assistant message with the calls, then a ``tool`` message per result (key
role ``tool``), which never outlive the calls they answer. It knows which calls were the client's to run, so
that a client's result for any other call is refused (``find_call``)."""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from agent.core.language_text import reply_instruction
from agent.ports import ChatMessage, Role

Key = tuple[int, Role]


class FoundCall(NamedTuple):
    """A tool call of the conversation: the turn whose reply made it, whether its result is in the conversation,
    and whether it was the client's to run (and so to answer)."""

    turn: int
    answered: bool
    client: bool


class Dialogue:
    """The messages a language model sees. Oldest turns are dropped past ``max_messages``."""

    def __init__(self, system_prompt: str, max_messages: int = 20) -> None:
        self.system_prompt = system_prompt
        self._max = max(2, max_messages)
        self._messages: list[tuple[Key | None, ChatMessage]] = []
        self._client_calls: set[tuple[int, str]] = set()
        """The calls (turn, call id) in the conversation that the client ran."""

    def add(self, role: Role, text: str, turn: int | None = None) -> None:
        text = text.strip()
        if text:
            self.add_message(ChatMessage(role, text), turn)

    def add_message(self, message: ChatMessage, turn: int | None = None, *, client_calls: Collection[str] = ()) -> None:
        """``message`` joins the conversation as turn ``turn``'s (after its earlier ones, before later turns');
        ``client_calls``: the ids of its calls that were sent to the client to run."""
        if turn is not None:
            self._client_calls.update((turn, c.call_id) for c in message.calls if c.call_id in client_calls)
        entry = (None if turn is None else (turn, message.role), message)
        # In turn order: a reply that ends after a later turn began (a client added a message while it played)
        # still comes before that turn's messages.
        later = (i for i, (key, _) in enumerate(self._messages) if turn is not None and key and key[0] > turn)
        self._messages.insert(next(later, len(self._messages)), entry)
        excess = len(self._messages) - self._max
        if excess > 0:
            del self._messages[:excess]
        while self._messages and (self._messages[0][1].role == "tool" or self._messages[0][1].calls):
            del self._messages[0]  # a call without its question, a result without its call: models refuse them
        self._forget_calls()

    def _forget_calls(self) -> None:
        """Calls no longer in the conversation are no longer anyone's."""
        kept = {(key[0], c.call_id) for key, m in self._messages if key is not None for c in m.calls}
        self._client_calls &= kept

    def has(self, turn: int, role: Role) -> bool:
        return any(key == (turn, role) for key, _ in self._messages)

    def replace(self, turn: int, role: Role, text: str) -> None:
        """Turn ``turn``'s ``role`` message is now ``text`` (added if it had none; removed if ``text`` is empty)."""
        text = text.strip()
        for i, (key, message) in enumerate(self._messages):
            if key == (turn, role):
                if text or message.calls:
                    self._messages[i] = (key, ChatMessage(role, text, message.calls))
                else:
                    del self._messages[i]
                return
        self.add(role, text, turn)

    def remove(self, turn: int, role: Role) -> bool:
        """Delete turn ``turn``'s ``role`` message (an assistant message takes the results of its calls along)."""
        gone = {(turn, role), (turn, "tool")} if role == "assistant" else {(turn, role)}
        before = len(self._messages)
        self._messages = [(key, m) for key, m in self._messages if key not in gone]
        self._forget_calls()
        return len(self._messages) < before

    def find_call(self, call_id: str) -> FoundCall | None:
        """The tool call ``call_id`` of the conversation. A model may give a call of a later reply the id of an
        earlier one: the client's call still unanswered is found first, then any of the client's, then the
        server's."""
        found = [
            FoundCall(turn, self._answered(turn, call_id), (turn, call_id) in self._client_calls)
            for turn in (key[0] for key, m in self._messages if key and any(c.call_id == call_id for c in m.calls))
        ]
        return min(found, key=lambda f: (not f.client, f.answered), default=None)

    def _answered(self, turn: int, call_id: str) -> bool:
        return any(key == (turn, "tool") and m.call_id == call_id for key, m in self._messages)

    def snapshot(self, instructions: str | None = None) -> tuple[ChatMessage, ...]:
        """The messages, after the system prompt (or ``instructions`` in its place)."""
        system = self.system_prompt if instructions is None else instructions
        head = (ChatMessage("system", system),) if system else ()
        return (*head, *(message for _, message in self._messages))


def in_language(history: tuple[ChatMessage, ...], language: str) -> tuple[ChatMessage, ...]:
    """``history`` with the system message telling the model to answer in ``language`` (added to the system
    prompt, or as one when there is none); unchanged for English (``reply_instruction``)."""
    instruction = reply_instruction(language)
    if not instruction:
        return history
    if history and history[0].role == "system":
        head = ChatMessage("system", f"{history[0].text}\n\n{instruction}")
        return (head, *history[1:])
    return (ChatMessage("system", instruction), *history)
