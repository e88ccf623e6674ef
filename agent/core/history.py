"""Conversation history with a system prompt and a size bound."""

from __future__ import annotations

from agent.ports import ChatMessage, Role


class Dialogue:
    """The messages a language model sees. Oldest turns are dropped past ``max_messages``."""

    def __init__(self, system_prompt: str, max_messages: int = 20) -> None:
        self._system = ChatMessage("system", system_prompt) if system_prompt else None
        self._max = max(2, max_messages)
        self._messages: list[ChatMessage] = []

    def add(self, role: Role, text: str) -> None:
        text = text.strip()
        if not text:
            return
        self._messages.append(ChatMessage(role, text))
        excess = len(self._messages) - self._max
        if excess > 0:
            del self._messages[:excess]

    def snapshot(self) -> tuple[ChatMessage, ...]:
        head = (self._system,) if self._system else ()
        return (*head, *self._messages)
