"""Conversation history with a system prompt and a size bound.

Each message may belong to a turn (``key``: the turn number and the role), so a client that edits the
conversation can cut an assistant message to what was heard (``replace``) or delete one (``remove``)."""

from __future__ import annotations

from agent.core.language_text import reply_instruction
from agent.ports import ChatMessage, Role

Key = tuple[int, Role]


class Dialogue:
    """The messages a language model sees. Oldest turns are dropped past ``max_messages``."""

    def __init__(self, system_prompt: str, max_messages: int = 20) -> None:
        self.system_prompt = system_prompt
        self._max = max(2, max_messages)
        self._messages: list[tuple[Key | None, ChatMessage]] = []

    def add(self, role: Role, text: str, turn: int | None = None) -> None:
        text = text.strip()
        if not text:
            return
        entry = (None if turn is None else (turn, role), ChatMessage(role, text))
        # In turn order: a reply that ends after a later turn began (a client added a message while it played)
        # still comes before that turn's messages.
        later = (i for i, (key, _) in enumerate(self._messages) if turn is not None and key and key[0] > turn)
        self._messages.insert(next(later, len(self._messages)), entry)
        excess = len(self._messages) - self._max
        if excess > 0:
            del self._messages[:excess]

    def has(self, turn: int, role: Role) -> bool:
        return any(key == (turn, role) for key, _ in self._messages)

    def replace(self, turn: int, role: Role, text: str) -> None:
        """Turn ``turn``'s ``role`` message is now ``text`` (added if it had none; removed if ``text`` is empty)."""
        text = text.strip()
        for i, (key, _) in enumerate(self._messages):
            if key == (turn, role):
                if text:
                    self._messages[i] = (key, ChatMessage(role, text))
                else:
                    del self._messages[i]
                return
        self.add(role, text, turn)

    def remove(self, turn: int, role: Role) -> bool:
        before = len(self._messages)
        self._messages = [(key, m) for key, m in self._messages if key != (turn, role)]
        return len(self._messages) < before

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
