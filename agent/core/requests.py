"""Requests of a client that edits the conversation itself (the Realtime path): add or delete a message,
ask for a reply or cancel it, cut a reply to what was played, give the result of a tool call.

``answer(request, speaker, dialogue, pending, now)`` carries one out on the speaking side and returns its effects:
the notice that it was done, or an ``ErrorNotice`` saying why it could not be (the session goes on).
Committing and clearing the caller's audio stay with the session (they touch the listening side; the buffer is
``agent.core.input_buffer``). One reason to change: what such a request does to the conversation. Pure.
"""

from __future__ import annotations

from typing import assert_never

from agent.core import tools
from agent.core.events import (
    AddMessage,
    CancelResponse,
    CreateResponse,
    DeleteMessage,
    Effect,
    ErrorNotice,
    MessageAdded,
    MessageDeleted,
    Notify,
    ReplyTruncated,
    ToolOutputAdded,
    ToolResult,
    TruncateReply,
)
from agent.core.history import Dialogue
from agent.core.speaking import Speaker
from agent.ports import ChatMessage

SpeakingRequest = AddMessage | CreateResponse | CancelResponse | TruncateReply | DeleteMessage | ToolResult


COMMIT_EMPTY = "input_audio_buffer_commit_empty"
"""The refusal of a commit that holds no speech (a Realtime client's ``input_audio_buffer.commit``)."""


def refused(code: str, message: str) -> list[Effect]:
    return [Notify(ErrorNotice(code=code, message=message))]


def answer(request: SpeakingRequest, speaker: Speaker, dialogue: Dialogue, pending: bool, now: float) -> list[Effect]:
    """``pending``: an utterance waits for its transcript (and then, maybe, a reply)."""
    match request:
        case AddMessage(role=role, text=text):
            turn = speaker.number_turn()
            dialogue.add(role, text, turn)
            return [Notify(MessageAdded(turn, role, text))]
        case CreateResponse(instructions=instructions):
            if pending or speaker.generating:
                return refused(
                    "conversation_already_has_active_response",
                    "a response is already in progress; cancel it (response.cancel) or wait for response.done",
                )
            return speaker.respond(instructions, now)
        case CancelResponse():
            if speaker.active is None:
                return refused("response_cancel_not_active", "there is no response in progress to cancel")
            return speaker.interrupt(now)
        case TruncateReply(turn=turn, audio_end_ms=audio_end_ms):
            effects = speaker.truncate(turn, audio_end_ms, now)
            if effects is None:
                return refused("invalid_value", f"audio_end_ms {audio_end_ms} is beyond the audio of that reply")
            return [*effects, Notify(ReplyTruncated(turn, audio_end_ms))]
        case DeleteMessage(turn=turn, role=role):
            dialogue.remove(turn, role)  # a message with no text was never kept: deleted all the same
            return [Notify(MessageDeleted(turn, role))]
        case ToolResult():
            waited = speaker.tool_result(request, now)
            return waited if waited is not None else _tool_output(request, dialogue)
        case _:
            assert_never(request)


def _tool_output(result: ToolResult, dialogue: Dialogue) -> list[Effect]:
    """A result for a call of a reply that is over (the Realtime path): it joins the conversation after the call,
    for the next reply. One already answered (a late result, after a timeout or an interruption) is ignored; one
    for a call that was not the client's (a server tool's) is refused, and nothing changes."""
    found = dialogue.find_call(result.call_id)
    if found is None:
        return refused("unknown_call", f"no tool call {result.call_id[:64]!r} was made in this conversation")
    if not found.client:
        return tools.not_yours(result.call_id)
    if found.answered:
        return []
    dialogue.add_message(ChatMessage("tool", result.output, call_id=result.call_id, failed=not result.ok), found.turn)
    return [Notify(ToolOutputAdded(found.turn, result.call_id, result.output))]
